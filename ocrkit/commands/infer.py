"""`ocrkit infer`: pages → text, JSON with boxes, hOCR / ALTO / PAGE-XML, overlay pictures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ocrkit.commands import infer_ray
from ocrkit.commands.common import Failures, gather_inputs, iter_loaded_pages, output_path
from ocrkit.commands.options import PAGES_PER_BATCH, add_model_options, positive_int
from ocrkit.document import Page
from ocrkit.io import PageSource
from ocrkit.outputs import prepare_out_dir, write_atomic

if TYPE_CHECKING:
    from ocrkit.pipeline import OCR  # imported lazily in run(): torch loads only when a command needs it

FORMATS = ("txt", "json", "hocr", "alto", "page", "overlay")
EXTENSIONS = {
    "txt": "txt",
    "json": "json",
    "hocr": "hocr",
    "alto": "alto.xml",
    "page": "page.xml",
    "overlay": "overlay.png",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("infer", help="detect and read the text lines of pages (images, folders, PDFs)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files, folders (recursive) or PDFs")
    p.add_argument(
        "--out", type=Path, help="output folder; default: the text of every page on standard output"
    )
    p.add_argument(
        "--format",
        type=format_list,
        default="txt,json",
        help=f"comma-separated subset of {','.join(FORMATS)}",
    )
    p.add_argument(
        "--pages-per-batch",
        type=positive_int,
        default=PAGES_PER_BATCH,
        help="pages whose lines are recognised together",
    )
    add_model_options(p)
    infer_ray.add_arguments(p)
    p.set_defaults(func=run)


def format_list(text: str) -> list[str]:
    """argparse type for --format: known names only, at least one (else the run would write nothing)."""
    formats = list(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown format {unknown[0]!r} (choose from {', '.join(FORMATS)})")
    if not formats:
        raise argparse.ArgumentTypeError(f"no format given (choose from {', '.join(FORMATS)})")
    return formats


def render(page: Page, fmt: str, image) -> str | bytes:
    from ocrkit import formats
    from ocrkit.overlay import overlay_png

    return {
        "txt": lambda: page.text + "\n",
        "json": page.to_json,
        "hocr": lambda: formats.to_hocr(page),
        "alto": lambda: formats.to_alto(page),
        "page": lambda: formats.to_page_xml(page),
        "overlay": lambda: overlay_png(image, page),
    }[fmt]()


def run(args: argparse.Namespace) -> int:
    if args.ray:
        return infer_ray.run_ray(args, args.format)
    if args.out is not None:
        prepare_out_dir(args.out)
    failures = Failures(args.debug)
    inputs = gather_inputs(args.paths, failures)
    if not inputs.sources:
        return failures.exit_code(inputs.total)
    from ocrkit.pipeline import OCR

    ocr = OCR(
        args.det_model,
        args.rec_model,
        backend=args.backend,
        device=args.device,
        batch_size=args.batch_size,
        threads=args.threads,
        decoding=args.decoding,
    )
    group: list[tuple[PageSource, np.ndarray]] = []
    for source, image in iter_loaded_pages(inputs, failures):
        group.append((source, image))
        if len(group) == args.pages_per_batch:
            _read_and_write(ocr, group, args.format, args, failures)
            group = []
    _read_and_write(ocr, group, args.format, args, failures)
    return failures.exit_code(inputs.total)


def _read_and_write(
    ocr: OCR,
    group: list[tuple[PageSource, np.ndarray]],
    formats: list[str],
    args: argparse.Namespace,
    failures: Failures,
) -> None:
    """Read a group of pages together (lines batched across pages) and write each page's outputs; if
    the group fails, pages are retried one by one so the error names the page that caused it."""
    if not group:
        return
    try:
        pages = ocr.read_arrays(
            [img for _, img in group], [s.label for s, _ in group], [s.page for s, _ in group]
        )
    except Exception:  # noqa: BLE001 - retried page by page below, where the failure is reported
        pages = [None] * len(group)
    for (source, image), page in zip(group, pages, strict=True):
        try:
            if page is None:
                page = ocr.read_array(image, name=source.label, page=source.page)
        except Exception as exc:  # one bad page must not stop the batch
            failures.report(source.label, exc, key=source)
            continue
        if args.out is None:
            sys.stdout.write(page.text + "\n")
            continue
        for fmt in formats:  # each format on its own: one that fails does not cost the others
            try:
                write_atomic(output_path(args.out, source, EXTENSIONS[fmt]), render(page, fmt, image))
            except Exception as exc:  # noqa: BLE001 - reported, and the page counts as failed
                failures.report(f"{source.label} ({fmt})", exc, key=source)
