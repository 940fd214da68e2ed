"""`ocrkit export`: the detector, recognizer and/or orientation classifier as ONNX graphs.

OUT/detector/ holds detector.onnx (NMS inside the graph) and the model's settings; OUT/recognizer/ the
Optimum encoder/decoder graphs, tokenizer and settings; OUT/orientation/ the page-orientation graph.
Each is a model folder for `--backend onnx` (`ocrkit infer --det-model OUT/detector --rec-model
OUT/recognizer --orientation-model OUT/orientation`) and for the torch-free onnxruntime path. With
--quantize int8 the detector and recognizer graphs are also dynamically quantized (weights int8) into
OUT-int8/ beside OUT.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ocrkit.util.argparse_kit import DocHelpFormatter
from ocrkit.util.errors import OcrkitError

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
    p.add_argument("--quantize", choices=("int8",), help="also write a dynamically quantized copy")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ocrkit.export.detector import export_detector
    from ocrkit.export.orientation import export_orientation
    from ocrkit.export.quantize import quantize_folder
    from ocrkit.export.recognizer import export_recognizer

    folders = {part: getattr(args, option.lstrip("-")) for part, option in OPTIONS.items()}
    if not any(folders.values()):
        raise OcrkitError("give --det, --rec and/or --orientation: the model folders to export")
    for part, folder in folders.items():
        if folder is not None and not folder.is_dir():
            raise OcrkitError(f"{folder}: not a model folder ({OPTIONS[part]})")
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
                print(f"{part} int8 → {quantize_folder(args.out / part, target / part)}")
    return 0
