import numpy as np
import pytest
import torch
import torchvision

from ocrkit.images import boxes as B


def random_boxes(n, rng, size=500.0):
    xy = rng.uniform(0, size, (n, 2))
    wh = rng.uniform(1, size / 3, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def test_conversions_round_trip():
    rng = np.random.default_rng(1)
    b = random_boxes(50, rng)
    np.testing.assert_allclose(B.cxcywh_to_xyxy(B.xyxy_to_cxcywh(b)), b, atol=1e-3)
    np.testing.assert_allclose(B.xywh_to_xyxy(B.xyxy_to_xywh(b)), b, atol=1e-3)
    np.testing.assert_allclose(B.denormalize(B.normalize(b, 640, 480), 640, 480), b, atol=1e-3)
    assert B.normalize(b, 640, 480).shape == (50, 4)


def test_iou_matches_torchvision():
    rng = np.random.default_rng(2)
    a, b = random_boxes(30, rng), random_boxes(20, rng)
    ref = torchvision.ops.box_iou(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(B.iou(a, b), ref, atol=1e-5)


@pytest.mark.parametrize("thr", [0.3, 0.5, 0.7])
def test_nms_matches_torchvision(thr):
    rng = np.random.default_rng(3)
    for _ in range(5):
        b = random_boxes(200, rng, size=300)
        s = rng.uniform(0, 1, 200).astype(np.float32)
        ref = torchvision.ops.nms(torch.from_numpy(b), torch.from_numpy(s), thr).numpy()
        np.testing.assert_array_equal(B.nms(b, s, thr), ref)


def test_suppress_contained_drops_nested_duplicates():
    line = [10, 10, 400, 40]
    word = [20, 12, 80, 38]  # inside the line box, low IoU with it
    other = [10, 60, 400, 90]
    b = np.array([line, word, other], np.float32)
    s = np.array([0.9, 0.6, 0.8], np.float32)
    assert B.iou(b[:1], b[1:2])[0, 0] < 0.5  # IoU-NMS alone would keep it
    assert sorted(B.suppress_contained(b, s, 0.8).tolist()) == [0, 2]
    # a higher-scoring word inside its own line's box goes too: the line would be read twice
    s2 = np.array([0.5, 0.9, 0.8], np.float32)
    assert sorted(B.suppress_contained(b, s2, 0.8).tolist()) == [0, 2]


def test_a_taller_block_drops_only_lower_scoring_boxes_inside_it():
    block = [10, 10, 400, 130]  # a false paragraph box over three lines
    lines = [[10, 10, 400, 40], [10, 50, 400, 80], [10, 95, 400, 125]]
    b = np.array([block, *lines], np.float32)
    assert sorted(B.suppress_contained(b, np.array([0.5, 0.9, 0.8, 0.7], np.float32), 0.8).tolist()) == [
        0,
        1,
        2,
        3,
    ]
    assert B.suppress_contained(b, np.array([0.95, 0.9, 0.8, 0.7], np.float32), 0.8).tolist() == [0]


def test_a_loose_box_of_the_same_line_drops_the_tight_one_inside_it():
    loose = [326.1, 676.7, 350.7, 707.4]  # a receipt's "2", boxed twice: 1.6 times as tall, scored lower
    tight = [337.2, 684.3, 351.9, 703.4]
    b = np.array([tight, loose], np.float32)
    assert B.suppress_contained(b, np.array([0.49, 0.32], np.float32), 0.8).tolist() == [1]
    two_lines = [10, 10, 400, 75]  # a box over two stacked lines, 2.2 times as tall as either
    first = [10, 10, 400, 40]
    b = np.array([first, two_lines], np.float32)
    assert sorted(B.suppress_contained(b, np.array([0.9, 0.5], np.float32), 0.8).tolist()) == [0, 1]


def test_nested_count_counts_boxes_inside_another_once():
    line, word, other = [0, 0, 100, 20], [5, 2, 40, 18], [0, 40, 100, 60]
    assert B.nested_count(np.array([line, word, other], np.float32)) == 1
    assert B.nested_count(np.array([line, line], np.float32)) == 1  # a duplicate counts once
    assert B.nested_count(np.array([line, other], np.float32)) == 0
    half_out = [60, 5, 140, 15]  # half of it outside the line: not nested at 0.8
    assert B.nested_count(np.array([line, half_out], np.float32)) == 0
    assert B.nested_count(np.zeros((0, 4), np.float32)) == 0


def test_empty_inputs():
    e = np.zeros((0, 4), np.float32)
    assert B.nms(e, np.zeros(0), 0.5).shape == (0,)
    assert B.suppress_contained(e, np.zeros(0)).shape == (0,)
    assert B.iou(e, random_boxes(3, np.random.default_rng(0))).shape == (0, 3)
