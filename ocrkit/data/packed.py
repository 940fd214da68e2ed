"""Packed training data: line manifests and COCO page sets as Parquet shards.

Hundreds of thousands of small crop files are slow to copy, list and stream; a few Parquet files of image
bytes + text (or boxes) are not, and Hugging Face `datasets` reads them as they are
(`load_dataset("parquet", data_files=...)`). Local paths, globs and fsspec URLs are accepted.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ocrkit.data.manifest import read_manifest
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import InputError

LINE_COLUMNS = ("image", "text", "source", "license", "split", "subset", "case_sensitive", "width", "height")
PAGE_COLUMNS = (
    "image",
    "file_name",
    "width",
    "height",
    "annotations",
    "source",
    "license",
    "split",
    "subset",
)


def is_packed(spec: str) -> bool:
    return str(spec).endswith(".parquet")


def shard_paths(spec: str) -> list[str]:
    """A shard path, glob or fsspec URL → the shard list (a URL is passed on as it is)."""
    if "://" in spec:
        return [spec]
    paths = sorted(glob.glob(spec))
    if not paths:
        raise InputError(spec, "no Parquet shard matches")
    return paths


def _read_table(path: str):
    import pyarrow.parquet as pq

    try:
        if "://" in path:
            import fsspec

            with fsspec.open(path, "rb") as fh:
                return pq.read_table(fh)
        return pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read Parquet shard ({exc})") from None


def read_packed_lines(spec: str) -> list[dict[str, Any]]:
    """Line records with the encoded crop in "image_bytes" (and "image" naming shard and row)."""
    records = []
    for path in shard_paths(spec):
        table = _read_table(path)
        if "image" not in table.column_names or "text" not in table.column_names:
            raise InputError(path, "not a line shard (needs 'image' and 'text' columns)")
        for n, row in enumerate(table.to_pylist()):
            image = row.pop("image")
            row = {k: v for k, v in row.items() if v is not None}
            records.append({**row, "image_bytes": image, "image": f"{path}#{n}", "image_ref": f"{path}#{n}"})
    if not records:
        raise InputError(spec, "the shards hold no lines")
    return records


def read_packed_pages(spec: str) -> Iterator[dict[str, Any]]:
    """Page rows: encoded image bytes, size, and the COCO annotations of the page as a list."""
    for path in shard_paths(spec):
        for row in _read_table(path).to_pylist():
            row["annotations"] = json.loads(row["annotations"])
            yield row


def decode_image(data: bytes, name: str) -> np.ndarray:
    """Encoded bytes → RGB uint8 (grayscale crops become 3 equal channels)."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise InputError(name, "cannot decode image bytes")
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB)


def pack(
    source: str | Path,
    out: str | Path,
    shard_mb: float = 64.0,
    line_height: int = 0,
    page_side: int = 0,
    limit: int = 0,
    codec: str | None = None,
) -> list[Path]:
    """Pack a lines .jsonl or a COCO .json into `out/shard-NNNNN.parquet`; returns the shard paths.

    Image bytes are kept as stored unless `line_height` / `page_side` ask for a smaller copy (re-encoded
    with `codec`: .png, .webp (quality 60) or .jpg (quality 90); by default lines as PNG, pages as JPEG,
    page boxes scaled with the image), e.g. to fit a size budget. `limit`: a seeded sample of that many
    lines or pages.
    """
    source = Path(source)
    if source.suffix == ".jsonl":
        rows = _line_rows(source, line_height, limit, codec or ".png")
        columns = LINE_COLUMNS
    elif source.suffix == ".json":
        rows = _page_rows(source, page_side, limit, codec or ".jpg")
        columns = PAGE_COLUMNS
    else:
        raise InputError(source, "expected a lines .jsonl or a COCO .json")
    return _write_shards(rows, columns, Path(out), shard_mb)


def _write_shards(rows: Iterator[dict], columns: tuple[str, ...], out: Path, shard_mb: float) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    shards: list[Path] = []
    batch: list[dict] = []
    size = 0

    def flush() -> None:
        nonlocal batch, size
        if not batch:
            return
        table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in batch])
        path = out / f"shard-{len(shards):05d}.parquet"
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        write_atomic(path, sink.getvalue().to_pybytes())
        shards.append(path)
        batch, size = [], 0

    for row in rows:
        batch.append(row)
        size += len(row["image"])
        if size >= shard_mb * 1e6:
            flush()
    flush()
    if not shards:
        raise InputError(out, "nothing to pack")
    return shards


def _encoded(path: Path, resize: tuple[int, int] | None, ext: str) -> bytes:
    if resize is None:
        return path.read_bytes()
    image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if image is None:
        raise InputError(path, "cannot read image")
    image = cv2.resize(image, resize, interpolation=cv2.INTER_AREA)
    params = {".jpg": [cv2.IMWRITE_JPEG_QUALITY, 90], ".webp": [cv2.IMWRITE_WEBP_QUALITY, 60]}.get(ext, [])
    ok, data = cv2.imencode(ext, image, params)
    if not ok:
        raise InputError(path, "cannot encode image")
    return data.tobytes()


def _line_rows(manifest: Path, line_height: int, limit: int, codec: str) -> Iterator[dict]:
    records = _sample(read_manifest(manifest), limit)
    for rec in records:
        w, h = rec.get("width"), rec.get("height")
        if not (isinstance(w, int) and isinstance(h, int)):
            probe = cv2.imread(rec["image"], cv2.IMREAD_GRAYSCALE)
            if probe is None:
                raise InputError(rec["image"], "cannot read image")
            h, w = probe.shape
        resize = None
        if line_height and h > line_height:
            w, h = max(1, round(w * line_height / h)), line_height
            resize = (w, h)
        yield {
            **{k: rec.get(k) for k in LINE_COLUMNS},
            "image": _encoded(Path(rec["image"]), resize, codec),
            "width": w,
            "height": h,
            "case_sensitive": rec.get("case_sensitive", True) is not False,
        }


def _sample(items: list, limit: int) -> list:
    """A seeded sample of `limit` items in their original order (all of them when limit is 0)."""
    if 0 < limit < len(items):
        picked = np.random.default_rng(0).choice(len(items), limit, replace=False)
        return [items[i] for i in sorted(picked)]
    return items


def _page_rows(coco_file: Path, page_side: int, limit: int, codec: str) -> Iterator[dict]:
    try:
        coco = json.loads(coco_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(coco_file, f"cannot read COCO json ({exc})") from None
    by_image: dict[int, list[dict]] = {}
    for ann in coco.get("annotations", []):
        by_image.setdefault(ann["image_id"], []).append(ann)
    for im in _sample(coco.get("images", []), limit):
        w, h = im["width"], im["height"]
        scale = min(1.0, page_side / max(w, h)) if page_side else 1.0
        anns = by_image.get(im["id"], [])
        if scale < 1.0:
            w, h = round(w * scale), round(h * scale)
            anns = [_scaled(a, scale) for a in anns]
        yield {
            **{k: im.get(k) for k in PAGE_COLUMNS},
            "image": _encoded(coco_file.parent / im["file_name"], (w, h) if scale < 1.0 else None, codec),
            "width": w,
            "height": h,
            "annotations": json.dumps(anns, ensure_ascii=False),
        }


def _scaled(ann: dict, scale: float) -> dict:
    out = dict(ann)
    out["bbox"] = [round(v * scale, 1) for v in ann["bbox"]]
    out["segmentation"] = [[round(v * scale, 1) for v in poly] for poly in ann.get("segmentation", [])]
    out["area"] = round(ann.get("area", 0) * scale * scale, 1)
    return out
