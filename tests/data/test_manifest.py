"""JSON-lines manifests: a bad line is an InputError naming the file and the line, never a traceback."""

from __future__ import annotations

import pytest

from ocrkit.data.manifest import read_jsonl
from ocrkit.util.errors import InputError


def test_a_line_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"image": "a.png", "text": "ok"}\n{"image": "b.png", "text": "re\xe7u"}\n')
    with pytest.raises(InputError, match=r"lines\.jsonl:2: not UTF-8 text$"):
        read_jsonl(path)


def test_a_bom_and_crlf_are_read(tmp_path):
    path = tmp_path / "lines.jsonl"
    path.write_bytes('\ufeff{"text": "é"}\r\n\r\n{"text": "b"}\r\n'.encode())
    assert read_jsonl(path) == [{"text": "é"}, {"text": "b"}]
