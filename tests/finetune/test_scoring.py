"""`ocrkit finetune` chooses the fine-tuned models' thresholds on the validation pages: the recognizer's
min_confidence and the detector's score cut, together."""

import json

from ocrkit.finetune.scoring import DETECTOR_CUTS, Cuts, choose_cuts
from ocrkit.pages.document import Line, Page


def one_page_coco(tmp_path):
    boxes = {"TOTAL 12.50": [10, 10, 200, 20], "THANK YOU": [10, 60, 200, 20]}
    coco = {
        "categories": [{"id": 1, "name": "text_line"}],
        "images": [{"id": 1, "file_name": "p1.jpg", "width": 400, "height": 200}],
        "annotations": [
            {"id": i, "image_id": 1, "category_id": 1, "bbox": b, "area": 4000, "iscrowd": 0, "text": t}
            for i, (t, b) in enumerate(boxes.items(), 1)
        ],
    }
    path = tmp_path / "coco.json"
    path.write_text(json.dumps(coco))
    return path


def page(*lines: tuple[list[float], str, float], det: tuple[float, ...] = ()) -> dict[str, Page]:
    """One page of lines (box, text, reading score); detector scores 0.9 unless given in `det`."""
    scores = list(det) + [0.9] * (len(lines) - len(det))
    built = [Line(b, t, r * d, d, r) for (b, t, r), d in zip(lines, scores, strict=True)]
    return {"p1": Page("p1.jpg", 400, 200, lines=built)}


def test_a_false_line_read_unsure_sets_the_lowest_cut_that_drops_it(tmp_path):
    coco = one_page_coco(tmp_path)
    pages = page(
        ([10, 10, 210, 30], "TOTAL 12.50", 0.9),
        ([10, 35, 210, 50], "Marche en ma ma", 0.45),  # a dashed rule read as words
        ([10, 60, 210, 80], "THANK YOU", 0.7),
    )
    cuts, scores = choose_cuts(coco, pages)
    assert cuts == Cuts(None, 0.5) and scores["cer"] == 0.0 and scores["f1"] == 1.0


def test_no_cut_when_dropping_costs_true_lines(tmp_path):
    coco = one_page_coco(tmp_path)
    pages = page(([10, 10, 210, 30], "TOTAL 12.50", 0.9), ([10, 60, 210, 80], "THANK YOU", 0.35))
    cuts, scores = choose_cuts(coco, pages)
    assert cuts.min_confidence == 0.0 and scores["cer"] == 0.0


def test_a_false_box_read_sure_is_cut_by_the_detector_threshold(tmp_path):
    """A rule the recognizer reads confidently as words survives every reading cut; the detector scored
    it low, so the lowest detector cut above its score removes it, and no reading cut is needed."""
    coco = one_page_coco(tmp_path)
    pages = page(
        ([10, 10, 210, 30], "TOTAL 12.50", 0.9),
        ([10, 35, 210, 50], "Marche en ma", 0.95),
        ([10, 60, 210, 80], "THANK YOU", 0.8),
        det=(0.9, 0.22, 0.6),
    )
    cuts, scores = choose_cuts(coco, pages, DETECTOR_CUTS)
    assert cuts == Cuts(0.25, 0.0) and scores["cer"] == 0.0 and scores["precision"] == 1.0
    kept_all, _ = choose_cuts(coco, pages, (0.15,))  # a cut below the false box's score keeps it
    assert kept_all.det_score == 0.15
    assert choose_cuts(coco, pages, (0.15,))[1]["precision"] < 1.0


def test_ties_go_to_the_higher_line_f1_then_the_lower_reading_cut(tmp_path):
    """A false box read as nothing costs no page CER, only line F1: a cut that removes it wins the tie,
    and of those the detector's (the reading cut stays 0: lines are not dropped for being hard to read)."""
    coco = one_page_coco(tmp_path)
    pages = page(
        ([10, 10, 210, 30], "TOTAL 12.50", 0.9),
        ([300, 120, 390, 190], "", 0.3),
        ([10, 60, 210, 80], "THANK YOU", 0.8),
        det=(0.9, 0.3, 0.5),
    )
    cuts, scores = choose_cuts(coco, pages, (0.15, 0.35, 0.55))
    assert cuts == Cuts(0.35, 0.0) and scores["f1"] == 1.0


def test_the_report_says_why_a_slower_fine_tuned_pair_is_slower():
    from ocrkit.finetune.report import _caveats

    report = {
        "before": {"pages": 10, "lines_read": 40},
        "after": {"pages": 10, "lines_read": 380},
        "models": {"recognizer": {"decoding": "attention"}},
    }
    slower = " ".join(_caveats(report, {"pages": 3, "rounds": 2, "before": 0.98, "after": 1.42}))
    assert "1.45× the time per page" in slower and "reads 38 lines per validation page" in slower
    assert "start pair read 4, with attention decoding" in slower
    same = " ".join(_caveats(report, {"pages": 3, "rounds": 2, "before": 1.0, "after": 1.05}))
    assert "the time per page" not in same
