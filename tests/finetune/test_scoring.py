"""`ocrkit train` chooses the fine-tuned recognizer's min_confidence on the validation pages."""

import json

from ocrkit.document import Line, Page
from ocrkit.finetune.scoring import choose_min_confidence


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


def page(*lines: tuple[list[float], str, float]) -> dict[str, Page]:
    return {"p1": Page("p1.jpg", 400, 200, lines=[Line(b, t, r, 0.9, r) for b, t, r in lines])}


def test_a_false_line_read_unsure_sets_the_lowest_cut_that_drops_it(tmp_path):
    coco = one_page_coco(tmp_path)
    pages = page(
        ([10, 10, 210, 30], "TOTAL 12.50", 0.9),
        ([10, 35, 210, 50], "Marche en ma ma", 0.45),  # a dashed rule read as words
        ([10, 60, 210, 80], "THANK YOU", 0.7),
    )
    cut, scores = choose_min_confidence(coco, pages)
    assert cut == 0.5 and scores["cer"] == 0.0 and scores["f1"] == 1.0


def test_no_cut_when_dropping_costs_true_lines(tmp_path):
    coco = one_page_coco(tmp_path)
    pages = page(([10, 10, 210, 30], "TOTAL 12.50", 0.9), ([10, 60, 210, 80], "THANK YOU", 0.35))
    cut, scores = choose_min_confidence(coco, pages)
    assert cut == 0.0 and scores["cer"] == 0.0
