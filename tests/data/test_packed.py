"""Parquet shards of lines and pages: manifest bytes and fields, scaled boxes, the same detector input."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from fixtures import REPO, make_coco, write_manifest

from ocrkit.data.manifest import read_manifest
from ocrkit.data.packed import decode_image, pack, read_packed_lines, read_packed_pages
from ocrkit.images.preprocess import PageSizing

TEXTS = ["Total 12.50", "CASH", "Kaffee und Kuchen", "no. 7", "Anzahl", "x"]


def test_packed_lines_round_trip_the_manifest_bytes_and_fields(tmp_path):
    manifest = write_manifest(tmp_path / "lines", TEXTS, sizes=True)
    shards = pack(manifest, tmp_path / "packed", shard_mb=0.001)  # tiny shards: one per line or so
    assert len(shards) > 1
    packed = read_packed_lines(str(tmp_path / "packed" / "*.parquet"))
    originals = read_manifest(manifest)
    assert [r["text"] for r in packed] == TEXTS
    for rec, orig in zip(packed, originals, strict=True):
        expected = cv2.cvtColor(cv2.imread(orig["image"]), cv2.COLOR_BGR2RGB)
        assert np.array_equal(decode_image(rec["image_bytes"], rec["image"]), expected)
        assert (rec["width"], rec["height"]) == (orig["width"], orig["height"])


def test_pack_can_shrink_lines_to_a_height_and_sample(tmp_path):
    manifest = write_manifest(tmp_path / "lines", TEXTS)
    pack(manifest, tmp_path / "packed", line_height=12, limit=4, codec=".webp")
    packed = read_packed_lines(str(tmp_path / "packed" / "*.parquet"))
    assert len(packed) == 4 and all(r["height"] == 12 for r in packed)
    assert all(decode_image(r["image_bytes"], "x").shape[0] == 12 for r in packed)


def test_packed_pages_keep_boxes_scaled_with_the_image(tmp_path):
    img = np.full((200, 400, 3), 255, np.uint8)
    cv2.imwrite(str(tmp_path / "p.jpg"), img)
    coco = {
        "images": [{"id": 1, "file_name": "p.jpg", "width": 400, "height": 200}],
        "annotations": [{"id": 1, "image_id": 1, "bbox": [40, 20, 100, 10], "area": 1000, "text": "a"}],
        "categories": [{"id": 1, "name": "text_line"}],
    }
    (tmp_path / "coco.json").write_text(json.dumps(coco))
    pack(tmp_path / "coco.json", tmp_path / "packed", page_side=200)
    (page,) = read_packed_pages(str(tmp_path / "packed" / "*.parquet"))
    assert (page["width"], page["height"]) == (200, 100)
    assert page["annotations"][0]["bbox"] == [20, 10, 50, 5]
    assert decode_image(page["image"], "p").shape == (100, 200, 3)


def test_pack_can_sample_pages_and_write_webp(tmp_path):
    coco = make_coco(tmp_path / "pages", 3)
    pack(coco, tmp_path / "packed", page_side=64, limit=2, codec=".webp")
    pages = list(read_packed_pages(str(tmp_path / "packed" / "*.parquet")))
    assert len(pages) == 2 and all(p["image"][:4] == b"RIFF" and p["image"][8:12] == b"WEBP" for p in pages)
    for page in pages:
        assert max(page["width"], page["height"]) == 64
        assert decode_image(page["image"], "p").shape == (page["height"], page["width"], 3)


def test_packed_shards_load_in_hugging_face_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    pack(write_manifest(tmp_path / "lines", TEXTS), tmp_path / "packed")
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "packed" / "*.parquet"), split="train")
    assert ds["text"] == TEXTS


def test_detector_trains_on_packed_pages_identical_to_the_coco_folder(tmp_path):
    from ocrkit.cli import main
    from ocrkit.data.coco_dataset import CocoDetectionDataset

    coco = make_coco(tmp_path / "pages", 3)
    pack(coco, tmp_path / "packed")
    shards = str(tmp_path / "packed" / "*.parquet")
    folder, packed = (CocoDetectionDataset(x, PageSizing(96), augment=None) for x in (coco, shards))
    assert len(folder) == len(packed) == 3
    for i in range(3):
        np.testing.assert_array_equal(folder[i]["pixels"], packed[i]["pixels"])
        np.testing.assert_array_equal(folder[i]["boxes"], packed[i]["boxes"])
    sets = [f"data.train={shards}", f"data.val={coco}", f"train.out_dir={tmp_path / 'run'}", "train.steps=2"]
    argv = ["train", "detector", "-c", str(REPO / "configs/detector/tiny.yaml")] + [
        x for s in sets for x in ("--set", s)
    ]
    assert main(argv) == 0 and (tmp_path / "run" / "model" / "model.safetensors").is_file()
