"""The pair's scores on validation pages, before and after fine-tuning, within a time allowance.

Reading a page takes seconds on a CPU, so the before-run reads validation pages (in a seeded order) only
until its allowance is spent; the after-run reads exactly the same pages, so the two are comparable.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from ocrkit.evaluation import drop_unconfident, drop_unsure, load_coco, read_coco_pages, score_subset
from ocrkit.images.io import load_image
from ocrkit.pages.outputs import write_atomic

PAIR_KEYS = ("f1", "precision", "recall", "cer", "bow_f1", "s_per_page", "lines_read")
CONFIDENCE_CUTS = (0.0, 0.4, 0.5, 0.6)  # min_confidence values a fine-tuned recognizer may get
DETECTOR_CUTS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)  # score_threshold values a fine-tuned detector may get
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


@dataclass(frozen=True)
class Cuts:
    """The two thresholds a page passes: the detector's box score and the recognizer's reading score."""

    det_score: float | None  # the detector folder's score_threshold (None: left as it is)
    min_confidence: float  # the recognizer folder's min_confidence (0: every line kept)


def choose_cuts(
    coco_path: Path,
    pages: dict,
    det_cuts: tuple[float | None, ...] = (None,),
    confidence_cuts: tuple[float, ...] = CONFIDENCE_CUTS,
) -> tuple[Cuts, dict[str, float]]:
    """The pair of cuts with the lowest page CER on `pages` (read at the lowest detector cut, keeping
    every line), and the scores at it. Pairs within CUT_TIE of the lowest count as tied: the higher line
    F1 wins (a false box read as nothing costs no CER but is still a false box), then the lower reading
    cut (a line is rather dropped for not looking like text than for being hard to read), then the
    lower detector cut. Both are measured on the user's pages, not inherited: a recognizer reads false
    boxes (rules, specks) unsure, but on a new hand it may read true lines unsure too, and a fine-tuned
    detector's scores move with its training."""
    scored: dict[Cuts, dict[str, float]] = {}
    for det in det_cuts:
        boxed = pages if det is None else {k: drop_unconfident(p, det) for k, p in pages.items()}
        for cut in confidence_cuts:
            kept = {k: drop_unsure(p, cut) for k, p in boxed.items()}
            scored[Cuts(det, cut)] = _scores(coco_path, kept)
    lowest = min(s["cer"] for s in scored.values())
    tied = [c for c, s in scored.items() if s["cer"] <= lowest + CUT_TIE]
    best = min(tied, key=lambda c: (-round(scored[c]["f1"], 4), c.min_confidence, c.det_score or 0.0))
    return best, scored[best]


def score_pair_choosing_cuts(
    det_dir: Path,
    rec_dir: Path,
    coco_path: Path,
    threads: int,
    det_cuts: tuple[float | None, ...],
    confidence_cuts: tuple[float, ...],
) -> tuple[Cuts, dict[str, float]]:
    """`score_pair` with the cuts chosen on the same pages. The detector folder must already hold the
    lowest of `det_cuts` as its threshold: one reading then scores every higher cut."""
    ocr = warm_ocr(det_dir, rec_dir, coco_path, threads, min_confidence=0.0)
    return choose_cuts(coco_path, read_coco_pages(ocr, coco_path), det_cuts, confidence_cuts)


def time_side_by_side(
    pairs: dict[str, tuple[Path, Path]], coco_path: Path, threads: int, pages: int, rounds: int = 2
) -> dict[str, float]:
    """Median seconds per page of each (detector, recognizer) pair, the pairs reading the same pages in
    turns in one sitting (the order reversed every round). On a shared machine two timings taken minutes
    apart differ by more than two pairs do, so only turns taken together compare."""
    ocrs = {name: warm_ocr(det, rec, coco_path, threads) for name, (det, rec) in pairs.items()}
    images = json.loads(coco_path.read_text(encoding="utf-8"))["images"][:pages]
    loaded = [load_image(coco_path.parent / image["file_name"]) for image in images]
    spent: dict[str, list[float]] = {name: [] for name in ocrs}
    for turn in range(rounds):
        order = list(ocrs) if turn % 2 == 0 else list(reversed(ocrs))
        for image in loaded:
            for name in order:
                started = time.perf_counter()
                ocrs[name].read(image)
                spent[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in spent.items()}
