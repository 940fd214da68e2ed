"""The one path guard of the ground-truth import: every file it reads stays inside the source folder.

A downloaded ground-truth archive is untrusted input: a transcription that is a symlink to a system file,
or an annotation naming `/etc/…` or `../../…` as its image, must not pull that file into a training set
that is meant to be shared. Names from annotation files are taken literally (never expanded as globs).

Two layouts keep the images in a folder beside the annotations' folder: SROIE (`box/` + `img/`) and OCR-D
workspaces (`OCR-D-GT-PAGE/` + `OCR-D-IMG/`). When the annotations' folder itself is imported, a sibling
folder with one of those names counts as part of the source, and no other does.
"""

from __future__ import annotations

import fnmatch
from functools import lru_cache
from pathlib import Path

from ocrkit.util.errors import InputError

OUTSIDE = "leads outside the source folder"
IMAGE_SIBLINGS = ("img", "OCR-D-IMG*")


@lru_cache(maxsize=256)
def _allowed(root: Path) -> tuple[Path, ...]:
    root = root.resolve()
    siblings = []
    if root.parent != root and root.parent.is_dir():
        siblings = [
            d
            for d in sorted(root.parent.iterdir())
            if d != root and d.is_dir() and any(fnmatch.fnmatchcase(d.name, p) for p in IMAGE_SIBLINGS)
        ]
    return (root, *siblings)


def image_siblings(root: Path) -> tuple[Path, ...]:
    """The image folders beside `root` that count as part of it (SROIE img/, OCR-D OCR-D-IMG*/)."""
    return _allowed(root)[1:]


def inside(root: Path, path: Path) -> bool:
    """Whether `path`, with every symlink followed, lies in the source folder `root` (or one of its
    image siblings)."""
    try:
        resolved = path.resolve()
        return any(resolved.is_relative_to(base) for base in _allowed(root))
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False


def guard(root: Path, path: Path, named_in: Path | None = None) -> Path:
    """`path` if it stays inside `root`; else InputError naming the file that asked for it (`named_in`,
    e.g. the transcription whose image it is) or the path itself."""
    if inside(root, path):
        return path
    if named_in is not None:
        raise InputError(named_in, f"{OUTSIDE} ({path})")
    raise InputError(path, OUTSIDE)
