"""`ocrkit infer`: pages → text, JSON with boxes, hOCR / ALTO / PAGE-XML, overlay pictures."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ocrkit.commands import infer_ray
from ocrkit.commands.common import Failures, gather_inputs, load_ocr, output_path
from ocrkit.commands.options import add_model_options
from ocrkit.commands.pdf_documents import DocumentPdfs
from ocrkit.commands.progress import PageProgress, say
from ocrkit.images.io import PageSource, load_page
from ocrkit.pages.document import Page
from ocrkit.pages.formats import EXTENSIONS, FORMATS, render
from ocrkit.pages.outputs import prepare_out_dir, write_atomic
from ocrkit.util.errors import InputError, OcrkitError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("infer", help="detect and read the text lines of pages (images, folders, PDFs)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="image files, folders (recursive) or PDFs")
    p.add_argument("--out", type=Path, help="output folder; default: every page on standard output")
    p.add_argument(
        "--format",
        type=format_list,
        help=f"any of {','.join(FORMATS)}, comma-separated; default: txt,json with --out, txt without. "
        "Without --out one format goes to standard output, pages in input order: txt pages separated by "
        "a form feed (\\f) before each page but the first, as tesseract does; json one JSON object per "
        "line (JSON Lines); hocr, alto and page for a single page only; overlay needs --out",
    )
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


# formats standard output never takes
NOT_ON_STDOUT = {"overlay": "writes pictures", "pdf": "writes a PDF file per input"}
ONE_PAGE_ON_STDOUT = ("hocr", "alto", "page")  # one XML document per page: two in a row are no document
PAGE_SEPARATOR = "\f"  # txt on standard output: before each page but the first (tesseract's separator)


def chosen_formats(args: argparse.Namespace) -> list[str]:
    """The formats to write: --format, else txt and json into --out, plain text on standard output.
    Standard output takes one format, and not a picture: anything else is refused here, before any
    input is read or model loaded."""
    if args.format is None:
        return ["txt", "json"] if args.out is not None or args.ray else ["txt"]
    if args.out is None and not args.ray:  # --ray without --out is refused on its own terms
        if len(args.format) > 1:
            raise OcrkitError(
                f"--format {','.join(args.format)}: standard output takes one format; give one, "
                "or --out DIR for several"
            )
        fmt = args.format[0]
        if fmt in NOT_ON_STDOUT:
            raise OcrkitError(f"--format {fmt} {NOT_ON_STDOUT[fmt]}: give --out DIR")
    return args.format


def run(args: argparse.Namespace) -> int:
    formats = chosen_formats(args)
    if args.ray:
        return infer_ray.run_ray(args, formats)
    if args.out is not None:
        prepare_out_dir(args.out)
    failures = Failures(args.debug)
    inputs = gather_inputs(args.paths, failures)
    if not inputs.sources:
        return failures.exit_code(inputs.total)
    if args.out is None and formats[0] in ONE_PAGE_ON_STDOUT and len(inputs.sources) > 1:
        raise OcrkitError(
            f"--format {formats[0]} prints a single page on standard output, and the inputs hold "
            f"{len(inputs.sources)} pages: give --out DIR for a file per page"
        )
    ocr = load_ocr(args)
    pdfs = DocumentPdfs(args.out) if args.out is not None and "pdf" in formats else None
    sources = inputs.sources
    progress = PageProgress(len(sources))
    for n, (source, page) in enumerate(
        zip(sources, ocr.read_many(sources, args.pages_per_batch), strict=True)
    ):
        if args.out is None and formats == ["txt"] and n:
            # written read or not: the k-th txt page on standard output is the k-th page found
            sys.stdout.write(PAGE_SEPARATOR)
        if isinstance(page, InputError):
            failures.report(source.label, page, key=source)
            _add_pdf_page(pdfs, source, None, failures)
            progress.finished(source.label, None)
            continue
        if not page.lines:  # said, not silent: an empty page and a failed page look alike otherwise
            say(f"{source.label}: {NO_LINES}")
        if args.out is None:
            _print(page, source, formats[0], failures)
        else:
            _write(page, source, formats, args.out, failures)
            _add_pdf_page(pdfs, source, page, failures)
        progress.finished(source.label, page)
    progress.close()
    if args.out is not None:
        say(progress.summary(args.out))
    return failures.exit_code(inputs.total)


def _add_pdf_page(
    pdfs: DocumentPdfs | None, source: PageSource, page: Page | None, failures: Failures
) -> None:
    """The page into its document's searchable PDF (written with the document's last page)."""
    if pdfs is None:
        return
    try:
        pdfs.add(source, page)
    except Exception as exc:  # noqa: BLE001 - reported, and the page counts as failed
        failures.report(f"{source.label} (pdf)", exc, key=source)


def _print(page: Page, source: PageSource, fmt: str, failures: Failures) -> None:
    """The page in `fmt` on standard output; json as one line (JSON Lines), so pages stay one per line."""
    try:
        text = page_json_line(page) if fmt == "json" else render(page, fmt)
    except Exception as exc:  # noqa: BLE001 - reported, and the page counts as failed
        failures.report(f"{source.label} ({fmt})", exc, key=source)
        return
    sys.stdout.write(text)


def page_json_line(page: Page) -> str:
    """The page's JSON (the fields of the json format) on one line, ending with a newline."""
    return json.dumps(page.to_dict(), ensure_ascii=False) + "\n"


def _write(page: Page, source: PageSource, fmts: list[str], out: Path, failures: Failures) -> None:
    """Each format of the page on its own: one that fails does not cost the others."""
    for fmt in fmts:
        if fmt == "pdf":  # one PDF per document: DocumentPdfs
            continue
        try:
            image = load_page(source) if fmt == "overlay" else None  # decoded again: no page is held
            write_atomic(output_path(out, source, EXTENSIONS[fmt]), render(page, fmt, image))
        except Exception as exc:  # noqa: BLE001 - reported, and the page counts as failed
            failures.report(f"{source.label} ({fmt})", exc, key=source)
