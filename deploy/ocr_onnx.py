"""Torch-free OCR of pages with the exported ONNX models: writes the same JSON as `ocrkit infer`.

  python deploy/ocr_onnx.py PAGE_OR_FOLDER... --models EXPORT_DIR [--out DIR] [--threads N]

EXPORT_DIR is what tools/export_onnx.py wrote (detector/ and recognizer/ inside). Needs only the core
install of ocrkit (no extras, so no torch).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ocrkit.commands.common import output_path
from ocrkit.commands.options import positive_int
from ocrkit.errors import OcrkitError
from ocrkit.outputs import write_atomic
from ocrkit.pipeline import OCR


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--models", type=Path, required=True, help="folder with detector/ and recognizer/")
    parser.add_argument(
        "--out", type=Path, help="write <name>.json here, named as by ocrkit infer (default: JSON to stdout)"
    )
    parser.add_argument("--threads", type=positive_int, default=None)
    args = parser.parse_args()
    try:
        ocr = OCR(args.models / "detector", args.models / "recognizer", backend="onnx", threads=args.threads)
    except OcrkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for source, result in ocr.iter_results(args.paths, unique_names=args.out is not None):
        if isinstance(result, Exception):
            failed += 1
            print(f"error: {result}", file=sys.stderr)
        elif args.out:
            write_atomic(output_path(args.out, source, "json"), result.to_json())
        else:
            print(result.to_json())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
