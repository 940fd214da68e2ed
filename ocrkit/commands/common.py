"""Helpers shared by the page-processing commands (infer, detect): inputs, error reporting, outputs."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ocrkit.errors import InputError
from ocrkit.io import PageSource, expand_paths, iter_pages, load_page


def set_torch_threads(threads: int | None) -> None:
    """Honour `--threads` for the torch backend (None keeps torch's default: all cores)."""
    if threads:
        import torch

        torch.set_num_threads(threads)


class Failures:
    """Counts problems and prints each as one line on stderr (a traceback only with --debug)."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug
        self.count = 0

    def report(self, where: object, exc: BaseException) -> None:
        self.count += 1
        if self.debug:
            traceback.print_exception(exc)
        msg = str(exc) if isinstance(exc, InputError) else f"{where}: {exc.__class__.__name__}: {exc}"
        from tqdm.auto import tqdm

        tqdm.write(f"ocrkit: error: {msg}", file=sys.stderr)  # keeps the line intact under a progress bar

    def exit_code(self, total: int) -> int:
        if self.count:
            print(f"ocrkit: {self.count} of {total} inputs failed", file=sys.stderr)
            return 1
        return 0


def iter_loaded_pages(
    paths: list[str], failures: Failures, progress: bool = True
) -> Iterator[tuple[PageSource, np.ndarray]]:
    """Decoded pages of every image/PDF under `paths`; bad inputs are reported and skipped."""
    files, errors = expand_paths(paths)
    for err in errors:
        failures.report(err.path, err)
    sources: list[PageSource] = []
    for item in iter_pages(files):
        if isinstance(item, InputError):
            failures.report(item.path, item)
        else:
            sources.append(item)
    from tqdm.auto import tqdm

    for source in tqdm(sources, unit="page", disable=not progress or len(sources) < 2):
        try:
            yield source, load_page(source)
        except InputError as exc:
            failures.report(source.path, exc)


def output_path(out_dir: Path, source: PageSource, ext: str) -> Path:
    return out_dir / f"{source.stem}.{ext}"
