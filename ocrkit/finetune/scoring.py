"""The pair's scores on validation pages, before and after fine-tuning, within a time allowance.

Reading a page takes seconds on a CPU, so the before-run reads validation pages (in a seeded order) only
until its allowance is spent; the after-run reads exactly the same pages, so the two are comparable.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from ocrkit.evaluation import drop_unsure, load_coco, read_coco_pages, score_subset
from ocrkit.io import load_image
from ocrkit.outputs import write_atomic

PAIR_KEYS = ("f1", "precision", "recall", "cer", "bow_f1", "s_per_page")
CONFIDENCE_CUTS = (0.0, 0.4, 0.5, 0.6)  # min_confidence values a fine-tuned recognizer may get
CUT_TIE = 0.002  # page CERs this close count as tied; the lowest cut (fewest lines dropped) wins


def page_order(coco_path: Path, seed: int = 0) -> list[int]:
    """Image ids of a COCO file in a seeded order (the first pages of a file are often one document)."""
    ids = [im["id"] for im in load_coco(coco_path).dataset["images"]]
    random.Random(seed).shuffle(ids)
    return ids


def subset_coco(coco_path: Path, image_ids: list[int], out: Path) -> Path:
    """A COCO file of some images of `coco_path`, with file names that still resolve from `out`."""
    data = json.loads(coco_path.read_text(encoding="utf-8"))
    keep = set(image_ids)
    root = coco_path.parent.resolve()
    images = [{**im, "file_name": str(root / im["file_name"])} for im in data["images"] if im["id"] in keep]
    annotations = [a for a in data["annotations"] if a["image_id"] in keep]
    write_atomic(out, json.dumps({**data, "images": images, "annotations": annotations}))
    return out


def _scores(coco_path: Path, pages: dict) -> dict[str, float]:
    scores = score_subset(coco_path, pages)
    return {"pages": int(scores["pages"]), **{k: float(scores[k]) for k in PAIR_KEYS}}


def warm_ocr(
    det_dir: Path, rec_dir: Path, coco_path: Path, threads: int, min_confidence: float | None = None
):
    """The pair loaded and run once on the first page of `coco_path`, so one-off costs (lazy
    initialisation, first allocations) stay out of the timed s/page."""
    from ocrkit.pipeline import OCR

    ocr = OCR(det_dir, rec_dir, threads=threads, min_confidence=min_confidence)
    first = json.loads(coco_path.read_text(encoding="utf-8"))["images"][0]
    ocr.read(load_image(coco_path.parent / first["file_name"]))
    return ocr


def score_pair(det_dir: Path, rec_dir: Path, coco_path: Path, threads: int) -> dict[str, float]:
    """Line F1 (with precision, recall), page CER, bag-of-words F1 and s/page of a detector + recognizer
    folder pair on every page of `coco_path`."""
    return _scores(coco_path, read_coco_pages(warm_ocr(det_dir, rec_dir, coco_path, threads), coco_path))


def score_pair_within(
    det_dir: Path, rec_dir: Path, coco_path: Path, seconds: float, threads: int, work: Path
) -> tuple[Path, dict[str, float]]:
    """Score the pair on validation pages in seeded order until `seconds` are spent (at least one page);
    returns the COCO file of the pages read (for the after-run) and the scores."""
    ocr = warm_ocr(det_dir, rec_dir, coco_path, threads)
    started, chosen, pages = time.perf_counter(), [], {}
    for image_id in page_order(coco_path):
        chosen.append(image_id)
        pages.update(read_coco_pages(ocr, subset_coco(coco_path, [image_id], work / "page.json")))
        if time.perf_counter() - started >= seconds:
            break
    (work / "page.json").unlink(missing_ok=True)
    chosen_path = subset_coco(coco_path, chosen, work / "report_pages.json")
    return chosen_path, _scores(chosen_path, pages)


def choose_min_confidence(coco_path: Path, pages: dict) -> tuple[float, dict[str, float]]:
    """The cut of CONFIDENCE_CUTS with the lowest page CER on `pages` (read keeping every line), and the
    scores at it. A recognizer reads false boxes (rules, specks) unsure, but on a new hand it may read
    true lines unsure too, so the cut is measured on the user's pages, not inherited."""
    scored = {
        cut: _scores(coco_path, {k: drop_unsure(p, cut) for k, p in pages.items()}) for cut in CONFIDENCE_CUTS
    }
    lowest = min(s["cer"] for s in scored.values())
    cut = min(c for c, s in scored.items() if s["cer"] <= lowest + CUT_TIE)
    return cut, scored[cut]


def score_pair_choosing_cut(
    det_dir: Path, rec_dir: Path, coco_path: Path, threads: int
) -> tuple[float, dict[str, float]]:
    """`score_pair` with the recognizer's `min_confidence` chosen on the same pages."""
    pages = read_coco_pages(warm_ocr(det_dir, rec_dir, coco_path, threads, min_confidence=0.0), coco_path)
    return choose_min_confidence(coco_path, pages)
