"""Detection time per page for one or more detector folders, ONNX through onnxruntime (the deployed path).

  python benchmarks/detector_speed.py PAGES --det-model FOLDER [FOLDER ...] [--threads 2] [--rounds 3]

Each folder is exported once (untimed) into a temporary folder; every page is decoded before timing and
one warm-up page is read per folder. Then, round after round, each folder detects every page once, the
folders taking turns within a round, so that a slow spell of the machine hits all of them alike (on a
2-core cloud CPU two sittings of the same detector differed by a fifth). Prints one markdown row per
folder: the median and mean seconds per page over all rounds, the spread of the rounds' medians, and the
letterboxed input size of the median page. Run it beside `benchmarks/pages.py` (Tesseract,
RapidOCR) in one sitting with nothing else on the CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

from ocrkit.export.detector import export_detector
from ocrkit.hub.model_folder import read_spec
from ocrkit.images.io import IMAGE_SUFFIXES, load_image
from ocrkit.images.preprocess import padded_size
from ocrkit.runtime.detector import OnnxDetector


def page_files(pages: Path) -> list[Path]:
    folder = pages / "images" if (pages / "images").is_dir() else pages
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pages", type=Path, help="a folder of page images (or one holding images/)")
    p.add_argument("--det-model", nargs="+", required=True, help="detector folders")
    p.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    p.add_argument("--rounds", type=int, default=3, help="passes over the pages, folders taking turns")
    args = p.parse_args()
    images = [load_image(f) for f in page_files(args.pages)]
    with contextlib.ExitStack() as stack:
        detectors = []
        for folder in args.det_model:
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            export_detector(folder, tmp)
            detectors.append(OnnxDetector(tmp, threads=args.threads))
            detectors[-1].predict(images[:1])
        seconds: list[list[list[float]]] = [[] for _ in detectors]  # folder → round → page
        for _ in range(args.rounds):
            for detector, rounds in zip(detectors, seconds, strict=True):
                rounds.append([])
                for image in images:
                    start = time.perf_counter()
                    detector.predict([image])
                    rounds[-1].append(time.perf_counter() - start)
    print("| detector | input (median page) | median s/page | mean s/page | round medians |")
    print("|---|---|---|---|---|")
    for folder, rounds in zip(args.det_model, seconds, strict=True):
        spec = read_spec(folder, "detector")
        per_page = [statistics.median(times) for times in zip(*rounds, strict=True)]
        median_page = images[per_page.index(statistics.median_low(per_page))]
        h, w = median_page.shape[:2]
        shape = (
            f"{spec.sizing.longest}x{spec.sizing.longest}"
            if spec.sizing.square
            else "x".join(map(str, padded_size(h, w, spec.sizing.side(h, w), spec.sizing.divisor)))
        )
        every = [s for times in rounds for s in times]
        spread = " / ".join(f"{statistics.median(times):.3f}" for times in rounds)
        median, mean = statistics.median(every), statistics.fmean(every)
        print(f"| {folder} | {shape} | {median:.3f} | {mean:.3f} | {spread} |")


if __name__ == "__main__":
    main()
