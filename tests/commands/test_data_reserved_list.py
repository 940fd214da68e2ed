"""`ocrkit data import|prepare` refuse evaluation files; importing with no reserved list must be asked for."""

from __future__ import annotations

import hashlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from ocrkit.cli import main


def line_pairs(folder: Path) -> list[Path]:
    """Two line images with transcriptions; returns the images."""
    folder.mkdir()
    images = []
    for i, text in enumerate(["erste Zeile", "zweite Zeile"]):
        image = folder / f"l{i}.png"
        cv2.imwrite(str(image), np.full((20, 80 + i), 200, np.uint8))
        (folder / f"l{i}.gt.txt").write_text(text + "\n", encoding="utf-8")
        images.append(image)
    return images


def reserved_list(path: Path, image: Path) -> Path:
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    path.write_text(f"sha256\tkind\tsource\n{digest}\tdev\tx\n", encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_reserved_env(monkeypatch):
    monkeypatch.delenv("OCRKIT_RESERVED", raising=False)


@pytest.mark.parametrize("what", ["import", "prepare"])
def test_without_a_reserved_list_nothing_is_imported(tmp_path, capsys, what):
    line_pairs(tmp_path / "src")
    sources_file = [str(tmp_path / "sources.yaml"), "--clones", str(tmp_path)]
    source = [str(tmp_path / "src")] if what == "import" else sources_file
    assert main(["data", what, *source, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--reserved FILE" in err and "$OCRKIT_RESERVED" in err and "--no-reserved" in err
    assert not (tmp_path / "out").exists()


def test_the_environment_names_the_reserved_list(tmp_path, capsys, monkeypatch):
    images = line_pairs(tmp_path / "src")
    monkeypatch.setenv("OCRKIT_RESERVED", str(reserved_list(tmp_path / "reserved.tsv", images[1])))
    assert main(["data", "import", str(tmp_path / "src"), "--out", str(tmp_path / "out")]) == 0
    assert "refused (reserved for evaluation): 1" in capsys.readouterr().out


def test_an_explicit_list_wins_over_the_environment(tmp_path, capsys, monkeypatch):
    images = line_pairs(tmp_path / "src")
    monkeypatch.setenv("OCRKIT_RESERVED", str(tmp_path / "absent.tsv"))
    given = reserved_list(tmp_path / "reserved.tsv", images[0])
    args = ["data", "import", str(tmp_path / "src"), "--out", str(tmp_path / "out")]
    assert main([*args, "--reserved", str(given)]) == 0
    assert "refused (reserved for evaluation): 1" in capsys.readouterr().out


def test_no_reserved_imports_everything_and_excludes_a_list(tmp_path, capsys):
    images = line_pairs(tmp_path / "src")
    args = ["data", "import", str(tmp_path / "src"), "--out", str(tmp_path / "out")]
    assert main([*args, "--no-reserved"]) == 0
    assert "refused (reserved for evaluation): 0" in capsys.readouterr().out
    given = reserved_list(tmp_path / "reserved.tsv", images[0])
    assert main([*args, "--no-reserved", "--reserved", str(given)]) == 2  # contradictory: refused by argparse
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_sha256sum_list_refuses_its_files_and_says_how_many_hashes_it_read(tmp_path, capsys):
    images = line_pairs(tmp_path / "src")
    digest = hashlib.sha256(images[0].read_bytes()).hexdigest()
    listing = tmp_path / "res.txt"
    listing.write_text(f"{digest}  {images[0]}\n", encoding="utf-8")  # what `sha256sum FILE` writes
    args = ["data", "import", str(tmp_path / "src"), "--out", str(tmp_path / "out")]
    assert main([*args, "--reserved", str(listing)]) == 0
    out = capsys.readouterr().out
    assert f"reserved list: 1 hashes read from {listing}" in out
    assert "refused (reserved for evaluation): 1" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "res.tsv: the reserved list holds no sha256 hash"),
        (b"not a hash\nDEADBEEF\n# comment\n", "res.tsv:1: not a sha256 line"),
        (b"re\xe7u\n", "res.tsv:1: reserved list is not UTF-8 text"),
    ],
    ids=["empty", "malformed", "latin-1"],
)
def test_a_list_that_protects_nothing_stops_the_import_in_one_line(tmp_path, capsys, content, message):
    line_pairs(tmp_path / "src")
    (tmp_path / "res.tsv").write_bytes(content)
    args = ["data", "import", str(tmp_path / "src"), "--out", str(tmp_path / "out")]
    assert main([*args, "--reserved", str(tmp_path / "res.tsv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ocrkit: error: ") and message in err
    assert not (tmp_path / "out").exists()


def test_reserve_takes_ground_truth_files_and_hashes_the_images_they_annotate(tmp_path, capsys):
    images = line_pairs(tmp_path / "eval")
    out = tmp_path / "reserved.tsv"
    assert main(["data", "reserve", str(tmp_path / "eval" / "l0.gt.txt"), "--out", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()[2:]]
    digests = {row[0]: row[3] for row in rows}
    assert hashlib.sha256(images[0].read_bytes()).hexdigest() in digests  # the image the file annotates
    gt = hashlib.sha256((tmp_path / "eval" / "l0.gt.txt").read_bytes()).hexdigest()
    assert digests[gt] == "" and len(rows) == 2  # the ground-truth file itself, with no perceptual hash
    assert "1 images" in capsys.readouterr().out
    # a folder gives every image and every ground-truth file once
    assert main(["data", "reserve", str(tmp_path / "eval"), "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()[2:]) == 4
    # and an import refuses the pages the list names
    code = main(
        ["data", "import", str(tmp_path / "eval"), "--out", str(tmp_path / "d"), "--reserved", str(out)]
    )
    assert code != 0 or not (tmp_path / "d" / "lines" / "train.jsonl").read_text().strip()
