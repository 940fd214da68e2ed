"""Synthetic data: COCO validity, line counts, boxes, charset, determinism, and the line manifest."""

import json

import numpy as np
from pycocotools.coco import COCO

from ocrkit.charset import DEFAULT_CHARSET
from ocrkit.cli import main
from ocrkit.io import load_image


def test_pages_are_valid_coco_and_deterministic(tmp_path, capsys):
    assert main(["synth", "pages", "--n", "4", "--out", str(tmp_path / "a"), "--seed", "3"]) == 0
    assert main(["synth", "pages", "--n", "4", "--out", str(tmp_path / "b"), "--seed", "3"]) == 0
    assert main(["synth", "pages", "--n", "2", "--out", str(tmp_path / "c"), "--seed", "4"]) == 0
    stats = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert stats["pages"] == 4
    coco = COCO(str(tmp_path / "a" / "coco.json"))
    assert [c["name"] for c in coco.loadCats(coco.getCatIds())] == ["text_line"]
    anns = coco.dataset["annotations"]
    assert len(anns) / len(coco.dataset["images"]) >= 5
    allowed = set(DEFAULT_CHARSET)
    for image in coco.dataset["images"]:
        pixels = load_image(tmp_path / "a" / image["file_name"])
        assert pixels.shape[:2] == (image["height"], image["width"])
        for ann in coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]])):
            x, y, w, h = ann["bbox"]
            assert w > 1 and h > 1 and x >= 0 and y >= 0
            assert x + w <= image["width"] + 0.5 and y + h <= image["height"] + 0.5
            assert ann["text"].strip() and set(ann["text"]) <= allowed
            crop = pixels[int(y) : int(y + h) + 1, int(x) : int(x + w) + 1]
            assert crop.std() > 3  # the box holds ink, not blank paper
    same = json.loads((tmp_path / "b" / "coco.json").read_text())["annotations"]
    assert [(a["bbox"], a["text"]) for a in same] == [(a["bbox"], a["text"]) for a in anns]
    other = json.loads((tmp_path / "c" / "coco.json").read_text())["annotations"]
    assert [a["text"] for a in other][:5] != [a["text"] for a in anns][:5]


def test_lines_manifest(tmp_path, capsys):
    assert main(["synth", "lines", "--n", "30", "--out", str(tmp_path / "l"), "--seed", "1"]) == 0
    records = [json.loads(x) for x in (tmp_path / "l" / "lines.jsonl").read_text().splitlines()]
    assert len(records) == 30
    for rec in records:
        img = load_image(tmp_path / "l" / rec["image"])
        assert rec["text"].strip() and img.shape[0] >= 4 and img.shape[1] >= img.shape[0] * 0.5
    assert np.mean([len(r["text"]) for r in records]) > 5
