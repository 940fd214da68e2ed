"""Helpers shared by the page-processing commands (infer, detect, recognize): inputs, failure counting,
output names. Their options are declared in ocrkit.commands.options."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Hashable, Iterator
from pathlib import Path

import numpy as np

from ocrkit.commands.options import model_folders, ocr_options
from ocrkit.commands.progress import loading_line, say
from ocrkit.hub import zoo
from ocrkit.hub.model_info import release_name
from ocrkit.images.inputs import Inputs, collect_inputs
from ocrkit.images.io import PageSource, load_page
from ocrkit.pipeline import OCR
from ocrkit.util.errors import InputError, report_error
from ocrkit.util.extras import require


def load_ocr(args: argparse.Namespace) -> OCR:
    """The pipeline the model options of `args` ask for, after one line saying what loads on which
    backend (loading takes seconds; the line comes before them)."""
    options = ocr_options(args)
    folders = model_folders(args)
    # a missing extra is one line before anything is said to load
    if options["backend"] == "torch":
        require("torch", "torch", f"ocrkit {args.command}")
    else:
        for kind, folder in folders.items():
            zoo.check_onnx_ready(folder, kind)
    releases = [release_name(folder) for folder in folders.values()]
    say(loading_line(releases, options["backend"], chosen=args.backend == "auto"))
    return OCR(**options)


def set_torch_threads(threads: int | None) -> None:
    """Honour `--threads` for the torch backend (None keeps torch's default: all cores)."""
    if threads:
        import torch

        torch.set_num_threads(threads)


class Failures:
    """Prints each problem as one line on stderr (a traceback only with --debug) and counts the
    inputs that failed: a page that fails twice (two formats) is one failed input."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self.failed: set[Hashable] = set()

    @property
    def count(self) -> int:
        return len(self.failed)

    def report(self, where: object, exc: BaseException, key: Hashable | None = None) -> None:
        self.failed.add(key if key is not None else exc)  # the exception itself: one input
        if self.debug:
            traceback.print_exception(exc)
        report_error(exc if isinstance(exc, InputError) else f"{where}: {exc.__class__.__name__}: {exc}")

    def exit_code(self, total: int) -> int:
        if self.count:
            print(f"ocrkit: {self.count} of {max(total, self.count)} inputs failed", file=sys.stderr)
            return 1
        return 0


def gather_inputs(paths: list[str], failures: Failures) -> Inputs:
    """Find every input and report the bad ones at once, before any model loads."""
    inputs = collect_inputs(paths)
    for err in inputs.errors:
        failures.report(err.path, err)
    return inputs


def iter_loaded_pages(
    inputs: Inputs, failures: Failures, progress: bool = True
) -> Iterator[tuple[PageSource, np.ndarray]]:
    """Decoded pages of `inputs`; pages that cannot be decoded are reported and skipped."""
    from tqdm.auto import tqdm

    sources = inputs.sources
    for source in tqdm(sources, unit="page", disable=not progress or len(sources) < 2):
        try:
            yield source, load_page(source)
        except InputError as exc:
            failures.report(source.label, exc, key=source)


def output_path(out_dir: Path, source: PageSource, ext: str) -> Path:
    """`<out>/<name>[-p<N>].<ext>`: the input's name (see ocrkit.images.inputs) mirrored under `--out`."""
    return out_dir / f"{source.stem}.{ext}"
