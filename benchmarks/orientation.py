"""Page orientation: how often the classifier finds how a page was sent, and what it costs per page.

    python benchmarks/orientation.py PAGES_OR_COCO... [--model orientation] [--backend onnx] [--threads 2]
    python benchmarks/orientation.py PAGES... --pipeline [--skews 0,-10,10] [--rec-model DIR]  # whole path
    python benchmarks/orientation.py COCO --outside 40 --skews=0,-10,10  # the pages a replay of 40 leaves out

Every page (image files in folders, or the pages of COCO files) is sent upright and turned 90/180/270
degrees clockwise (or the --turns given), each also skewed by each of --skews degrees; the table gives
per turn the share found (the likeliest turn is the right one), the share turned right (undone before
reading), the share turned onto the right axis (upright or upside down: what the lines' check can still
settle) and the share read as sent; then, for the classifier alone, how many readings each
`min_confidence` would let it decide without the lines' check and how many of those it turns wrong;
then the median milliseconds per page. `--pipeline` reads every page with `OCR` (the classifier, the
lines' check where it knows only the axis, the skew), so "turned right" is what a user gets, and adds
the page character error rate of each reading (as `ocrkit evaluate pages` scores it, its boxes taken on
the page as read) against the page's annotated lines, or, for pages without annotations, against the
same page read as it is; the upright page read with `--orientation 0` is the baseline printed first.
Without `--pipeline` the classifier alone is measured. A last line counts the readings whose likeliest
turn lies on the right axis the wrong way up, and those whose lies across it. `--outside N` reads only
the pages that `--limit N` leaves out: the pages to tune on beside a replay of N pages, never tuned on.
`--readings FILE` also writes every reading as a JSON line (page, turn, skew, what was found and undone,
and with `--pipeline` its character edits), so two runs can be compared page by page.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ocrkit.evaluation import is_case_sensitive, load_coco, row_order_text
from ocrkit.images import boxes as B
from ocrkit.images.frame import ANGLES, turned
from ocrkit.images.io import load_image
from ocrkit.orientation.skew import straighten
from ocrkit.pages.document import Orientation, Page
from ocrkit.recognition.metrics import edit_distance

SKEWS = (0.0, -10.0, -5.0, 5.0, 10.0)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp")


@dataclass
class Truth:
    """A page's annotated text in row order, as `ocrkit evaluate pages` builds it."""

    text: str
    case_sensitive: bool


def page_files(sources: list[str]) -> list[tuple[Path, Truth | None]]:
    """Every page of the sources, with its annotated text where a COCO file holds one."""
    files: list[tuple[Path, Truth | None]] = []
    for source in map(Path, sources):
        if source.suffix == ".json":
            coco = load_coco(source)
            for image in coco.dataset["images"]:
                anns = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
                texts = [a.get("text") or "" for a in anns]
                boxes = B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4))
                truth = Truth(row_order_text(boxes, texts), is_case_sensitive(coco, image))
                files.append((source.parent / image["file_name"], truth if any(texts) else None))
        elif source.is_dir():
            files += [(p, None) for p in sorted(source.rglob("*")) if p.suffix.lower() in IMAGE_SUFFIXES]
        else:
            files.append((source, None))
    return files


def errors(page: Page, truth: Truth) -> tuple[int, int]:
    """Character edits of the page's text against the truth, and the truth's length."""
    hyp = row_order_text(page.boxes_as_read(), [line.text for line in page.lines])
    ref = truth.text
    if not truth.case_sensitive:
        hyp, ref = hyp.lower(), ref.lower()
    return edit_distance(ref, hyp), len(ref)


def skewed(image: np.ndarray, degrees: float) -> np.ndarray:
    """The page turned by a small angle about its centre on a canvas grown to hold all of it (a tilted
    photo or scan loses none of the page), the new corners filled with the paper's colour (the median of
    the page's edge pixels), as a tilted scan's background is one colour. Replicating the page's edge
    pixels instead drew streaks into the corners that the detector boxed and read as lines: a
    typewritten page skewed by 10 degrees read at page CER 0.39 with streaks, 0.04 without (0.14
    straight)."""
    if not degrees:
        return image
    edges = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]]).reshape(-1, *image.shape[2:])
    paper = tuple(float(v) for v in np.atleast_1d(np.median(edges, axis=0)))
    return straighten(image, -degrees, fill=paper)[0]


def spread(files: list, limit: int) -> list:
    """At most `limit` of `files` (0: all), evenly spaced: a COCO file lists its pages source by source,
    so its first pages would all be of one source."""
    return [files[i] for i in sorted(_spread_indices(len(files), limit))]


def outside(files: list, limit: int) -> list:
    """The pages `spread(files, limit)` leaves out: the pages to tune on beside a replay of `limit` pages,
    which must never be tuned on."""
    replayed = _spread_indices(len(files), limit)
    return [f for i, f in enumerate(files) if i not in replayed]


def _spread_indices(count: int, limit: int) -> set[int]:
    if not limit or limit >= count:
        return set(range(count))
    return set(np.linspace(0, count - 1, limit).round().astype(int).tolist())


def tally(result: Orientation, sent: int) -> list[bool]:
    """For a page sent turned `sent` degrees: whether the likeliest turn is that one (found), whether the
    turn undone is (turned right), whether the turn undone leaves its lines on the right axis, upright or
    upside down (what the lines' check can still settle), and whether it was read as sent."""
    return [
        result.angle == sent,
        result.applied == sent,
        (result.applied - sent) % 180 == 0,
        result.applied == 0,
    ]


def reading(path: Path, sent: int, skew: float, result: Orientation, edits: tuple[int, int]) -> dict:
    """One reading as a JSON-able row: the page, how it was sent, what was found and undone, its edits."""
    return {
        "page": str(path),
        "sent": sent,
        "skew": skew,
        "angle": result.angle,
        "confidence": round(result.confidence, 6),
        "applied": result.applied,
        "method": result.method,
        "edits": int(edits[0]),
        "chars": int(edits[1]),
    }


CUTS = (0.9, 0.97, 0.99, 0.995, 0.999, 0.9999)


def print_cuts(sure: list[tuple[float, bool]]) -> None:
    """For each probability cut, the share of readings whose likeliest turn reaches it (the turn the
    classifier could undo alone, with no lines' check) and how many of those are wrong: what an
    orientation folder's `min_confidence` would decide."""
    probs = np.array([p for p, _ in sure])
    right = np.array([r for _, r in sure])
    print(f"{'min_confidence':>14s} {'decided alone':>14s} {'wrong turn':>11s}")
    for cut in CUTS:
        alone = probs >= cut
        print(f"{cut:14g} {alone.mean():14.3f} {int((alone & ~right).sum()):11d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", help="folders of pages, image files or COCO files")
    parser.add_argument("--model", default=None, help="orientation folder or shipped name")
    parser.add_argument("--rec-model", default=None, help="with --pipeline: recognizer folder or name")
    parser.add_argument("--det-model", default=None, help="with --pipeline: detector folder or name")
    parser.add_argument("--backend", choices=("torch", "onnx"), default="onnx")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--limit",
        type=int,
        default=0,
        help="at most this many pages, taken evenly over the sources' pages so every subset is read (0: all)",
    )
    parser.add_argument(
        "--outside",
        type=int,
        default=0,
        help="only the pages a run with --limit OUTSIDE leaves out (pages to tune on beside that replay)",
    )
    parser.add_argument(
        "--pipeline", action="store_true", help="read every page with OCR, not the classifier"
    )
    parser.add_argument("--skews", default=",".join(f"{s:g}" for s in SKEWS), help="degrees, comma-separated")
    parser.add_argument("--turns", default="0,90,180,270", help="degrees clockwise pages are sent turned")
    parser.add_argument("--readings", type=Path, help="also write every reading to this JSON-lines file")
    args = parser.parse_args()
    try:
        skews = [float(v) for v in args.skews.split(",")]
        angles = [int(v) for v in args.turns.split(",")]
    except ValueError as exc:
        parser.error(f"--skews/--turns: {exc}")
    if not set(angles) <= set(ANGLES):
        parser.error(f"--turns: each of {ANGLES}")
    if args.outside and args.limit:
        parser.error("--outside and --limit: one or the other")
    from ocrkit.hub import zoo
    from ocrkit.pipeline import OCR, load_orienter

    read: dict[str, Page] = {}
    if args.pipeline:
        models = {"det_model": args.det_model, "rec_model": args.rec_model}
        ocr = OCR(**models, backend=args.backend, threads=args.threads, orientation_model=args.model)
        as_is = OCR(**models, backend=args.backend, threads=args.threads, orientation=0)

        def classify(image: np.ndarray):
            read["page"] = ocr.read(image)
            return read["page"].orientation

    else:
        classify = load_orienter(zoo.resolve(args.model, "orientation"), args.backend).classify
    files = page_files(args.sources)
    files = outside(files, args.outside) if args.outside else spread(files, args.limit)
    # per (turn, skew): found, turned right, right axis, read as sent, character edits, reference characters
    counts = {(a, s): np.zeros(6) for a in angles for s in skews}
    upright_errors = np.zeros(2)
    seconds = []
    sure: list[tuple[float, bool]] = []  # (likeliest turn's probability, whether it is the sent turn)
    wrong_way = wrong_axis = 0  # likeliest turns on the right axis the wrong way up, and across it
    readings: list[dict] = []
    for path, truth in files:
        page = load_image(path)
        if args.pipeline:
            baseline = as_is.read(page)
            lines = [line.text for line in baseline.lines]
            truth = truth or Truth(row_order_text(baseline.boxes_as_read(), lines), True)
            upright_errors += errors(baseline, truth)
        for skew in skews:
            tilted = skewed(page, skew)
            for angle in angles:
                sent = turned(tilted, angle // 90)
                started = time.perf_counter()
                result = classify(sent)
                seconds.append(time.perf_counter() - started)
                sure.append((result.confidence, result.angle == angle))
                wrong_way += result.angle != angle and (result.angle - angle) % 180 == 0
                wrong_axis += (result.angle - angle) % 180 != 0
                edits = errors(read["page"], truth) if args.pipeline else (0, 0)
                counts[angle, skew] += [*tally(result, angle), *edits]
                readings.append(reading(path, angle, skew, result, edits))
    if args.readings:
        args.readings.write_text("".join(json.dumps(r) + "\n" for r in readings), encoding="utf-8")
    n = len(files)
    print(f"{n} pages, {args.backend}, {args.threads} threads")
    if args.pipeline:
        cer = upright_errors[0] / max(upright_errors[1], 1)
        print(f"upright, read as sent (--orientation 0): CER {cer:.4f}")
    head = f"{'sent':>6s} {'skew':>6s} {'found':>7s} {'turned right':>13s} {'right axis':>11s}"
    print(f"{head} {'unsure/as is':>13s} {'CER':>7s}")
    for (angle, skew), (found, right, axis, kept, edits, chars) in counts.items():
        shares = f"{found / n:7.3f} {right / n:13.3f} {axis / n:11.3f} {kept / n:13.3f}"
        print(f"{angle:6d} {skew:+6.0f} {shares} {edits / max(chars, 1):7.4f}")
    total = sum(counts.values()) / (n * len(counts))
    print(f"{'all':>13s} {total[0]:7.3f} {total[1]:13.3f} {total[2]:11.3f}")
    print(f"likeliest turn of {len(sure)} readings: {wrong_way} the wrong way up, {wrong_axis} across")
    if not args.pipeline:
        print_cuts(sure)
    what = "read" if args.pipeline else "windows cut and classified"
    print(f"median {1000 * float(np.median(seconds)):.1f} ms per page ({what})")


if __name__ == "__main__":
    main()
