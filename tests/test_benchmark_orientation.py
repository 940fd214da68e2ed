"""benchmarks/orientation.py: readings scored against a page's annotated lines, on the page as read."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest

from ocrkit.images.frame import turned
from ocrkit.pages.document import Line, Orientation, Page
from ocrkit.pipeline import Framing, to_sent_frame
from tests.fixtures import REPO

spec = importlib.util.spec_from_file_location("orientation_benchmark", REPO / "benchmarks" / "orientation.py")
benchmark = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = benchmark  # its dataclasses look their module up
spec.loader.exec_module(benchmark)

LINES = [([60, 60, 360, 100], "SHOP"), ([60, 130, 260, 170], "Item"), ([420, 130, 540, 170], "9.90")]


def test_annotated_pages_carry_their_text_in_row_order(tmp_path):
    coco = {
        "images": [{"id": 1, "file_name": "a.png", "width": 600, "height": 400}],
        "annotations": [
            {"id": i, "image_id": 1, "category_id": 1, "bbox": [x0, y0, x1 - x0, y1 - y0], "text": t}
            for i, ((x0, y0, x1, y1), t) in enumerate(LINES[::-1], start=1)
        ],
        "categories": [{"id": 1, "name": "text_line"}],
    }
    (tmp_path / "coco.json").write_text(json.dumps(coco))
    ((path, truth),) = benchmark.page_files([str(tmp_path / "coco.json")])
    assert path == tmp_path / "a.png"
    assert truth.text == "SHOP\nItem 9.90"


def test_a_page_read_sideways_scores_as_read_upright():
    """Its boxes as sent run down the page; scored on the page as read, it has no error."""
    page = Page("p.png", 600, 400, lines=[Line(list(map(float, b)), t) for b, t in LINES])
    sent_h, sent_w = turned(np.zeros((400, 600), np.uint8), 1).shape
    to_sent_frame(page, Framing(np.zeros((400, 600)), Orientation(90, 1.0, 90), 1), sent_w, sent_h)
    truth = benchmark.Truth("shop\nitem 9.90", case_sensitive=False)
    assert benchmark.errors(page, truth) == (0, len(truth.text))
    page.lines[2].text = "9.99"
    assert benchmark.errors(page, truth) == (1, len(truth.text))


def test_a_limited_run_takes_pages_from_every_source():
    pages = [f"receipt_{i}" for i in range(50)] + [f"will_{i}" for i in range(10)]
    picked = benchmark.spread(pages, 6)
    assert len(picked) == 6 and picked[0] == "receipt_0" and picked[-1] == "will_9"
    assert sum(p.startswith("will") for p in picked) == 1
    assert benchmark.spread(pages, 0) == pages and benchmark.spread(pages[:3], 6) == pages[:3]


def test_a_skewed_page_keeps_all_its_print_on_a_paper_coloured_canvas():
    page = np.full((200, 300, 3), 240, np.uint8)
    page[:, 0] = 20  # a dark scan edge: replicated, it would streak the corners
    page[90:110, 50:250] = 10  # one line of print
    tilted = benchmark.skewed(page, 10.0)
    assert tilted.shape[0] > 200 and tilted.shape[1] > 300  # grown, nothing cut off
    assert (tilted < 128).all(axis=2).sum() == pytest.approx((page < 128).all(axis=2).sum(), rel=0.1)
    assert tilted[0, 0].tolist() == [240, 240, 240] and tilted[-1, -1].tolist() == [240, 240, 240]
    # turned counter-clockwise: the line's right end rises
    ys, xs = np.nonzero((tilted < 128).all(axis=2) & (np.arange(tilted.shape[1]) > tilted.shape[1] // 2))
    assert ys.mean() < tilted.shape[0] / 2
    assert benchmark.skewed(page, 0.0) is page


def test_a_reading_upside_down_is_on_the_right_axis_and_one_read_as_sent_sideways_is_not():
    # sent 90: the classifier found it and the lines turned it round (applied 270)
    assert benchmark.tally(Orientation(90, 0.98, 270, method="lines"), 90) == [True, False, True, False]
    # sent 90, unsure: read as sent, its lines run down the page
    assert benchmark.tally(Orientation(90, 0.6, 0, method="unsure"), 90) == [True, False, False, True]
    # sent upright, read as sent
    assert benchmark.tally(Orientation(0, 0.9, 0, method="unsure"), 0) == [True, True, True, True]
    assert benchmark.tally(Orientation(270, 0.99, 270, method="lines"), 0) == [False, False, False, False]


def test_a_reading_row_says_how_the_page_was_sent_and_what_was_undone(tmp_path):
    result = Orientation(90, 0.61234567, 270, method="reading")
    row = benchmark.reading(tmp_path / "p.png", 270, -10.0, result, (np.int64(12), np.int64(40)))
    assert json.loads(json.dumps(row)) == {
        "page": str(tmp_path / "p.png"),
        "sent": 270,
        "skew": -10.0,
        "angle": 90,
        "confidence": 0.612346,
        "applied": 270,
        "method": "reading",
        "edits": 12,
        "chars": 40,
    }


def test_the_pages_to_tune_on_are_every_page_a_replay_leaves_out():
    pages = [(f"receipt_{i}", None) for i in range(50)] + [(f"will_{i}", None) for i in range(10)]
    replay, tuning = benchmark.spread(pages, 6), benchmark.outside(pages, 6)
    assert len(tuning) == 54 and not {p for p, _ in replay} & {p for p, _ in tuning}
    assert sorted(replay + tuning) == sorted(pages)
    assert benchmark.outside(pages, 100) == []
