"""Export the detector, recognizer and/or orientation classifier to ONNX for `--backend onnx` and deploy/.

  python tools/export_onnx.py --det DIR --rec DIR --orientation DIR --out OUT [--quantize int8]

OUT/detector/ holds detector.onnx (NMS inside the graph) + the model's settings; OUT/recognizer/ holds
the Optimum encoder/decoder graphs, tokenizer and settings; OUT/orientation/ the page-orientation graph
(`ocrkit infer --orientation-model OUT/orientation`). With --quantize int8 the graphs are
dynamically quantized (weights int8) into OUT-int8/ beside OUT.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ocrkit.argparse_kit import Parser
from ocrkit.export.detector import export_detector
from ocrkit.export.quantize import quantize_folder
from ocrkit.export.recognizer import export_recognizer


def main() -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--det", type=Path, help="detector model folder")
    parser.add_argument("--rec", type=Path, help="recognizer model folder")
    parser.add_argument("--orientation", type=Path, help="page-orientation classifier folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quantize", choices=("int8",), help="also write a dynamically quantized copy")
    args = parser.parse_args()
    if not (args.det or args.rec or args.orientation):
        parser.error("give --det, --rec and/or --orientation")
    if args.det:
        print("detector →", export_detector(args.det, args.out / "detector"))
    if args.rec:
        print("recognizer →", export_recognizer(args.rec, args.out / "recognizer"))
    if args.orientation:
        from ocrkit.export.orientation import export_orientation

        print("orientation →", export_orientation(args.orientation, args.out / "orientation"))
    if args.quantize:
        target = args.out.with_name(args.out.name + "-int8")
        for part in ("detector", "recognizer"):
            if (args.out / part).is_dir():
                print(f"{part} int8 →", quantize_folder(args.out / part, target / part))
    return 0


if __name__ == "__main__":
    sys.exit(main())
