"""JSON-lines files: line manifests (`{"image": path, "text": ...}` per line) and prediction files.

Torch-free, so packing, evaluation tools and datasets read manifests the same way and report a bad
line by file and line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ocrkit.util.errors import InputError


def iter_jsonl(path: str | Path, what: str = "file") -> Iterator[tuple[int, Any]]:
    """(line number, JSON value) per non-blank line; a missing file or a line that is not UTF-8 or not JSON
    raises InputError naming it (`what` says what the file is in that message)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, f"{what} not found")
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{path}:{n}", "not UTF-8 text") from None
            if not line.strip():
                continue
            try:
                yield n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{n}", f"invalid JSON ({exc.msg})") from None


def read_jsonl(path: str | Path, what: str = "file") -> list[Any]:
    """The JSON values of a JSON-lines file, blank lines skipped."""
    return [value for _, value in iter_jsonl(path, what)]


def read_manifest(path: str | Path, require_text: bool = True) -> list[dict[str, Any]]:
    """Records with "image" resolved to an absolute path (the original value kept in "image_ref").

    Relative image paths resolve against the manifest's folder; absolute paths are used as they are."""
    path = Path(path)
    records = []
    for n, rec in iter_jsonl(path, "manifest"):
        if not isinstance(rec, dict) or not isinstance(rec.get("image"), str):
            raise InputError(f"{path}:{n}", 'expected an object with an "image" path')
        if require_text and not isinstance(rec.get("text"), str):
            raise InputError(f"{path}:{n}", 'missing "text"')
        image = Path(rec["image"])
        records.append(
            {
                **rec,
                "image_ref": rec["image"],
                "image": str(image if image.is_absolute() else path.parent / image),
            }
        )
    if not records:
        raise InputError(path, "manifest has no records")
    return records
