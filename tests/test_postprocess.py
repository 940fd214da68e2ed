"""Detector post-processing: duplicates and nested boxes removed, boxes mapped back to the page."""

import numpy as np

from ocrkit.images import boxes as B
from ocrkit.images.postprocess import PostConfig, postprocess
from ocrkit.images.preprocess import letterbox


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
