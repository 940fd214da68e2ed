"""The user's ground truth for `ocrkit finetune`: imported once, split by document, with its data card.

Validation documents are either given (`--val`) or chosen from the training paths: the `val_share` of
documents with the lowest hash of their path, at least one, so even five pages give a validation page
and the same files always give the same split.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ocrkit.data.ground_truth.card import import_card
from ocrkit.data.ground_truth.importer import Importer, ImportSettings, ImportSummary, find_annotations
from ocrkit.data.ground_truth.text_rules import TextRules
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import OcrkitError


@dataclass
class UserData:
    """What the import wrote: COCO page sets and line manifests per split (None where there is none)."""

    root: Path
    train_pages: Path | None
    val_pages: Path | None
    train_lines: Path | None
    val_lines: Path | None
    test_pages: Path | None
    summary: ImportSummary
    card: str


@dataclass
class Provenance:
    subset: str
    license: str = ""
    source: str = ""
    fmt: str = "auto"
    case_sensitive: bool = True


def split_files(files: list[tuple[Path, str]], val_share: float) -> tuple[list, list]:
    """(train, val): the `val_share` of files (at least one, never all) with the lowest path hash."""
    if len(files) < 2:
        raise OcrkitError(
            f"{len(files)} annotated document(s): at least 2 are needed to keep one for validation, "
            "or pass --val PATH"
        )
    ranked = sorted(files, key=lambda f: hashlib.sha256(f[0].as_posix().encode("utf-8")).hexdigest())
    k = min(len(files) - 1, max(1, round(val_share * len(files))))
    val = {f[0] for f in ranked[:k]}
    return [f for f in files if f[0] not in val], [f for f in files if f[0] in val]


def import_user_data(
    paths: list[Path],
    val_paths: list[Path],
    out: Path,
    importer: Importer,
    provenance: Provenance,
    val_share: float,
    reserved: str,
    test_paths: list[Path] | None = None,
) -> UserData:
    """Import `paths` (and `val_paths`, `test_paths`) into `out` through `importer` (which holds the
    reserved list). Test pages come first: a page given twice lands in test only."""
    files, refused = find_annotations(paths, provenance.fmt)
    importer.summary.failed.update(refused)
    if not files:
        why = f" ({sum(refused.values())} files refused, each named above)" if refused else ""
        raise OcrkitError(f"no usable ground truth in {', '.join(map(str, paths))}{why}")
    if val_paths:
        val_files, refused = find_annotations(val_paths, provenance.fmt)
        importer.summary.failed.update(refused)
        if not val_files:
            why = f" ({sum(refused.values())} files refused, each named above)" if refused else ""
            raise OcrkitError(f"no usable ground truth in --val {', '.join(map(str, val_paths))}{why}")
    else:
        files, val_files = split_files(files, val_share)

    def settings_for(split: str, where: list[Path]) -> ImportSettings:
        return ImportSettings(
            source=provenance.source or where[0].resolve().name,
            license=provenance.license,
            subset=provenance.subset,
            fmt=provenance.fmt,
            rules=TextRules(case_sensitive=provenance.case_sensitive),
            split=split,
            root=where[0] if where[0].is_dir() else where[0].parent,
        )

    if test_paths:
        test_files, refused = find_annotations(test_paths, provenance.fmt)
        importer.summary.failed.update(refused)
        if not test_files:
            raise OcrkitError(f"no usable ground truth in --test {', '.join(map(str, test_paths))}")
        importer.add(test_files, settings_for("test", test_paths))
    # validation next: a page given in both lands in val only (the second import skips it as a duplicate)
    val_settings = settings_for("val", val_paths or paths)
    importer.add(val_files, val_settings)
    while not val_paths and not _imported(importer, "val") and len(files) > 1:
        # every document kept for validation was refused (a reserved page, a bad file): keep another
        importer.add([files.pop()], val_settings)
    train_settings = settings_for("train", paths)
    importer.add(files, train_settings)
    settings = [val_settings, train_settings]
    importer.finish()
    card = import_card(importer, settings[1:], reserved)
    write_atomic(out / "DATA_CARD.md", card)

    def existing(path: Path) -> Path | None:
        return path if path.is_file() else None

    return UserData(
        out,
        existing(out / "pages" / "coco_train.json"),
        existing(out / "pages" / "coco_val.json"),
        existing(out / "lines" / "train.jsonl"),
        existing(out / "lines" / "val.jsonl"),
        existing(out / "pages" / "coco_test.json"),
        importer.summary,
        card,
    )


def _imported(importer: Importer, split: str) -> int:
    """Documents the importer has taken into `split` so far."""
    return sum(n for (_, each), n in importer.summary.documents.items() if each == split)
