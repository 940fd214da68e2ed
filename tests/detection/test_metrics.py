import numpy as np
import pytest
from pycocotools.coco import COCO

from ocrkit import boxes as B
from ocrkit.detection.metrics import LineCounts, coco_map, match_count
from ocrkit.postprocess import PostConfig, postprocess
from ocrkit.preprocess import letterbox


def logit(p):
    return np.log(p / (1 - p))


def test_postprocess_removes_duplicates_and_unmaps():
    page = np.zeros((300, 600, 3), np.uint8)
    _, geom = letterbox(page, 64, 32, square=True)  # scale 64/600, content 64×32
    orig = np.array([[60, 30, 540, 60], [60, 150, 300, 180]], np.float32)
    line = B.normalize(geom.map(orig), 64, 64)
    nested = B.normalize(geom.map(np.array([[70, 32, 200, 58]], np.float32)), 64, 64)  # word inside line 0
    near_dup = line[:1] + 0.002
    boxes = B.xyxy_to_cxcywh(np.concatenate([line, nested, near_dup, line[:1]]))
    logits = logit(np.array([[0.9], [0.8], [0.7], [0.85], [0.1]]))
    xyxy, scores = postprocess(
        logits, boxes, geom, PostConfig(score_threshold=0.3, nms_iou=0.5, contain_threshold=0.8)
    )
    np.testing.assert_allclose(scores, [0.9, 0.8], rtol=1e-5)
    np.testing.assert_allclose(xyxy, orig, atol=0.5)


def test_postprocess_nothing_above_threshold():
    _, geom = letterbox(np.zeros((50, 50, 3), np.uint8), 32, 32, square=True)
    xyxy, scores = postprocess(np.full((5, 1), -5.0), np.full((5, 4), 0.5), geom, PostConfig())
    assert xyxy.shape == (0, 4) and scores.shape == (0,)


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
