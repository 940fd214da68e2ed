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


def test_a_box_cut_at_the_page_edge_is_judged_for_containment_on_the_page():
    # below a will's signature: a box (0.28) running past the page's right edge into the padding lies
    # under 80 % inside its higher-scoring neighbour (0.31) at the detector's input, over 80 % once cut
    page = np.zeros((2000, 1317, 3), np.uint8)
    _, geom = letterbox(page, 1280, 32, square=False)
    assert geom.width * geom.orig_width / geom.resized_size[0] >= 1348  # the padding reaches past x = 1348
    neighbour = np.array([[366, 1837, 1202, 1996]], np.float32)
    past_edge = np.array([[600, 1833, 1348, 1948]], np.float32)  # x2 beyond the 1317-px page
    letterboxed = geom.map(np.concatenate([neighbour, past_edge]))
    assert (B.intersection(letterboxed[1:], letterboxed[:1]) / B.area(letterboxed[1:]))[0, 0] < 0.8
    assert B.iou(letterboxed[1:], letterboxed[:1])[0, 0] < 0.5  # not a duplicate for NMS either
    boxes = B.xyxy_to_cxcywh(B.normalize(letterboxed, geom.width, geom.height))
    xyxy, scores = postprocess(
        logit(np.array([[0.31], [0.28]])), boxes, geom, PostConfig(score_threshold=0.25)
    )
    np.testing.assert_allclose(scores, [0.31], rtol=1e-5)
    np.testing.assert_allclose(xyxy, neighbour, atol=1.0)
