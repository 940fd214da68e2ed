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


def test_a_taller_block_drops_only_lower_scoring_boxes_and_goes_when_its_lines_read_all_of_it():
    block = [10, 10, 400, 130]  # a false paragraph box over three lines
    lines = [[10, 10, 400, 40], [10, 50, 400, 80], [10, 95, 400, 125]]
    b = np.array([block, *lines], np.float32)
    assert sorted(B.suppress_contained(b, np.array([0.5, 0.9, 0.8, 0.7], np.float32), 0.8).tolist()) == [
        1,
        2,
        3,
    ]
    assert B.suppress_contained(b, np.array([0.95, 0.9, 0.8, 0.7], np.float32), 0.8).tolist() == [0]
    # with its last line undetected, the block is the only reading of that band: it stays
    assert sorted(B.suppress_contained(b[:3], np.array([0.5, 0.9, 0.8], np.float32), 0.8).tolist()) == [
        0,
        1,
        2,
    ]


def test_a_box_over_a_line_and_half_the_next_goes_when_both_lines_are_read():
    # handwritten will: the line (0.69) inside a box over it and the next line's top (0.42), the next
    # line boxed on its own (0.33); each was read, the first twice
    line, merged, below = [167, 592, 1161, 658], [215, 569, 1150, 712], [168, 682, 1213, 763]
    b = np.array([line, merged, below], np.float32)
    kept = B.suppress_contained(b, np.array([0.69, 0.42, 0.33], np.float32), 0.8)
    assert sorted(kept.tolist()) == [0, 2]
    assert B.nested_count(b[kept]) == 0


def test_a_short_word_inside_its_loose_line_box_goes_at_the_pages_line_height():
    # "de" (x-height letters, 65 px) inside its line's box (134 px, scored lower): 2.06 times the word's
    # height, but 1.4 times the page's median box height, so the same line
    word, line = [130, 1485, 340, 1550], [110, 1481, 1211, 1615]
    page = [[150, y, 1200, y + 94] for y in (1200, 1300, 1700, 1800)]
    b = np.array([word, line, *page], np.float32)
    kept = B.suppress_contained(b, np.array([0.52, 0.38, 0.9, 0.9, 0.9, 0.9], np.float32), 0.8)
    assert 0 not in kept and 1 in kept
    # a page of words that short: the word is its own line, and stays
    low = np.array([word, line, *[[150, y, 400, y + 60] for y in (1200, 1300, 1700, 1800)]], np.float32)
    assert 0 in B.suppress_contained(low, np.array([0.52, 0.38, 0.9, 0.9, 0.9, 0.9], np.float32), 0.8)


def test_the_onnx_graph_suppresses_as_numpy_does():
    from ocrkit.export.detector import DetectorWithPostprocess

    rng = np.random.default_rng(3)
    for trial in range(300):
        n = int(rng.integers(0, 14))
        xy = rng.uniform(0, 300, (n, 2))
        wh = rng.uniform(4, 200, (n, 2)) * rng.choice([[1, 0.2], [0.3, 1], [1, 1]], n)
        b = np.concatenate([xy, xy + wh], axis=1).astype(np.float32)
        if n > 2 and trial % 2:  # nest some boxes in others
            b[1] = b[0] + np.array([2, 2, -2, -2], np.float32) * rng.uniform(0, 1)
        s = rng.uniform(0, 1, n).astype(np.float32)
        order = np.argsort(-s, kind="stable")
        expected = order[B.suppress_contained(b[order], s[order], 0.8)]
        ranked = torch.from_numpy(np.concatenate([b[order], np.zeros((1, 4), np.float32)]))
        ranked_scores = torch.from_numpy(np.concatenate([s[order], [-1.0]]).astype(np.float32))
        got = order[DetectorWithPostprocess.suppress_contained(ranked, ranked_scores, 0.8).numpy()]
        assert sorted(got.tolist()) == sorted(expected.tolist()), trial


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


def test_crowded_boxes_share_rows_and_columns_with_another():
    from ocrkit.images.boxes import crowded

    boxes = np.array(
        [
            [10, 10, 200, 44],  # its bottom rows overlap the next line's top
            [10, 40, 200, 74],
            [10, 74, 200, 100],  # touches the line above along an edge: no shared pixels
            [210, 40, 300, 74],  # beside the second line, same rows, no shared columns
        ],
        np.float32,
    )
    assert crowded(boxes).tolist() == [True, True, False, False]
    assert crowded(boxes[:1]).tolist() == [False] and crowded(np.zeros((0, 4))).tolist() == []
