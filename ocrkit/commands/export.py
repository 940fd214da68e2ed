"""`ocrkit export`: the detector, recognizer and/or orientation classifier as ONNX graphs.

OUT/detector/ holds detector.onnx (NMS inside the graph) and the model's settings; OUT/recognizer/ the
Optimum encoder/decoder graphs, tokenizer and settings; OUT/orientation/ the page-orientation graph.
Each is a model folder for `--backend onnx` (`ocrkit infer --det-model OUT/detector --rec-model
OUT/recognizer --orientation-model OUT/orientation`) and for the torch-free onnxruntime path. With
--quantize int8 the detector and recognizer graphs are also quantized into OUT-int8/ beside OUT: weights
of matrix products int8 (dynamic); with --calibration PAGES the detector's backbone and encoder are
quantized statically, their activation ranges measured on those pages (up to 16 of them, taken evenly;
pages like the ones to be read, never evaluation pages).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ocrkit.util.argparse_kit import DocHelpFormatter
from ocrkit.util.errors import OcrkitError

CALIBRATION_PAGES = 16  # activation ranges settle within a few pages; each costs a detector run
OPTIONS = {"detector": "--det", "recognizer": "--rec", "orientation": "--orientation"}  # part -> its option


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="export model folders to ONNX for --backend onnx and deployment",
        description=__doc__,
        formatter_class=DocHelpFormatter,
    )
    p.add_argument("--det", type=Path, help="detector model folder")
    p.add_argument("--rec", type=Path, help="recognizer model folder")
    p.add_argument("--orientation", type=Path, help="page-orientation classifier folder")
    p.add_argument("--out", type=Path, required=True, help="folder for OUT/detector, OUT/recognizer, ...")
    p.add_argument("--quantize", choices=("int8",), help="also write an int8 copy into OUT-int8/")
    p.add_argument(
        "--calibration",
        nargs="+",
        type=Path,
        metavar="PAGES",
        help="with --quantize: page images or folders to calibrate the detector's static int8 on",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ocrkit.export.detector import export_detector
    from ocrkit.export.orientation import export_orientation
    from ocrkit.export.quantize import quantize_folder
    from ocrkit.export.recognizer import export_recognizer

    folders = {part: getattr(args, option.lstrip("-")) for part, option in OPTIONS.items()}
    if not any(folders.values()):
        raise OcrkitError("give --det, --rec and/or --orientation: the model folders to export")
    if args.calibration and not args.quantize:
        raise OcrkitError("--calibration calibrates --quantize int8: give both")
    for part, folder in folders.items():
        if folder is not None and not folder.is_dir():
            raise OcrkitError(f"{folder}: not a model folder ({OPTIONS[part]})")
    calibration = calibration_pages(args.calibration) if args.calibration else []
    exporters = {
        "detector": export_detector,
        "recognizer": export_recognizer,
        "orientation": export_orientation,
    }
    for part, folder in folders.items():
        if folder is not None:
            print(f"{part} → {exporters[part](folder, args.out / part)}")
    if args.quantize:
        target = args.out.with_name(args.out.name + "-int8")
        for part in ("detector", "recognizer"):
            if (args.out / part).is_dir():
                pages = calibration if part == "detector" else []
                print(f"{part} int8 → {quantize_folder(args.out / part, target / part, pages)}")
    return 0


def calibration_pages(paths: list[Path]) -> list:
    """Up to CALIBRATION_PAGES pages of `paths`, evenly spaced; unreadable ones are named and skipped."""
    import sys

    import numpy as np

    from ocrkit.images.inputs import collect_inputs
    from ocrkit.images.io import load_page
    from ocrkit.util.errors import InputError

    items = collect_inputs(paths, unique_names=False).items
    sources = [item for item in items if not isinstance(item, InputError)]
    for error in (item for item in items if isinstance(item, InputError)):
        print(f"skipped: {error}", file=sys.stderr)
    if len(sources) > CALIBRATION_PAGES:
        spaced = np.linspace(0, len(sources) - 1, CALIBRATION_PAGES).round().astype(int)
        sources = [sources[i] for i in spaced]
    pages = []
    for source in sources:
        try:
            pages.append(load_page(source))
        except InputError as error:
            print(f"skipped: {error}", file=sys.stderr)
    if not pages:
        raise OcrkitError("--calibration: no readable page among " + ", ".join(map(str, paths)))
    return pages
