"""Page orientation: how often the classifier finds how a page was sent, and what it costs per page.

    python benchmarks/orientation.py PAGES_OR_COCO... [--model orientation] [--backend onnx] [--threads 2]
    python benchmarks/orientation.py PAGES... --pipeline [--skews 0,-10,10]   # the whole OCR path

Every page (image files in folders, or the pages of COCO files) is sent upright and turned 90/180/270
degrees clockwise, each also skewed by each of --skews degrees; the table gives per turn the share found
(the likeliest turn is the right one), the share turned right (undone before reading), and the share
read as sent; then, for the classifier alone, how many readings each `min_confidence` would let it
decide without the lines' check and how many of those it turns wrong; then the median milliseconds per
page. `--pipeline` reads every page with `OCR` (the
classifier, the lines' check where it knows only the axis, the skew), so "turned right" is what a
user gets, and adds the character error rate of each page's text against the same page read as it
is (upright, not skewed): what turning and skewing cost the reading; without it the classifier alone
is measured.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from ocrkit.images.frame import ANGLES, turned
from ocrkit.images.io import load_image
from ocrkit.orientation.skew import straighten

SKEWS = (0.0, -10.0, -5.0, 5.0, 10.0)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp")


def page_files(sources: list[str]) -> list[Path]:
    files: list[Path] = []
    for source in map(Path, sources):
        if source.suffix == ".json":
            images = json.loads(source.read_text(encoding="utf-8"))["images"]
            files += [source.parent / im["file_name"] for im in images]
        elif source.is_dir():
            files += sorted(p for p in source.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        else:
            files.append(source)
    return files


def skewed(image: np.ndarray, degrees: float) -> np.ndarray:
    """The page turned by a small angle about its centre on a canvas grown to hold all of it (a tilted
    photo or scan loses none of the page): the pipeline's own straightening, run the other way."""
    return straighten(image, -degrees)[0] if degrees else image


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
    parser.add_argument("--backend", choices=("torch", "onnx"), default="onnx")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="at most this many pages (0: all)")
    parser.add_argument(
        "--pipeline", action="store_true", help="read every page with OCR, not the classifier"
    )
    parser.add_argument("--skews", default=",".join(f"{s:g}" for s in SKEWS), help="degrees, comma-separated")
    args = parser.parse_args()
    from rapidfuzz.distance import Levenshtein

    from ocrkit.hub import zoo
    from ocrkit.pipeline import OCR, load_orienter

    texts: dict[str, str] = {}
    if args.pipeline:
        ocr = OCR(backend=args.backend, threads=args.threads, orientation_model=args.model)
        as_is = OCR(backend=args.backend, threads=args.threads, orientation=0)

        def classify(image: np.ndarray):
            page = ocr.read(image)
            texts["read"] = " ".join(page.text.split())
            return page.orientation

    else:
        classify = load_orienter(zoo.resolve(args.model, "orientation"), args.backend, args.threads).classify
    skews = [float(v) for v in args.skews.split(",")]
    files = page_files(args.sources)[: args.limit or None]
    counts = {(a, s): np.zeros(4) for a in ANGLES for s in skews}
    seconds = []
    sure: list[tuple[float, bool]] = []  # (likeliest turn's probability, whether it is the sent turn)
    for path in files:
        page = load_image(path)
        reference = " ".join(as_is.read(page).text.split()) if args.pipeline else ""
        for skew in skews:
            tilted = skewed(page, skew)
            for turns, angle in enumerate(ANGLES):
                sent = turned(tilted, turns)
                started = time.perf_counter()
                result = classify(sent)
                seconds.append(time.perf_counter() - started)
                sure.append((result.confidence, result.angle == angle))
                cer = Levenshtein.normalized_distance(texts["read"], reference) if args.pipeline else 0.0
                counts[angle, skew] += [
                    result.angle == angle,
                    result.applied == angle,
                    result.applied == 0,
                    cer,
                ]
    n = len(files)
    print(f"{n} pages, {args.backend}, {args.threads} threads")
    print(f"{'sent':>6s} {'skew':>6s} {'found':>7s} {'turned right':>13s} {'unsure/as is':>13s} {'CER':>6s}")
    for (angle, skew), (found, right, kept, cer) in counts.items():
        print(f"{angle:6d} {skew:+6.0f} {found / n:7.3f} {right / n:13.3f} {kept / n:13.3f} {cer / n:6.3f}")
    total = sum(counts.values())
    print(f"{'all':>13s} {total[0] / (n * len(counts)):7.3f} {total[1] / (n * len(counts)):13.3f}")
    if not args.pipeline:
        print_cuts(sure)
    what = "read" if args.pipeline else "windows cut and classified"
    print(f"median {1000 * float(np.median(seconds)):.1f} ms per page ({what})")


if __name__ == "__main__":
    main()
