"""Detection scores: one-to-one line matching (precision, recall, F1) and COCO mAP."""

import numpy as np
import pytest
from pycocotools.coco import COCO

from ocrkit.detection.metrics import LineCounts, coco_map, match_count
from ocrkit.images import boxes as B


def test_line_counts_one_to_one():
    gt = np.array([[0, 0, 100, 10], [0, 20, 100, 30], [0, 40, 100, 50]], np.float32)
    counts = LineCounts()
    counts.add(gt.copy(), gt)
    assert counts.scores() == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    counts = LineCounts()
    counts.add(np.concatenate([gt[:2], gt[:1] + 1]), gt)  # one missed, one duplicate
    s = counts.scores()
    assert s["recall"] == pytest.approx(2 / 3) and s["precision"] == pytest.approx(2 / 3)
    # Hungarian keeps both matches where greedy best-IoU matching would lose one
    pred = np.array([[0, 0, 100, 20], [0, 0, 100, 12]], np.float32)
    truth = np.array([[0, 0, 100, 14], [0, 0, 100, 26]], np.float32)
    assert match_count(pred, truth) == 2


def coco_gt(boxes_per_image):
    coco = COCO()
    coco.dataset = {
        "images": [{"id": i + 1, "width": 200, "height": 200} for i in range(len(boxes_per_image))],
        "annotations": [
            {
                "id": 100 * i + j + 1,
                "image_id": i + 1,
                "category_id": 1,
                "bbox": list(map(float, b)),
                "area": float(b[2] * b[3]),
                "iscrowd": 0,
            }
            for i, bs in enumerate(boxes_per_image)
            for j, b in enumerate(bs)
        ],
        "categories": [{"id": 1, "name": "text_line"}],
    }
    coco.createIndex()
    return coco


def test_coco_map_perfect_and_missing():
    xywh = [[[10, 10, 100, 12], [10, 40, 80, 12]], [[5, 5, 150, 20]]]
    gt = coco_gt(xywh)
    perfect = {i + 1: (B.xywh_to_xyxy(np.array(b, np.float32)), np.ones(len(b))) for i, b in enumerate(xywh)}
    assert coco_map(gt, perfect) == {"map": pytest.approx(1.0), "map50": pytest.approx(1.0)}
    missing = dict(perfect)
    missing[1] = (perfect[1][0][:1], np.ones(1))  # 2 of 3 lines found, no false positive
    result = coco_map(gt, missing)
    assert result["map50"] == pytest.approx(2 / 3, abs=0.02)
