"""`ocrkit infer`: pages → text, JSON with boxes, hOCR / ALTO / PAGE-XML, overlay pictures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ocrkit.commands import infer_ray
from ocrkit.commands.common import Failures, iter_loaded_pages, output_path
from ocrkit.document import Page, write_atomic
from ocrkit.io import PageSource
from ocrkit.recognition.ctc_decoding import DECODINGS

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
    p.add_argument("--out", type=Path, help="output folder (default: text of a single input to stdout)")
    p.add_argument("--format", default="txt,json", help=f"comma-separated subset of {','.join(FORMATS)}")
    p.add_argument("--backend", choices=("torch", "onnx"), help="default: torch (onnx with --ray)")
    p.add_argument("--det-model", type=Path, help="detector folder (default: the shipped model)")
    p.add_argument("--rec-model", type=Path, help="recognizer folder (default: the shipped model)")
    p.add_argument("--decoding", choices=DECODINGS, help="override the recognizer's decoder (ocrkit.json)")
    p.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N (torch backend)")
    p.add_argument("--batch-size", type=int, default=16, help="line crops per recognizer batch")
    p.add_argument("--threads", type=int, help="CPU threads (default: library default)")
    p.add_argument(
        "--pages-per-batch", type=int, default=4, help="pages whose lines are recognised together (default 4)"
    )
    infer_ray.add_arguments(p)
    p.set_defaults(func=run)


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
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        print(
            f"ocrkit: error: unknown format {unknown[0]!r} (choose from {', '.join(FORMATS)})",
            file=sys.stderr,
        )
        return 2
    if args.ray:
        return infer_ray.run_ray(args, formats)
    from ocrkit.pipeline import OCR

    ocr = OCR(
        args.det_model,
        args.rec_model,
        backend=args.backend or "torch",
        device=args.device,
        batch_size=args.batch_size,
        threads=args.threads,
        decoding=args.decoding,
    )
    failures = Failures(args.debug)
    total = 0
    group: list[tuple[PageSource, np.ndarray]] = []
    for source, image in iter_loaded_pages(args.paths, failures):
        total += 1
        group.append((source, image))
        if len(group) == args.pages_per_batch:
            _read_and_write(ocr, group, formats, args, failures)
            group = []
    _read_and_write(ocr, group, formats, args, failures)
    return failures.exit_code(max(total, failures.count))


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
            [img for _, img in group], [str(s.path) for s, _ in group], [s.page for s, _ in group]
        )
    except Exception:  # noqa: BLE001 - retried page by page below, where the failure is reported
        pages = [None] * len(group)
    for (source, image), page in zip(group, pages, strict=True):
        try:
            if page is None:
                page = ocr.read_array(image, name=str(source.path), page=source.page)
            if args.out is None:
                sys.stdout.write(page.text + "\n")
                continue
            for fmt in formats:
                write_atomic(output_path(args.out, source, EXTENSIONS[fmt]), render(page, fmt, image))
        except Exception as exc:  # one bad page must not stop the batch
            failures.report(source.path, exc)
