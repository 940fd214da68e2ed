"""Import line-level ground truth into the two formats training reads: a COCO page set and a line manifest.

Every input file is checked against a list of reserved sha256 hashes (evaluation pages) and refused on a
match, and every image against the list's perceptual hashes, so a resized or re-encoded copy of an
evaluation page is refused too (ocrkit/data/ground_truth/phash.py); identical images reached twice are
imported once. Splits are by document (a hash of its path),
never by line, so no page contributes to both train and val. Bad input is one warning naming the file;
the import goes on.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ocrkit.data.ground_truth.phash import NearDuplicates, phash
from ocrkit.data.ground_truth.readers import FORMATS, GtPage, read_page, sniff_format
from ocrkit.data.ground_truth.text_rules import TextRules
from ocrkit.errors import InputError, OcrkitError
from ocrkit.io import load_image
from ocrkit.outputs import write_atomic

CROP_PADDING = 3  # px around the polygon's box, as in the evaluation crops
MAX_PAGE_SIDE = 2000  # stored page images: long side capped here (boxes scaled with it)


@dataclass
class ImportSettings:
    source: str = ""  # provenance recorded on every page and line, e.g. "owner/name@commit"
    license: str = ""
    subset: str = ""  # the name lines carry (defaults to the source's last path part)
    fmt: str = "auto"  # auto | page | alto | sroie | lines
    rules: TextRules = field(default_factory=TextRules)
    val_share: float = 0.1
    split_by: str = "file"  # file | folder: which path decides a document's split
    split: str = ""  # train | val: every document goes there (no hash split); "" = split by val_share
    max_page_side: int = MAX_PAGE_SIDE
    root: Path | None = None  # paths in provenance are relative to this


@dataclass
class ImportSummary:
    pages: Counter = field(default_factory=Counter)  # per subset
    lines: Counter = field(default_factory=Counter)
    boxes: Counter = field(default_factory=Counter)
    chars: Counter = field(default_factory=Counter)
    refused: int = 0  # reserved for evaluation
    duplicates: int = 0
    failed: int = 0  # files that could not be read
    dropped: Counter = field(default_factory=Counter)  # reason → lines
    documents: Counter = field(default_factory=Counter)  # (subset, split) → pages or line images imported

    def lines_out(self) -> list[str]:
        out = [
            f"{s}: {self.pages[s]} pages, {self.boxes[s]} line boxes, {self.lines[s]} line crops, "
            f"{self.chars[s]} characters"
            for s in sorted(set(self.pages) | set(self.lines))
        ]
        out.append(
            f"refused (reserved for evaluation): {self.refused}; duplicates skipped: {self.duplicates}; "
            f"unreadable files: {self.failed}"
        )
        out += [f"dropped lines, {reason}: {n}" for reason, n in sorted(self.dropped.items())]
        return out

    @property
    def imported(self) -> int:
        return sum(self.pages.values()) + sum(self.lines.values())


def read_reserved(path: str | Path | None) -> set[str]:
    """sha256 hashes from a `sha256<TAB>kind<TAB>source` file (comments and the header skipped)."""
    if path is None:
        return set()
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "reserved list not found")
    hashes = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        first = line.split("\t", 1)[0].strip().lower()
        if re.fullmatch(r"[0-9a-f]{64}", first):
            hashes.add(first)
    return hashes


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def find_annotations(
    sources: Iterable[str | Path], fmt: str = "auto", keep: Callable[[Path], bool] | None = None
) -> tuple[list[tuple[Path, str]], int]:
    """(annotation file, format) for every file under `sources` that `keep` accepts (all by default); also
    the count of XML files in neither format."""
    if fmt != "auto" and fmt not in FORMATS:
        raise OcrkitError(f"--format: expected auto or one of {', '.join(FORMATS)}, got {fmt!r}")
    found, unknown = [], 0
    for src in sources:
        src = Path(src)
        if not src.exists():
            _warn(src, "not found")
            continue
        files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
        for path in files:
            if keep is not None and not keep(path):
                continue
            detected = sniff_format(path)
            if detected is None:
                unknown += path.suffix.lower() == ".xml"
                if path.suffix.lower() == ".xml":
                    _warn(path, "unknown format (neither PAGE-XML nor ALTO)")
                continue
            if fmt != "auto" and detected != fmt:
                continue
            found.append((path, detected))
    return found, unknown


class Importer:
    """Writes `out/pages/{coco.json,images/}` and `out/lines/{lines.jsonl,<crops>}` over `add` calls."""

    def __init__(
        self,
        out: str | Path,
        reserved: set[str],
        warn: Callable[[str], None] | None = None,
        near: NearDuplicates | None = None,
    ) -> None:
        self.out = Path(out)
        self.reserved = reserved
        self.near = near or NearDuplicates()  # perceptual hashes of the reserved pages
        self.warn = warn or (lambda msg: print(f"warning: {msg}", file=sys.stderr))
        self.summary = ImportSummary()
        self._seen: set[str] = set()
        self._coco: dict = {"images": [], "annotations": [], "categories": [{"id": 1, "name": "text_line"}]}
        self._lines: list[dict] = []

    def add(self, files: list[tuple[Path, str]], settings: ImportSettings) -> None:
        for path, fmt in files:
            try:
                page = read_page(path, fmt)
                for problem in page.problems:
                    self.warn(f"{problem} (skipped)")
                self._add_page(page, settings)
            except InputError as exc:
                self.summary.failed += 1
                self.warn(str(exc))

    # -- one page -------------------------------------------------------------------------------------------
    def _add_page(self, page: GtPage, s: ImportSettings) -> None:
        hashes = [sha256_file(page.image), sha256_file(page.annotation)]
        if any(h in self.reserved for h in hashes):
            self.summary.refused += 1
            return
        if hashes[0] in self._seen:
            self.summary.duplicates += 1
            return
        self._seen.add(hashes[0])
        rel = self._relative(page.annotation, s)
        subset = s.subset or "imported"
        split = s.split or document_split(rel, s)
        provenance = {"source": f"{s.source}:{self._relative(page.image, s)}", "license": s.license}
        image = load_image(page.image)  # RGB, EXIF-rotated, 16-bit and palette images converted
        if self.near.matches(phash(image)):
            self.summary.refused += 1
            self.warn(
                f"{page.image}: a copy of a page reserved for evaluation (resized or re-encoded); refused"
            )
            return
        name = _safe_name(rel, hashes[0])
        if page.is_line_image:
            self._add_line_image(page, image, name, subset, split, provenance, s)
            return
        h, w = image.shape[:2]
        lines = []
        for line in page.lines:
            xs, ys = [p[0] for p in line.polygon], [p[1] for p in line.polygon]
            x0, y0, x1, y1 = max(min(xs), 0), max(min(ys), 0), min(max(xs), w), min(max(ys), h)
            if x1 - x0 < 2 or y1 - y0 < 2:
                self.summary.dropped["polygon outside the image or degenerate"] += 1
                continue
            text, reason = s.rules.apply(line.text)
            if reason:
                self.summary.dropped[reason] += 1
            lines.append((line, (x0, y0, x1, y1), text))
        if not lines:
            self.warn(f"{page.annotation}: no usable line")
            return
        self._write_page(image, name, lines, subset, split, provenance, s)
        self._write_crops(image, name, lines, subset, split, provenance, s)
        self.summary.pages[subset] += 1
        self.summary.documents[subset, split] += 1

    def _write_page(self, image, name, lines, subset, split, provenance, s: ImportSettings) -> None:
        h, w = image.shape[:2]
        scale = min(1.0, s.max_page_side / max(h, w))
        stored = (
            image
            if scale == 1.0
            else cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
        )
        file_name = f"images/{name}.jpg"
        _write_image(self.out / "pages" / file_name, stored, quality=90)
        image_id = len(self._coco["images"]) + 1
        self._coco["images"].append(
            {
                "id": image_id,
                "file_name": file_name,
                "width": stored.shape[1],
                "height": stored.shape[0],
                "scale": scale,
                "subset": subset,
                "split": split,
                **provenance,
            }
        )
        for line, (x0, y0, x1, y1), text in lines:
            polygon = [round(v * scale, 1) for point in line.polygon for v in point]
            self._coco["annotations"].append(
                {
                    "id": len(self._coco["annotations"]) + 1,
                    "image_id": image_id,
                    "category_id": 1,
                    "bbox": [round(v * scale, 1) for v in (x0, y0, x1 - x0, y1 - y0)],
                    "area": round((x1 - x0) * (y1 - y0) * scale * scale, 1),
                    "segmentation": [polygon] if len(polygon) >= 6 else [],
                    "iscrowd": 0,
                    "text": text,
                }
            )
            self.summary.boxes[subset] += 1

    def _write_crops(self, image, name, lines, subset, split, provenance, s: ImportSettings) -> None:
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        h, w = gray.shape
        for n, (_, (x0, y0, x1, y1), text) in enumerate(lines):
            if text is None:
                continue
            box = (
                int(max(x0 - CROP_PADDING, 0)),
                int(max(y0 - CROP_PADDING, 0)),
                int(min(np.ceil(x1) + CROP_PADDING, w)),
                int(min(np.ceil(y1) + CROP_PADDING, h)),
            )
            crop = gray[box[1] : box[3], box[0] : box[2]]
            self._add_line(crop, f"{subset}/{name}_{n:03d}.png", text, subset, split, provenance, s)

    def _add_line_image(self, page, image, name, subset, split, provenance, s: ImportSettings) -> None:
        text, reason = s.rules.apply(page.lines[0].text)
        if reason:
            self.summary.dropped[reason] += 1
            return
        if text is None:
            return
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        self._add_line(gray, f"{subset}/{name}.png", text, subset, split, provenance, s)
        self.summary.documents[subset, split] += 1

    def _add_line(self, crop, rel: str, text: str, subset, split, provenance, s: ImportSettings) -> None:
        _write_image(self.out / "lines" / rel, crop)
        record = {
            "image": rel,
            "text": text,
            "subset": subset,
            "split": split,
            "width": int(crop.shape[1]),
            "height": int(crop.shape[0]),
            **provenance,
        }
        if not s.rules.case_sensitive:
            record["case_sensitive"] = False
        self._lines.append(record)
        self.summary.lines[subset] += 1
        self.summary.chars[subset] += len(text)

    # -- output ---------------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Write coco.json and lines.jsonl (all, per split, per subset and split) atomically."""
        if self._coco["images"]:
            pages = self.out / "pages"
            write_atomic(pages / "coco.json", json.dumps(self._coco, ensure_ascii=False))
            subsets = sorted({im["subset"] for im in self._coco["images"]})
            for split in ("train", "val"):
                self._write_coco(pages / f"coco_{split}.json", lambda im, split=split: im["split"] == split)
                for subset in subsets:  # per-subset page sets, for weighted mixtures
                    self._write_coco(
                        pages / f"{subset}_{split}.json",
                        lambda im, split=split, subset=subset: (im["split"], im["subset"]) == (split, subset),
                    )
        if self._lines:
            lines = self.out / "lines"
            write_atomic(lines / "lines.jsonl", _jsonl(self._lines))
            subsets = sorted({r["subset"] for r in self._lines})
            for split in ("train", "val"):
                chosen = [r for r in self._lines if r["split"] == split]
                if chosen:  # an empty manifest would only fail later, in a trainer
                    write_atomic(lines / f"{split}.jsonl", _jsonl(chosen))
                for subset in subsets:  # per-subset manifests, for weighted mixtures
                    chosen = [r for r in self._lines if r["split"] == split and r["subset"] == subset]
                    if chosen:
                        write_atomic(lines / f"{subset}_{split}.jsonl", _jsonl(chosen))

    def _write_coco(self, path: Path, keep_image) -> None:
        images = [im for im in self._coco["images"] if keep_image(im)]
        if not images:
            return
        ids = {im["id"] for im in images}
        part = {
            **self._coco,
            "images": images,
            "annotations": [a for a in self._coco["annotations"] if a["image_id"] in ids],
        }
        write_atomic(path, json.dumps(part, ensure_ascii=False))

    def _relative(self, path: Path, s: ImportSettings) -> str:
        if s.root is not None:
            try:
                return path.resolve().relative_to(s.root.resolve()).as_posix()
            except ValueError:
                pass
        return path.as_posix()


def document_split(rel_path: str, s: ImportSettings) -> str:
    """ "train" or "val" from a hash of the document's path: stable across runs and machines."""
    key = rel_path.rsplit("/", 1)[0] if s.split_by == "folder" and "/" in rel_path else rel_path
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "val" if bucket < s.val_share else "train"


def _safe_name(rel: str, digest: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(rel).name.split(".")[0])[:60] or "page"
    return f"{stem}_{digest[:8]}"


def _write_image(path: Path, image: np.ndarray, quality: int = 95) -> None:
    """Plain write: images become visible to training only through the manifests written last, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    bgr = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if path.suffix.lower() == ".jpg" else []
    if not cv2.imwrite(str(path), bgr, params):
        raise InputError(path, "could not write image")


def _jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _warn(path: Path, problem: str) -> None:
    print(f"warning: {path}: {problem}", file=sys.stderr)
