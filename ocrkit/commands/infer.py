"""`ocrkit infer`: pages → text, JSON with boxes, hOCR / ALTO / PAGE-XML, overlay pictures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ocrkit.commands import infer_ray
from ocrkit.commands.common import Failures, gather_inputs, output_path
from ocrkit.commands.options import add_model_options, ocr_options
from ocrkit.document import Page
from ocrkit.errors import InputError
from ocrkit.formats import EXTENSIONS, FORMATS, render
from ocrkit.io import PageSource, load_page
from ocrkit.outputs import prepare_out_dir, write_atomic


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("infer", help="detect and read the text lines of pages (images, folders, PDFs)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files, folders (recursive) or PDFs")
    p.add_argument("--out", type=Path, help="output folder; default: every page's text on standard output")
    p.add_argument("--format", type=format_list, default="txt,json", help=f"any of {','.join(FORMATS)}")
    add_model_options(p, pages=True)
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


NO_LINES = "no text lines found (for an image of a single line, use `ocrkit recognize`)"


def run(args: argparse.Namespace) -> int:
    if args.ray:
        return infer_ray.run_ray(args, args.format)
    if args.out is not None:
        prepare_out_dir(args.out)
    failures = Failures(args.debug)
    inputs = gather_inputs(args.paths, failures)
    if not inputs.sources:
        return failures.exit_code(inputs.total)
    from tqdm.auto import tqdm

    from ocrkit.pipeline import OCR

    ocr = OCR(**ocr_options(args))
    sources = inputs.sources
    progress = tqdm(sources, unit="page", disable=len(sources) < 2)
    for source, page in zip(sources, ocr.read_many(progress, args.pages_per_batch), strict=True):
        if isinstance(page, InputError):
            failures.report(source.label, page, key=source)
            continue
        if not page.lines:  # said, not silent: an empty page and a failed page look alike otherwise
            print(f"ocrkit: {source.label}: {NO_LINES}", file=sys.stderr)
        if args.out is None:
            sys.stdout.write(page.text + "\n")
        else:
            _write(page, source, args.format, args.out, failures)
    return failures.exit_code(inputs.total)


def _write(page: Page, source: PageSource, fmts: list[str], out: Path, failures: Failures) -> None:
    """Each format of the page on its own: one that fails does not cost the others."""
    for fmt in fmts:
        try:
            image = load_page(source) if fmt == "overlay" else None  # decoded again: no page is held
            write_atomic(output_path(out, source, EXTENSIONS[fmt]), render(page, fmt, image))
        except Exception as exc:  # noqa: BLE001 - reported, and the page counts as failed
            failures.report(f"{source.label} ({fmt})", exc, key=source)
