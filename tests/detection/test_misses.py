import numpy as np

from ocrkit.detection.misses import (
    HEIGHT_EDGES,
    MissCounts,
    best_cover,
    bin_labels,
    draw_misses,
    found,
)


def test_best_cover_is_the_largest_share_under_one_box():
    gt = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [50, 50, 60, 60]], np.float32)
    pred = np.array([[0, 0, 5, 10], [0, 0, 10, 3], [20, 0, 40, 10]], np.float32)
    np.testing.assert_allclose(best_cover(gt, pred), [0.5, 1.0, 0.0])
    assert best_cover(gt, np.zeros((0, 4), np.float32)).tolist() == [0.0, 0.0, 0.0]


def test_found_uses_one_to_one_matching():
    # one wide detection over two annotated cells matches neither at IoU 0.5
    gt = np.array([[0, 0, 10, 10], [12, 0, 22, 10], [0, 20, 40, 30]], np.float32)
    pred = np.array([[0, 0, 22, 10], [0, 20, 40, 30], [0, 20, 40, 30]], np.float32)
    assert found(gt, pred).tolist() == [False, False, True]


def test_recall_by_height_bins_counts_sizes_at_the_detector_input():
    counts = MissCounts()
    gt = np.array([[0, 0, 50, 10], [0, 20, 50, 50], [0, 60, 50, 100]], np.float32)
    pred = gt[1:]  # the smallest line is missed
    hits = counts.add_page(gt, pred, scale=0.5)  # heights 5, 15 and 20 px at the input
    assert hits.tolist() == [False, True, True]
    rows = dict((label, (n, recall)) for label, n, recall in counts.recall_by(counts.heights, HEIGHT_EDGES))
    assert rows["<8"] == (1, 0.0)
    assert rows["12-16"] == (1, 1.0) and rows["16-24"] == (1, 1.0)
    assert rows["24-32"][0] == 0 and np.isnan(rows["24-32"][1])
    summary = counts.summary()
    assert summary["boxes"] == 3 and abs(summary["recall"] - 2 / 3) < 1e-9
    assert abs(summary["uncovered"] - 1 / 3) < 1e-9


def test_bin_labels():
    assert bin_labels((0, 8, 12, 32)) == ["<8", "8-12", "12-32", "≥32"]


def test_draw_misses_marks_missed_boxes_red_and_shrinks_the_page():
    page = np.full((2000, 1000, 3), 255, np.uint8)
    gt = np.array([[100, 100, 400, 160], [100, 300, 400, 360]], np.float32)
    picture = np.asarray(draw_misses(page, gt, np.array([True, False]), gt[:1], longest=500))
    assert picture.shape == (500, 250, 3)
    red = (picture[..., 0] > 200) & (picture[..., 1] < 60)
    assert red[70:95, 20:105].any() and not red[20:45, 20:105].any()
