import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from ocrkit.evaluation import (
    pooled,
    read_prediction_dir,
    row_order_text,
    score_records,
    score_subset,
    transcribed_parts,
)
from ocrkit.pages.document import Line, Page


def write_coco(tmp_path, compare="case-sensitive"):
    coco = {
        "info": {"compare": compare},
        "categories": [{"id": 1, "name": "text_line"}],
        "images": [{"id": 1, "file_name": "images/p1.jpg", "width": 400, "height": 200}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [10, 10, 100, 20],
                "area": 2000,
                "iscrowd": 0,
                "text": "TOTAL",
            },
            {
                "id": 2,
                "image_id": 1,
                "category_id": 1,
                "bbox": [300, 12, 50, 20],
                "area": 1000,
                "iscrowd": 0,
                "text": "12.50",
            },
            {
                "id": 3,
                "image_id": 1,
                "category_id": 1,
                "bbox": [10, 60, 200, 20],
                "area": 4000,
                "iscrowd": 0,
                "text": "THANK YOU",
            },
        ],
    }
    path = tmp_path / "coco.json"
    path.write_text(json.dumps(coco))
    return path


def test_row_order_text_groups_rows():
    boxes = np.array([[300, 12, 350, 32], [10, 60, 210, 80], [10, 10, 110, 30]], np.float32)
    assert row_order_text(boxes, ["12.50", "THANK  YOU", "TOTAL"]) == "TOTAL 12.50\nTHANK YOU"


def perfect_page() -> Page:
    """Every line of write_coco's page read right, listed in a different order than the annotations."""
    return Page(
        "p1.jpg",
        400,
        200,
        lines=[
            Line([10, 60, 210, 80], "THANK YOU", 0.9, 0.9, 1.0),
            Line([300, 12, 350, 32], "12.50", 0.8, 0.8, 1.0),
            Line([10, 10, 110, 30], "TOTAL", 0.7, 0.7, 1.0),
        ],
    )


def test_perfect_page_scores_one(tmp_path):
    gt = write_coco(tmp_path)
    # prediction in a different order, and one row merged differently is still the same row text
    s = score_subset(gt, {"p1": perfect_page()})
    assert s["f1"] == 1.0 and s["cer"] == 0.0 and s["bow_f1"] == 1.0 and s["map50"] > 0.99


def test_nested_boxes_are_counted_per_subset(tmp_path):
    """A word box inside its line box is counted (the text is read twice); the perfect page has none."""
    gt = write_coco(tmp_path)
    assert score_subset(gt, {"p1": perfect_page()})["nested"] == 0
    page = perfect_page()
    page.lines.append(Line([12, 62, 80, 78], "THANK", 0.9, 0.9, 1.0))  # inside "THANK YOU"
    assert score_subset(gt, {"p1": page})["nested"] == 1


def test_case_and_missing_lines(tmp_path):
    gt = write_coco(tmp_path, compare="case-insensitive (upper-cased GT)")
    page = Page("p1.jpg", 400, 200, lines=[Line([10, 10, 110, 30], "Total", 0.9, 0.9, 1.0)])
    s = score_subset(gt, {"p1": page})
    assert s["precision"] == 1.0 and abs(s["recall"] - 1 / 3) < 1e-6
    ref = "total 12.50\nthank you"
    assert abs(s["cer"] - (len(ref) - len("total")) / len(ref)) < 1e-6
    s_missing = score_subset(gt, {})
    assert s_missing["f1"] == 0.0 and s_missing["cer"] == 1.0


def test_score_records():
    gt = [
        {"image": "a.png", "text": "Hello world", "subset": "x"},
        {"image": "b.png", "text": "ABC", "subset": "y", "case_sensitive": False},
    ]
    pred = [{"image": "a.png", "text": "Hello word"}, {"image": "b.png", "text": "abc"}]
    r = score_records(gt, pred)
    assert abs(r["x"]["cer"] - 1 / 11) < 1e-9 and r["x"]["wer"] == 0.5
    assert r["y"]["cer"] == 0.0 and r["all"]["lines"] == 2


def test_raising_the_threshold_afterwards_keeps_a_subset_of_detecting_with_it():
    """`evaluate.py pages --min-score` relies on this: NMS and containment in a higher-scoring box defer
    to scores, so the boxes kept are those a direct run finds; only a box that a lower-scoring container
    of its own line dropped comes back in the direct run once the threshold removes the container."""
    from ocrkit.evaluation import drop_unconfident
    from ocrkit.images.postprocess import PostConfig, postprocess
    from ocrkit.images.preprocess import Geometry

    rng = np.random.default_rng(3)
    logits = rng.normal(size=(200, 1))
    centres = rng.random((200, 2)) * 0.8 + 0.1  # many overlapping and nested boxes
    boxes = np.concatenate([centres, rng.random((200, 2)) * 0.3 + 0.02], 1)
    geometry = Geometry(1.0, 0, 0, 320, 320, 320, 320)
    low = PostConfig(score_threshold=0.2, nms_iou=0.5, contain_threshold=0.8)
    xyxy, scores = postprocess(logits, boxes, geometry, low)
    page = Page(
        "p.png", 320, 320, lines=[Line(b.tolist(), "", s, s, 0.0) for b, s in zip(xyxy, scores, strict=True)]
    )
    for threshold in (0.4, 0.55, 0.7):
        kept = drop_unconfident(page, threshold)
        high = PostConfig(score_threshold=threshold, nms_iou=0.5, contain_threshold=0.8)
        direct, _ = postprocess(logits, boxes, geometry, high)
        assert 0 < len(kept.lines) < len(page.lines)
        found = {tuple(np.round(b, 3)) for b in direct.tolist()}
        assert {tuple(np.round(ln.bbox, 3)) for ln in kept.lines} <= found


@pytest.mark.slow
def test_evaluate_pages_with_ground_truth_boxes(tmp_path, tiny_detector_dir, tiny_recognizer_dir):
    """--gt-boxes reads exactly the annotated boxes: detection scores are perfect, CER is the recognizer's;
    boxes given are all kept, however unsure their reading (--min-confidence drops detected lines only)."""
    gt = write_coco(tmp_path)
    (tmp_path / "images").mkdir()
    Image.new("RGB", (400, 200), "white").save(tmp_path / "images" / "p1.jpg")
    out = tmp_path / "scores.json"
    cmd = [
        sys.executable,
        "-m",
        "ocrkit",
        "evaluate",
        "pages",
        "--gt",
        str(gt),
        "--gt-boxes",
        "--json",
        str(out),
    ]
    models = ["--det-model", str(tiny_detector_dir), "--rec-model", str(tiny_recognizer_dir)]
    res = subprocess.run(
        cmd + models + ["--min-confidence", "0.99"], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(out.read_text()).values()
    assert row["precision"] == row["recall"] == row["f1"] == 1.0 and 0.0 < row["cer"]
    res = subprocess.run(cmd + ["--pred", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--gt-boxes" in res.stderr


def test_prediction_files_match_by_image_stem_with_or_without_its_extension(tmp_path):
    for name in ("a.png.json", "b.json", "c.d.json", "_run.json"):
        (tmp_path / name).write_text(Page(image=name, width=4, height=3).to_json())
    assert sorted(read_prediction_dir(tmp_path)) == ["a", "b", "c.d"]


@pytest.mark.slow
def test_evaluate_misses_counts_every_box_and_draws_the_worst_page(tmp_path, tiny_detector_dir):
    gt = write_coco(tmp_path)
    (tmp_path / "images").mkdir()
    Image.new("RGB", (400, 200), "white").save(tmp_path / "images" / "p1.jpg")
    out, pictures = tmp_path / "misses.json", tmp_path / "pictures"
    cmd = [
        sys.executable,
        "-m",
        "ocrkit",
        "evaluate",
        "misses",
        "--gt",
        str(gt),
        "--det-model",
        str(tiny_detector_dir),
    ]
    res = subprocess.run(
        [*cmd, "--json", str(out), "--pictures", str(pictures), "--threads", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(out.read_text()).values()
    assert row["boxes"] == 3 and 0.0 <= row["recall"] <= 1.0
    assert sum(n for _, n, _ in row["by_height"]) == sum(n for _, n, _ in row["by_width"]) == 3
    (picture,) = pictures.glob("*.webp")
    assert Image.open(picture).size == (400, 200) and "box height at input" in res.stdout


def test_subsets_are_named_by_folder_for_coco_json_and_by_stem_otherwise(tmp_path):
    from ocrkit.commands.evaluate import coco_files, subset_name

    for name in ["receipts_val.json", "books_val.json"]:
        (tmp_path / name).write_text("{}")
    (tmp_path / "kant").mkdir()
    (tmp_path / "kant" / "coco.json").write_text("{}")
    paths = coco_files([str(tmp_path / "receipts_val.json"), str(tmp_path / "books_val.json"), str(tmp_path)])
    assert [subset_name(p) for p in paths] == ["receipts_val", "books_val", "kant"]


def test_pooled_subsets_weigh_by_boxes_and_characters(tmp_path):
    """A perfect page and an empty one pool to what scoring the characters together gives, not to the
    mean of the two rows (the ground truth is the same page, so each holds half the characters)."""
    gt = write_coco(tmp_path)
    perfect, empty = score_subset(gt, {"p1": perfect_page()}), score_subset(gt, {})
    both = pooled([perfect, empty, empty])
    assert both["pages"] == 3 and both["boxes"] == 9 and both["chars"] == 3 * len("TOTAL 12.50\nTHANK YOU")
    assert both["cer"] == pytest.approx(2 / 3) and both["recall"] == pytest.approx(1 / 3)
    assert both["f1"] == pytest.approx(1 / 3)


def test_a_line_annotated_without_its_text_is_found_but_its_reading_is_not_scored(tmp_path):
    """PAGE/ALTO ground truth often boxes a line without transcribing it: finding it counts for recall,
    reading it costs no page CER, and neither does missing it."""
    gt = write_coco(tmp_path)
    coco = json.loads(gt.read_text())
    coco["annotations"][1]["text"] = None  # "12.50" boxed, not transcribed
    gt.write_text(json.dumps(coco))
    read = score_subset(gt, {"p1": perfect_page()})
    assert read["f1"] == 1.0 and read["cer"] == 0.0 and read["bow_f1"] == 1.0
    assert read["chars"] == len("TOTAL\nTHANK YOU")
    page = perfect_page()
    page.lines = [line for line in page.lines if line.text != "12.50"]
    missed = score_subset(gt, {"p1": page})
    assert missed["recall"] == pytest.approx(2 / 3) and missed["cer"] == 0.0
    page = perfect_page()
    page.lines.append(Line([150, 12, 250, 32], "NOTE", 0.9, 0.9, 1.0))  # on no annotated line: scored
    assert score_subset(gt, {"p1": page})["cer"] == pytest.approx(len(" NOTE") / len("TOTAL\nTHANK YOU"))


def test_transcribed_parts_gives_a_box_to_the_annotated_line_covering_most_of_it():
    gt = np.array([[0, 0, 100, 20], [100, 0, 200, 20]], np.float32)
    pred = np.array([[0, 0, 100, 20], [60, 0, 200, 20], [0, 0, 140, 20], [300, 0, 400, 20]], np.float32)
    transcribed, kept = transcribed_parts(gt, ["left", ""], pred)
    assert transcribed.tolist() == [True, False]
    # on the transcribed line; mostly on the untranscribed one; mostly on the transcribed one; on none
    assert kept.tolist() == [True, False, True, True]
    assert transcribed_parts(gt, ["a", "b"], pred)[1].all()
