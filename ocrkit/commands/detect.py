"""`ocrkit detect`: pages → line boxes as JSON (and, with --crops, line images + lines.jsonl)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2

from ocrkit.commands.common import (
    Failures,
    gather_inputs,
    iter_loaded_pages,
    output_path,
    set_torch_threads,
)
from ocrkit.commands.options import add_model_options
from ocrkit.commands.progress import loading_line, say
from ocrkit.hub import zoo
from ocrkit.hub.model_info import release_name
from ocrkit.images.line_crops import DETECTED_FRAMING, crop_lines
from ocrkit.pages.outputs import prepare_out_dir, write_atomic
from ocrkit.pipeline import detect_page


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("detect", help="find text-line boxes on pages (images, folders, PDFs)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files, folders (recursive) or PDFs")
    p.add_argument("--out", type=Path, required=True, help="output folder: <name>.json per page")
    p.add_argument("--crops", action="store_true", help="also write line crops and lines.jsonl")
    add_model_options(p, recognizer=False, backend=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ocrkit.detection import load_detector

    prepare_out_dir(args.out)
    failures = Failures(args.debug)
    inputs = gather_inputs(args.paths, failures)
    if not inputs.sources:
        return failures.exit_code(inputs.total)
    set_torch_threads(args.threads)
    folder = zoo.resolve(args.det_model, "detector")
    zoo.refuse_onnx_export(folder, "ocrkit detect runs torch folders; give the one it was exported from")
    say(loading_line([release_name(folder)], "torch", chosen=False))
    detector = load_detector(folder, device=args.device)
    manifest: list[str] = []
    for source, image in iter_loaded_pages(inputs, failures):
        try:
            page = detect_page(detector, image, source.label, source.page)
            write_atomic(output_path(args.out, source, "json"), page.to_json())
            if args.crops:
                for n, crop in enumerate(crop_lines(image, page.boxes()), 1):
                    rel = f"crops/{source.stem}/line_{n:04d}.png"
                    ok, png = cv2.imencode(".png", cv2.cvtColor(crop, cv2.COLOR_RGB2BGR))
                    write_atomic(args.out / rel, png.tobytes())
                    manifest.append(
                        json.dumps(
                            {
                                "image": rel,
                                "page_image": source.label,
                                "page": source.page,
                                "bbox": page.lines[n - 1].to_dict()["bbox"],
                                "framing": DETECTED_FRAMING,
                            }
                        )
                    )
        except Exception as exc:  # one bad page must not stop the batch
            failures.report(source.label, exc, key=source)
    if args.crops:
        write_atomic(args.out / "lines.jsonl", "".join(m + "\n" for m in manifest))
    return failures.exit_code(inputs.total)
