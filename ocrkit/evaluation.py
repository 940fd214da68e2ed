"""End-to-end page scoring against COCO ground truth with per-line text.

Per subset: line P/R/F1 at IoU 0.5 (one-to-one), COCO mAP, page CER in row order, bag-of-words F1,
seconds per page. Row order makes CER independent of each system's own reading order: boxes are
grouped into rows by ≥ 50 % vertical overlap, rows top-to-bottom, boxes left-to-right.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pycocotools.coco import COCO

from ocrkit.detection.metrics import LineCounts, coco_map
from ocrkit.images import boxes as B
from ocrkit.images.io import IMAGE_SUFFIXES
from ocrkit.pages.document import Page
from ocrkit.pages.reading_order import group_rows
from ocrkit.recognition.metrics import ErrorCounts, edit_distance

if TYPE_CHECKING:
    from ocrkit.pipeline import OCR


# a predicted box at least this share of whose area an annotated line without a transcription covers
# (more than any other annotated line does) is that line's
UNTRANSCRIBED_SHARE = 0.5


def transcribed_parts(
    gt_boxes: np.ndarray, gt_texts: list[str], pred_boxes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which annotated lines and which predicted boxes a page's text is scored on: the annotated lines
    that hold a transcription, and the predicted boxes that do not lie on an annotated line holding none.
    Page ground truth often boxes a line and leaves its text out (PAGE and ALTO lines without text: a
    quarter of the VD/SBB validation lines, marginal notes, catchwords, verses left for later); reading
    such a line is no error, and missing it none either. Line recall and F1 still count every box."""
    gt = np.asarray(gt_boxes, np.float32).reshape(-1, 4)
    pred = np.asarray(pred_boxes, np.float32).reshape(-1, 4)
    transcribed = np.array([bool(t and t.strip()) for t in gt_texts], bool).reshape(-1)
    if transcribed.all() or not len(pred):
        return transcribed, np.ones(len(pred), bool)
    cover = B.intersection(pred, gt) / np.maximum(B.area(pred), 1e-6)[:, None]
    best = cover.argmax(axis=1)
    on_untranscribed = ~transcribed[best] & (cover[np.arange(len(pred)), best] >= UNTRANSCRIBED_SHARE)
    return transcribed, ~on_untranscribed


def page_texts(
    gt_boxes: np.ndarray,
    gt_texts: list[str],
    pred_boxes: np.ndarray,
    pred_texts: list[str],
    pred_scored: np.ndarray | None = None,
) -> tuple[str, str]:
    """(reference, hypothesis) texts of a page in row order, as page CER compares them: the transcribed
    annotated lines, and the predicted lines not lying on an untranscribed one (`transcribed_parts`) and
    in `pred_scored` where given."""
    gt_kept, pred_kept = transcribed_parts(gt_boxes, gt_texts, pred_boxes)
    if pred_scored is not None:
        pred_kept &= pred_scored
    pred = np.asarray(pred_boxes, np.float32).reshape(-1, 4)
    ref = row_order_text(gt_boxes[gt_kept], [t for t, k in zip(gt_texts, gt_kept, strict=True) if k])
    hyp = row_order_text(pred[pred_kept], [t for t, k in zip(pred_texts, pred_kept, strict=True) if k])
    return ref, hyp


def row_order_text(boxes: np.ndarray, texts: list[str]) -> str:
    """Texts joined in row order: a space within a row, a newline between rows; whitespace collapsed."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    rows = group_rows(boxes, list(range(len(boxes))))
    joined = "\n".join(" ".join(texts[i] for i in row) for row in rows)
    return "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in joined.split("\n")).strip()


def bag_of_words(text: str) -> Counter:
    return Counter(text.split())


@dataclass
class SubsetScore:
    name: str
    lines: LineCounts = field(default_factory=LineCounts)
    edits: int = 0
    ref_chars: int = 0
    words_matched: int = 0
    words_pred: int = 0
    words_ref: int = 0
    nested: int = 0  # predicted boxes mostly inside another predicted box of their page
    dropped_real: int = 0  # annotated lines only a box dropped as not text would have matched
    seconds: list[float] = field(default_factory=list)
    detections: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def add_page(
        self, image_id: int, gt_boxes: np.ndarray, gt_texts: list[str], page: Page, case_sensitive: bool
    ) -> None:
        pred_boxes = page.boxes()
        self.lines.add(pred_boxes, gt_boxes)
        self.nested += B.nested_count(pred_boxes)
        dropped = np.array([ln.bbox for ln in page.not_text], np.float32).reshape(-1, 4)
        self.dropped_real += lost_to_filter(gt_boxes, pred_boxes, dropped)
        self.detections[image_id] = (pred_boxes, np.array([ln.det_score for ln in page.lines], np.float32))
        ref, hyp = page_texts(gt_boxes, gt_texts, pred_boxes, [ln.text for ln in page.lines])
        if not case_sensitive:
            ref, hyp = ref.lower(), hyp.lower()
        self.edits += edit_distance(ref, hyp)
        self.ref_chars += len(ref)
        ref_bag, hyp_bag = bag_of_words(ref), bag_of_words(hyp)
        self.words_matched += sum((ref_bag & hyp_bag).values())
        self.words_pred += sum(hyp_bag.values())
        self.words_ref += sum(ref_bag.values())
        self.seconds.append(page.seconds)

    def summary(self, coco: COCO) -> dict[str, float]:
        p = self.words_matched / self.words_pred if self.words_pred else 0.0
        r = self.words_matched / self.words_ref if self.words_ref else 0.0
        return {
            "pages": len(self.seconds),
            **self.lines.scores(),
            **coco_map(coco, self.detections),
            "cer": self.edits / max(1, self.ref_chars),
            "bow_f1": 2 * p * r / (p + r) if p + r else 0.0,
            "s_per_page": float(np.median(self.seconds)) if self.seconds else 0.0,
            "boxes": self.lines.truth,
            "lines_read": self.lines.predicted,
            "chars": self.ref_chars,
            "nested": self.nested,
            "dropped_real": self.dropped_real,
        }


def lost_to_filter(gt: np.ndarray, kept: np.ndarray, dropped: np.ndarray, iou: float = 0.5) -> int:
    """Annotated lines that a dropped box matches (IoU >= `iou`) and no kept box does: the real lines
    a page filter cost."""
    if not len(gt) or not len(dropped):
        return 0
    hit = (B.iou(gt, dropped) >= iou).any(axis=1)
    covered = (B.iou(gt, kept) >= iou).any(axis=1) if len(kept) else np.zeros(len(gt), bool)
    return int((hit & ~covered).sum())


def pooled(rows: list[dict[str, float]]) -> dict[str, float]:
    """Several subsets' summaries as one: recall and page CER over all their boxes and characters (what
    scoring them as one set gives), line F1 weighted by boxes, bag-of-words F1 by characters. A subset of
    two pages then counts as two pages, not as a third of the verdict."""
    boxes, chars = sum(r["boxes"] for r in rows), sum(r["chars"] for r in rows)

    def mean(key: str, weight: str, total: int) -> float:
        return sum(r[key] * r[weight] for r in rows) / max(1, total)

    return {
        "pages": sum(r["pages"] for r in rows),
        "recall": mean("recall", "boxes", boxes),
        "f1": mean("f1", "boxes", boxes),
        "cer": mean("cer", "chars", chars),
        "bow_f1": mean("bow_f1", "chars", chars),
        "boxes": boxes,
        "chars": chars,
        "nested": sum(r.get("nested", 0) for r in rows),
        "dropped_real": sum(r.get("dropped_real", 0) for r in rows),
    }


def is_case_sensitive(coco: COCO, image: dict) -> bool:
    if image.get("case_sensitive") is False:
        return False
    return "case-insensitive" not in str(coco.dataset.get("info", {}).get("compare", ""))


def load_coco(path: Path) -> COCO:
    with contextlib.redirect_stdout(io.StringIO()):
        return COCO(str(path))


def score_subset(gt_path: Path, pages: dict[str, Page], name: str | None = None) -> dict[str, float]:
    """Score predicted pages (keyed by image file stem) against one COCO file; a missing page = no lines."""
    coco = load_coco(gt_path)
    score = SubsetScore(name or gt_path.parent.name)
    for image in coco.dataset["images"]:
        anns = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
        gt_boxes = B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32))
        gt_texts = [a.get("text") or "" for a in anns]
        stem = Path(image["file_name"]).stem
        page = pages.get(stem) or Page(image=image["file_name"], width=image["width"], height=image["height"])
        score.add_page(image["id"], gt_boxes, gt_texts, page, is_case_sensitive(coco, image))
    return score.summary(coco)


def read_coco_pages(
    ocr: OCR, coco_path: Path, gt_boxes: bool = False, save_pred: Path | None = None
) -> dict[str, Page]:
    """Run `ocr` on every page of a COCO file: pages keyed by image file stem, as score_subset takes them.
    With `gt_boxes`, the annotated line boxes are read instead of detected ones (the recognizer's share
    of the page error); with `save_pred`, each page's JSON is also written there."""
    from ocrkit.images.io import load_image

    coco = load_coco(coco_path)
    pages = {}
    for image in coco.dataset["images"]:
        path = coco_path.parent / image["file_name"]
        if gt_boxes:
            anns = coco.loadAnns(coco.getAnnIds(imgIds=image["id"]))
            boxes = B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4))
            pages[path.stem] = ocr.read_boxes(load_image(path), boxes, name=str(path))
        else:
            pages[path.stem] = ocr.read(load_image(path), name=str(path))
        if save_pred is not None:
            out = save_pred / f"{path.stem}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(pages[path.stem].to_json(), encoding="utf-8")
    return pages


def read_prediction_dir(pred_dir: Path) -> dict[str, Page]:
    """Page JSON files by image stem: `<stem>.json` (a peer's harness) or `<stem>.<image ext>.json`
    (ocrkit infer/detect, which keep the image's extension in output names).

    Names starting with "_" are run metadata (the peers' harness writes `_run.json`), not pages.
    """
    return {
        _image_stem(p.stem): Page.from_dict(json.loads(p.read_text(encoding="utf-8")))
        for p in sorted(pred_dir.glob("*.json"))
        if not p.name.startswith("_")
    }


def _image_stem(name: str) -> str:
    return Path(name).stem if Path(name).suffix.lower() in IMAGE_SUFFIXES else name


def drop_unsure(page: Page, min_confidence: float) -> Page:
    """The page without the lines read less sure than `min_confidence`, as `OCR(min_confidence=)` drops
    them: one reading that keeps every line scores every cut."""
    return replace(page, lines=[line for line in page.lines if line.rec_score >= min_confidence])


def drop_unconfident(page: Page, min_det_score: float) -> Page:
    """The page without the lines the detector scored below `min_det_score`.

    Post-processing only ever suppresses a box in favour of a higher-scoring one, so raising the
    threshold afterwards gives the same lines as detecting with that threshold: one low-threshold
    run is enough to choose the threshold on a validation set.
    """
    lines = [line for line in page.lines if line.det_score >= min_det_score]
    return replace(page, lines=lines)


def score_records(gt: list[dict], pred: list[dict]) -> dict[str, dict]:
    """Micro CER/WER per subset (and "all") of line predictions matched to GT records by "image".

    A GT line with no prediction counts as read as "" (all its characters are errors).
    """
    predicted = {p["image"]: p.get("text", "") for p in pred}
    totals: dict[str, tuple[int, ErrorCounts]] = {}
    for rec in gt:
        for key in dict.fromkeys([rec.get("subset", "all"), "all"]):
            lines, counts = totals.get(key, (0, ErrorCounts()))
            counts.add(rec["text"], predicted.get(rec["image"], ""), rec.get("case_sensitive", True))
            totals[key] = (lines + 1, counts)
    return {
        k: {"lines": n, "cer": c.cer, "wer": c.wer}
        for k, (n, c) in sorted(totals.items(), key=lambda kv: (kv[0] == "all", kv[0]))
    }


def markdown_table(rows: list[dict], keys: list[str]) -> str:
    """Result rows as a Markdown table: floats to 3 decimals, a missing value as "–"."""
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        cells = (f"{r[k]:.3f}" if isinstance(r.get(k), float) else str(r.get(k, "–")) for k in keys)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
