"""`ocrkit data reserve`: the reserved list of evaluation files, with a perceptual hash beside each sha256.

The list is what keeps evaluation pages out of training: every import refuses a file whose sha256 is in
it, and an image whose perceptual hash is within a few bits of one in it (a resized, re-encoded,
grayscale, cropped, deskewed or brightened copy). Columns: sha256, kind, source, phash (tab-separated,
one header line); phash holds the picture's hash and those of the copies `reserve_hashes` makes of it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from ocrkit.data.ground_truth.importer import Importer, sha256_file
from ocrkit.data.ground_truth.phash import phashes_text, read_reserved_phashes, reserve_hashes
from ocrkit.data.ground_truth.readers import read_page, sniff_format
from ocrkit.data.reserved import read_reserved
from ocrkit.images.io import IMAGE_SUFFIXES, load_image
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import InputError

HEADER = "sha256\tkind\tsource\tphash"


def _files(paths: Iterable[Path]) -> list[tuple[Path, Path]]:
    """(file, the folder its name is relative to) for files given and images or ground-truth files under
    folders given."""
    found = []
    for path in paths:
        if path.is_dir():
            found += [(p, path) for p in sorted(path.rglob("*")) if p.is_file() and _wanted(p, path)]
        else:
            found.append((path, path.parent))
    return found


def _wanted(path: Path, root: Path) -> bool:
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return True
    try:
        return sniff_format(path, root) is not None
    except InputError:
        return True  # an unreadable XML is warned about, not skipped in silence


def reserve_rows(paths: Iterable[Path], kind: str, source: str = "") -> list[tuple[str, str, str, str]]:
    """(sha256, kind, source, phash) per readable image, and (sha256, kind, source, "") per ground-truth
    file (PAGE, ALTO, SROIE, line-pair text) with a row for the image it annotates too: a list made from
    an evaluation set's folder or its annotation files alone holds both. An unreadable file is one
    warning line."""
    rows: dict[str, tuple[str, str, str, str]] = {}
    for path, base in _files(paths):
        try:
            for found in _with_annotated_image(path, base):
                name = _name(found, base)
                digest = sha256_file(found)
                is_image = found.suffix.lower() in IMAGE_SUFFIXES
                value = phashes_text(reserve_hashes(load_image(found))) if is_image else ""
                rows.setdefault(digest, (digest, kind, f"{source}:{name}" if source else name, value))
        except (InputError, OSError) as exc:
            print(f"warning: {exc if isinstance(exc, InputError) else f'{path}: {exc}'}", file=sys.stderr)
    return list(rows.values())


def _with_annotated_image(path: Path, base: Path) -> list[Path]:
    """The file, and the image it annotates when it is a ground-truth file."""
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return [path]
    fmt = sniff_format(path, base)
    if fmt is None:
        raise InputError(path, "neither an image nor a ground-truth file")
    return [path, read_page(path, fmt, base).image]


def _name(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.name


def write_reserved(out: Path, rows: list[tuple[str, str, str, str]]) -> None:
    lines = ["# files reserved for evaluation: never train on them (ocrkit data reserve)", HEADER]
    write_atomic(out, "\n".join(lines + ["\t".join(row) for row in rows]) + "\n")


def guarded_importer(out: Path, reserved: Path | None) -> Importer:
    """An Importer that refuses the reserved list's files: by sha256, and by perceptual hash where the
    list has them."""
    hashes = read_reserved(reserved) if reserved is not None else set()
    return Importer(out, hashes, near=read_reserved_phashes(reserved))


def describe_reserved(reserved: Path | None, importer: Importer) -> str:
    """The reserved list that guarded `importer`, as a data card names it."""
    if reserved is None:
        return "none (--no-reserved: the data holds no evaluation pages)"
    return f"`{reserved.name}`: {len(importer.reserved)} sha256, {len(importer.near)} perceptual hashes"
