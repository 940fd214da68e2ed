"""Import line-level ground truth into the two formats training reads: a COCO page set and a line manifest.

Every input file is checked against a list of reserved sha256 hashes (evaluation pages) and refused on a
match, and every image against the list's perceptual hashes, so a resized, re-encoded, bordered or turned
copy of an evaluation page is refused too (ocrkit/data/ground_truth/phash.py); identical images reached
twice are imported once. Splits are by document (a hash of its path), never by line, so no page contributes to
both train and val. Bad input is one warning naming the file, counted by reason; the import goes on and
always writes the manifests of what it accepted. Every file read stays inside its source folder
(paths.guard) and every file written stays inside `out`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ocrkit.data.ground_truth.paths import guard
from ocrkit.data.ground_truth.phash import NearDuplicates
from ocrkit.data.ground_truth.readers import FORMATS, GtLine, GtPage, read_page, sniff_format
from ocrkit.data.ground_truth.text_rules import TextRules
from ocrkit.images.io import load_image
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import InputError, OcrkitError

CROP_PADDING = 3  # px around the polygon's box, as in the evaluation crops
MAX_PAGE_SIDE = 2000  # stored page images: long side capped here (boxes scaled with it)
SAME_ASPECT = 0.01  # an annotation stating this close an aspect (and another size) was made before a resize
MIN_INSIDE = 0.5  # a line box with less of its area inside the page is impossible geometry: dropped
# subset names become folder and file names under --out: no separators, no "..", no leading dot
SUBSET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

ANNOTATION_SUFFIXES = (".xml", ".txt", ".csv")
# (annotation file, its format, the source folder it was found in: everything it names stays inside)
Annotation = tuple[Path, str, Path]

SPLITS = ("train", "val", "test")  # test: `ocrkit finetune --test`, scored once at the end, never chosen on


@dataclass
class ImportSettings:
    source: str = ""  # provenance recorded on every page and line, e.g. "owner/name@commit"
    license: str = ""
    subset: str = ""  # the name lines carry (defaults to the source's last path part)
    fmt: str = "auto"  # auto | page | alto | sroie | lines
    rules: TextRules = field(default_factory=TextRules)
    val_share: float = 0.1
    split_by: str = "file"  # file | folder: which path decides a document's split
    split: str = ""  # train | val | test: every document goes there (no hash split); "" = by val_share
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
    failed: Counter = field(default_factory=Counter)  # reason → files that could not be used
    dropped: Counter = field(default_factory=Counter)  # reason → lines
    documents: Counter = field(default_factory=Counter)  # (subset, split) → pages or line images imported

    def totals(self) -> dict[str, int]:
        """Every count summed over subsets and reasons (data cards, reports, per-source deltas)."""
        return {
            "pages": sum(self.pages.values()),
            "lines": sum(self.lines.values()),
            "boxes": sum(self.boxes.values()),
            "chars": sum(self.chars.values()),
            "refused": self.refused,
            "duplicates": self.duplicates,
            "failed": sum(self.failed.values()),
            "dropped": sum(self.dropped.values()),
        }

    def lines_out(self) -> list[str]:
        out = [
            f"{s}: {self.pages[s]} pages, {self.boxes[s]} line boxes, {self.lines[s]} line crops, "
            f"{self.chars[s]} characters"
            for s in sorted(set(self.pages) | set(self.lines))
        ]
        out.append(
            f"refused (reserved for evaluation): {self.refused}; duplicates skipped: {self.duplicates}; "
            f"unreadable files: {sum(self.failed.values())}"
        )
        out += [f"unreadable files, {reason}: {n}" for reason, n in sorted(self.failed.items())]
        out += [f"dropped lines, {reason}: {n}" for reason, n in sorted(self.dropped.items())]
        return out

    @property
    def imported(self) -> int:
        return sum(self.pages.values()) + sum(self.lines.values())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def reason_of(problem: str) -> str:
    """The counted reason of a problem message: its words before any parenthesised detail."""
    return problem.split(" (", 1)[0]


def find_annotations(
    sources: Iterable[str | Path], fmt: str = "auto", keep: Callable[[Path], bool] | None = None
) -> tuple[list[Annotation], Counter]:
    """Every annotation file under `sources` that `keep` accepts (all by default), with its format and
    source folder; also the files refused on the way (reason → count), each warned about by name: a
    symlink leading outside its source folder, an unreadable file, an XML file in neither format."""
    if fmt != "auto" and fmt not in FORMATS:
        raise OcrkitError(f"--format: expected auto or one of {', '.join(FORMATS)}, got {fmt!r}")
    found: list[Annotation] = []
    refused: Counter = Counter()
    for src in sources:
        src = Path(src)
        if not src.exists():
            _warn(src, "not found")
            refused["not found"] += 1
            continue
        root = src if src.is_dir() else src.parent
        files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
        for path in files:
            if path.suffix.lower() not in ANNOTATION_SUFFIXES or (keep is not None and not keep(path)):
                continue  # images are read through the annotation that names them
            try:
                detected = sniff_format(guard(root, path), root)
            except InputError as exc:
                _warn(path, f"{exc.problem} (skipped)")
                refused[reason_of(exc.problem)] += 1
                continue
            if detected is None:
                if path.suffix.lower() == ".xml":
                    _warn(path, "unknown format (neither PAGE-XML nor ALTO)")
                    refused["unknown format"] += 1
                continue
            if fmt != "auto" and detected != fmt:
                continue
            found.append((path, detected, root))
    return found, refused


def check_subset(name: str) -> str:
    """`name` if it is safe as a folder and file name under --out; else OcrkitError."""
    if not SUBSET_NAME.fullmatch(name):
        raise OcrkitError(
            f"subset {name!r}: use up to 64 letters, digits, '_', '-' or '.', starting with a letter or "
            "digit (it names folders under --out)"
        )
    return name


def subset_from_folder(folder: Path) -> str:
    """A valid subset name made from a folder's name (the default when none is given)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", folder.resolve().name).lstrip("._-")[:64] or "imported"


def line_box(
    polygon: list[tuple[float, float]], width: int, height: int
) -> tuple[tuple[float, float, float, float] | None, str | None]:
    """The line's box clipped to the page, or (None, reason) when its geometry is impossible: a
    coordinate that is not finite, a box thinner than 2 px, or one mostly outside the page."""
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    if not all(math.isfinite(v) for v in (*xs, *ys)):
        return None, "non-finite coordinates"
    x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None, "degenerate box"
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    kept = max(cx1 - cx0, 0) * max(cy1 - cy0, 0)
    if cx1 - cx0 < 2 or cy1 - cy0 < 2 or kept < MIN_INSIDE * (x1 - x0) * (y1 - y0):
        return None, "box mostly outside the image"
    return (cx0, cy0, cx1, cy1), None


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

    def add(self, files: list[Annotation], settings: ImportSettings) -> None:
        """Import each annotation file; a file that cannot be used is one warning, counted by reason."""
        check_subset(settings.subset or "imported")
        for path, fmt, root in files:
            try:
                page = read_page(path, fmt, root)
                for reason, problem in page.problems:
                    self.summary.dropped[reason] += 1
                    self.warn(f"{problem} (skipped)")
                self._add_page(page, settings, root)
            except InputError as exc:
                self.summary.failed[reason_of(exc.problem)] += 1
                self.warn(str(exc))
            except OSError as exc:  # an I/O error on one file is that file's problem, not the import's
                self.summary.failed["cannot read"] += 1
                self.warn(f"{path}: cannot read ({exc.strerror or exc})")

    # -- one page -------------------------------------------------------------------------------------------
    def _add_page(self, page: GtPage, s: ImportSettings, root: Path) -> None:
        hashes = [sha256_file(guard(root, page.image)), sha256_file(guard(root, page.annotation))]
        if any(h in self.reserved for h in hashes):
            self.summary.refused += 1
            return
        if hashes[0] in self._seen:
            self.summary.duplicates += 1
            return
        self._seen.add(hashes[0])
        rel = self._relative(page.annotation, s, root)
        subset = s.subset or "imported"
        split = s.split or document_split(rel, s)
        provenance = {"source": f"{s.source}:{self._relative(page.image, s, root)}", "license": s.license}
        image = load_image(page.image)  # RGB, EXIF-rotated, 16-bit and palette images converted
        if self.near.matches_picture(image):
            self.summary.refused += 1
            self.warn(
                f"{page.image}: a copy of a page reserved for evaluation (resized, re-encoded, bordered, "
                "turned or trimmed); refused"
            )
            return
        name = _safe_name(rel, hashes[0])
        if page.is_line_image:
            self._add_line_image(page, image, name, subset, split, provenance, s)
            return
        h, w = image.shape[:2]
        lines = []
        for line in fit_to_image(page, w, h, self.warn):
            box, reason = line_box(line.polygon, w, h)
            if box is None:
                self.summary.dropped[reason] += 1
                continue
            text, reason = s.rules.apply(line.text)
            if reason:
                self.summary.dropped[reason] += 1
            lines.append((line, box, text))
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
        self._write_image(self.out / "pages" / file_name, stored, quality=90)
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
                # the evaluation compares such pages lower-case, as the lines' records say for training
                **({} if s.rules.case_sensitive else {"case_sensitive": False}),
            }
        )
        for line, (x0, y0, x1, y1), text in lines:
            clipped = [(min(max(x, 0), w), min(max(y, 0), h)) for x, y in line.polygon]
            polygon = [round(v * scale, 1) for point in clipped for v in point]
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
        self._write_image(self.out / "lines" / rel, crop)
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
        """Write coco.json and lines.jsonl (all, per split, per subset and split) atomically; the two
        complete manifests are always written, empty when nothing was accepted."""
        pages = self.out / "pages"
        write_atomic(pages / "coco.json", json.dumps(self._coco, ensure_ascii=False))
        write_atomic(self.out / "lines" / "lines.jsonl", _jsonl(self._lines))
        if self._coco["images"]:
            subsets = sorted({im["subset"] for im in self._coco["images"]})
            for split in SPLITS:
                self._write_coco(pages / f"coco_{split}.json", lambda im, split=split: im["split"] == split)
                for subset in subsets:  # per-subset page sets, for weighted mixtures
                    self._write_coco(
                        pages / f"{subset}_{split}.json",
                        lambda im, split=split, subset=subset: (im["split"], im["subset"]) == (split, subset),
                    )
        if self._lines:
            lines = self.out / "lines"
            subsets = sorted({r["subset"] for r in self._lines})
            for split in SPLITS:
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

    def _relative(self, path: Path, s: ImportSettings, root: Path) -> str:
        """`path` relative to the settings' root, else to its source folder: never a machine path."""
        for base in (s.root, root):
            if base is not None:
                try:
                    return path.resolve().relative_to(base.resolve()).as_posix()
                except ValueError:
                    pass
        return path.name

    def _write_image(self, path: Path, image: np.ndarray, quality: int = 95) -> None:
        """Plain write (images become visible to training only through the manifests written last,
        atomically), and only inside `out`."""
        try:
            escapes = ".." in path.relative_to(self.out).parts
        except ValueError:
            escapes = True
        if escapes:
            raise OcrkitError(f"{path}: would be written outside {self.out}")
        path.parent.mkdir(parents=True, exist_ok=True)
        bgr = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
        params = [cv2.IMWRITE_JPEG_QUALITY, quality] if path.suffix.lower() == ".jpg" else []
        if not cv2.imwrite(str(path), bgr, params):
            raise InputError(path, "could not write image")


def fit_to_image(page: GtPage, width: int, height: int, warn: Callable[[str], None]) -> list[GtLine]:
    """The page's lines in its image's pixels. An annotation that states another image size belongs to
    another picture, or to this one before it was resized: with the same aspect its coordinates are
    scaled (one warning), otherwise the page is refused, since its boxes would cut another page's lines
    and label them with this text."""
    if page.stated_size is None:
        return page.lines
    stated_w, stated_h = page.stated_size
    if abs(stated_w - width) <= 1 and abs(stated_h - height) <= 1:
        return page.lines
    sizes = f"image {width}×{height}, annotation {stated_w:g}×{stated_h:g}"
    if abs(stated_h * width / stated_w - height) > max(2.0, SAME_ASPECT * height):
        raise InputError(page.annotation, f"image size differs from the annotation's ({sizes}: {page.image})")
    warn(f"{page.annotation}: coordinates scaled to the image ({sizes})")
    sx, sy = width / stated_w, height / stated_h
    return [GtLine([(x * sx, y * sy) for x, y in line.polygon], line.text) for line in page.lines]


def document_split(rel_path: str, s: ImportSettings) -> str:
    """ "train" or "val" from a hash of the document's path: stable across runs and machines."""
    key = rel_path.rsplit("/", 1)[0] if s.split_by == "folder" and "/" in rel_path else rel_path
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "val" if bucket < s.val_share else "train"


def _safe_name(rel: str, digest: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(rel).name.split(".")[0])[:60] or "page"
    return f"{stem}_{digest[:8]}"


def _jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _warn(path: Path, problem: str) -> None:
    print(f"warning: {path}: {problem}", file=sys.stderr)
