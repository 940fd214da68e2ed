"""`ocrkit data reserve`: the reserved list of evaluation files, with a perceptual hash beside each sha256.

The list is what keeps evaluation pages out of training: every import refuses a file whose sha256 is in
it, and an image whose perceptual hash is within a few bits of one in it (a resized, re-encoded or
grayscale copy). Columns: sha256, kind, source, phash (tab-separated, one header line).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from ocrkit.data.ground_truth.importer import Importer, sha256_file
from ocrkit.data.ground_truth.phash import phash, phash_text, read_reserved_phashes
from ocrkit.data.reserved import read_reserved
from ocrkit.errors import InputError
from ocrkit.io import IMAGE_SUFFIXES, load_image
from ocrkit.outputs import write_atomic

HEADER = "sha256\tkind\tsource\tphash"


def _images(paths: Iterable[Path]) -> list[tuple[Path, Path]]:
    """(image, the folder its name is relative to) for files given and images under folders given."""
    found = []
    for path in paths:
        if path.is_dir():
            found += [(p, path) for p in sorted(path.rglob("*")) if p.suffix.lower() in IMAGE_SUFFIXES]
        else:
            found.append((path, path.parent))
    return found


def reserve_rows(paths: Iterable[Path], kind: str, source: str = "") -> list[tuple[str, str, str, str]]:
    """(sha256, kind, source, phash) per readable image; an unreadable file is one warning line."""
    rows = []
    for image, base in _images(paths):
        try:
            digest, value = sha256_file(image), phash(load_image(image))
        except (InputError, OSError) as exc:
            print(f"warning: {exc if isinstance(exc, InputError) else f'{image}: {exc}'}", file=sys.stderr)
            continue
        name = image.relative_to(base).as_posix()
        rows.append((digest, kind, f"{source}:{name}" if source else name, phash_text(value)))
    return rows


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
