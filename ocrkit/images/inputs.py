"""The paths a user gives → every page to read, each with its own output name, and every input that
cannot be read, so a batch can say truthfully how many of its inputs failed.

Output naming rule: a file found in a folder argument is named by its path relative to that folder,
extension included (`scans/2023/page_001.jpg` given as `scans/` → `2023/page_001.jpg`); a file given
directly is named by its file name. Pages of a PDF, and of a TIFF with several pages, add `-p<N>`.
Outputs are `<name>.<format extension>` mirrored under `--out`, so `x.jpg` and `x.png`, or
`2023/page_001.jpg` and `2024/page_001.jpg`, never share an output.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ocrkit.images.io import (
    IMAGE_SUFFIXES,
    PDF_SUFFIX,
    TIFF_SUFFIXES,
    PageSource,
    pdf_page_count,
    tiff_page_count,
)
from ocrkit.util.errors import InputError

READABLE_SUFFIXES = IMAGE_SUFFIXES | {PDF_SUFFIX}


@dataclass
class Inputs:
    """Pages and failed inputs in input order. An input is a page, or a path/file that gave none."""

    items: list[PageSource | InputError] = field(default_factory=list)

    @property
    def sources(self) -> list[PageSource]:
        return [item for item in self.items if isinstance(item, PageSource)]

    @property
    def errors(self) -> list[InputError]:
        return [item for item in self.items if isinstance(item, InputError)]

    @property
    def total(self) -> int:
        return len(self.items)


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied (the folder cannot be listed)"
    return f"cannot list folder ({exc.strerror or exc})"


def _walk(folder: Path) -> tuple[list[Path], list[InputError]]:
    """Readable-looking files under `folder` (recursive, sorted); folders that cannot be listed are
    errors, not silently empty."""
    found: list[Path] = []
    errors: list[InputError] = []
    for root, _, names in os.walk(
        folder, onerror=lambda exc: errors.append(InputError(exc.filename, _os_problem(exc)))
    ):
        found.extend(Path(root, n) for n in names if Path(n).suffix.lower() in READABLE_SUFFIXES)
    found = sorted(f for f in found if f.is_file())
    if not found and not errors:
        errors.append(InputError(folder, "folder contains no images or PDFs"))
    return found, errors


def _pages(file: Path, name: str) -> list[PageSource | InputError]:
    suffix = file.suffix.lower()
    if suffix == PDF_SUFFIX:
        try:
            count = pdf_page_count(file)
        except InputError as exc:
            return [exc]
        return [PageSource(file, name, n, count, is_pdf=True) for n in range(1, count + 1)]
    count = tiff_page_count(file) if suffix in TIFF_SUFFIXES else 1
    return [PageSource(file, name, n, count) for n in range(1, count + 1)]


def collect_inputs(paths: Iterable[str | Path], unique_names: bool = True) -> Inputs:
    """Files and folders (recursive) → every page of every image, TIFF and PDF, named by the rule
    above. Missing paths, folders that cannot be listed or hold nothing readable, PDFs that cannot be
    opened and (with `unique_names`) a second input whose output name is already taken are errors."""
    inputs = Inputs()
    taken: dict[str, PageSource] = {}  # case-folded: x.png and X.PNG are one file on some systems
    for raw in paths:
        arg = Path(raw)
        if arg.is_dir():
            files, errors = _walk(arg)
            inputs.items.extend(errors)
            named = [(f, f.relative_to(arg).as_posix()) for f in files]
        elif arg.is_file():
            named = [(arg, arg.name)]
        else:
            inputs.items.append(InputError(arg, "no such file or folder"))
            continue
        for file, name in named:
            for item in _pages(file, name):
                if isinstance(item, PageSource) and unique_names:
                    other = taken.setdefault(item.stem.casefold(), item)
                    if other is not item:
                        problem = f"same output name as {other.label} ({item.stem}); give their common folder"
                        item = InputError(file, problem)
                inputs.items.append(item)
    return inputs
