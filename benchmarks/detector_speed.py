"""Detection time per page for one or more detector folders, ONNX through onnxruntime (the deployed path).

  python benchmarks/detector_speed.py PAGES --det-model FOLDER [FOLDER ...] [--threads 2]

Each folder is exported once (untimed) into a temporary folder; every page is decoded before timing, one
warm-up page is read, then each page is detected once. Prints one markdown row per folder: median and
mean seconds per page, and the letterboxed input size of the median page. Run it beside
`tools/benchmark.py pages` (Tesseract, RapidOCR) in one sitting with nothing else on the CPU: this
machine's speed varies between days.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ocrkit.export.detector import export_detector
from ocrkit.io import IMAGE_SUFFIXES, load_image
from ocrkit.model_folder import read_spec
from ocrkit.preprocess import padded_size
from ocrkit.runtime.detector import OnnxDetector


def page_files(pages: Path) -> list[Path]:
    folder = pages / "images" if (pages / "images").is_dir() else pages
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pages", type=Path, help="a folder of page images (or one holding images/)")
    p.add_argument("--det-model", nargs="+", required=True, help="detector folders")
    p.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    args = p.parse_args()
    images = [load_image(f) for f in page_files(args.pages)]
    print("| detector | input (median page) | median s/page | mean s/page |")
    print("|---|---|---|---|")
    for folder in args.det_model:
        spec = read_spec(folder, "detector")
        with tempfile.TemporaryDirectory() as tmp:
            export_detector(folder, tmp)
            detector = OnnxDetector(tmp, threads=args.threads)
            detector.predict(images[:1])
            seconds = []
            for image in images:
                start = time.perf_counter()
                detector.predict([image])
                seconds.append(time.perf_counter() - start)
        median_page = images[seconds.index(statistics.median_low(seconds))]
        h, w = median_page.shape[:2]
        shape = (
            f"{spec.longest}x{spec.longest}"
            if spec.square
            else "x".join(map(str, padded_size(h, w, spec.longest, spec.divisor)))
        )
        print(f"| {folder} | {shape} | {statistics.median(seconds):.3f} | {statistics.fmean(seconds):.3f} |")


if __name__ == "__main__":
    main()
