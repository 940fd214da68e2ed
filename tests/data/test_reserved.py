"""The reserved list parser: every common way of writing a sha256 list is read, anything else is an error."""

from __future__ import annotations

import pytest

from ocrkit.data.reserved import read_reserved
from ocrkit.util.errors import InputError

A, B, C = "a" * 64, "0123456789abcdef" * 4, "F" * 64


@pytest.mark.parametrize(
    "text",
    [
        f"# evaluation pages\nsha256\tkind\tsource\n{A}\tdev\tx.jpg\n{B}\theld-out\ty.jpg\n{C}\tdev\tz\n",
        f"{A}  small/ok1.png\n{B} *binary mode.png\n{C}  with spaces in the name.png\n",  # sha256sum
        f"SHA256 (x.png) = {A}\nSHA256 (y (1).png) = {B}\n\n{C}\n",  # BSD / shasum --tag, bare hash
        f"\ufeff{A}\r\n{B}\r\n{C}\r\n",  # BOM and CRLF (an editor on Windows)
    ],
    ids=["tab-separated", "sha256sum", "bsd-tagged-and-bare", "bom-crlf"],
)
def test_every_common_format_gives_the_same_hashes(tmp_path, text):
    path = tmp_path / "reserved.txt"
    path.write_text(text, encoding="utf-8", newline="")
    assert read_reserved(path) == {A, B, C.lower()}


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("", "", "holds no sha256 hash"),
        ("# only a comment\n\n", "", "holds no sha256 hash"),
        ("sha256\tkind\tsource\n", "", "holds no sha256 hash"),
        (f"{A}\tdev\tx\nnot a hash\n", ":2", "not a sha256 line ('not a hash')"),
        ("DEADBEEF  short.png\n", ":1", "not a sha256 line"),
        (f"{A}\nsha256\tkind\tsource\n", ":2", "not a sha256 line"),  # a header only comes first
    ],
    ids=["empty", "comments-only", "header-only", "junk-line", "short-hash", "late-header"],
)
def test_a_list_that_would_protect_less_than_it_says_is_an_error(tmp_path, text, where, problem):
    path = tmp_path / "reserved.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_reserved(path)
    assert str(caught.value).startswith(f"{path}{where}: ") and problem in str(caught.value)


def test_not_utf8_missing_and_folder_are_one_line_errors(tmp_path):
    latin1 = tmp_path / "latin1.tsv"
    latin1.write_bytes(f"{A}\tdev\tok\n{B}\tdev\tre\xe7u\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1\.tsv:2: reserved list is not UTF-8 text$"):
        read_reserved(latin1)
    with pytest.raises(InputError, match="reserved list not found$"):
        read_reserved(tmp_path / "absent.tsv")
    with pytest.raises(InputError, match=r"reserved list not found \(this is a folder\)$"):
        read_reserved(tmp_path)
