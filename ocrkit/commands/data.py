"""`ocrkit data import|prepare|pack|reserve`: real ground truth into training formats, packed shards, and
the reserved list of evaluation files that every import refuses."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from ocrkit.commands.options import add_provenance_options, folder, non_negative_int, positive_float
from ocrkit.util.errors import OcrkitError

# The list of evaluation files that no importer may take, when --reserved is not given.
RESERVED_ENV = "OCRKIT_RESERVED"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="import ground truth (PAGE-XML, ALTO, SROIE, line pairs); pack shards")
    kinds = p.add_subparsers(dest="what", metavar="import|prepare|pack|reserve", required=True)

    q = kinds.add_parser("import", help="files or folders of ground truth → COCO pages + line crops")
    q.add_argument("sources", nargs="+", type=Path, metavar="SRC", help="ground-truth files or folders")
    q.add_argument(
        "--out", type=Path, required=True, help="dataset folder to write (pages, crops, manifests)"
    )
    add_provenance_options(q, "SRC")
    q.add_argument(
        "--val-share",
        type=float,
        default=0.1,
        help="share of documents in the val split (0: none, no val files)",
    )
    _reserved_arg(q)
    q.set_defaults(func=run_import)

    q = kinds.add_parser("prepare", help="import every source of a sources file found in --clones")
    q.add_argument("sources_file", type=Path, metavar="SOURCES_YAML", help="YAML list of sources to import")
    q.add_argument("--clones", type=Path, required=True, help="folder of git clones (owner+name or name)")
    q.add_argument("--out", type=Path, required=True, help="dataset folder to write, one subset per source")
    _reserved_arg(q)
    q.set_defaults(func=run_prepare)

    q = kinds.add_parser("pack", help="a line manifest or COCO page set → Parquet shards")
    q.add_argument("source", type=Path, metavar="SRC", help="lines .jsonl or COCO .json")
    q.add_argument("--out", type=folder, required=True, help="folder to write the Parquet shards into")
    q.add_argument("--shard-mb", type=positive_float, default=64.0, help="target shard size in MB")
    q.add_argument(
        "--line-height",
        type=non_negative_int,
        default=0,
        help="lines: re-encode crops at most this tall (0 = as stored)",
    )
    q.add_argument(
        "--page-side",
        type=non_negative_int,
        default=0,
        help="pages: re-encode with this long side (0 = as stored)",
    )
    q.add_argument(
        "--limit",
        type=non_negative_int,
        default=0,
        help="a seeded sample of this many lines or pages (0 = all)",
    )
    q.add_argument(
        "--codec",
        choices=(".png", ".webp", ".jpg"),
        help="re-encoding format (default: .png for lines, .jpg for pages; .webp is the smallest)",
    )
    q.set_defaults(func=run_pack)

    q = kinds.add_parser(
        "reserve", help="evaluation files → a reserved list (sha256 + perceptual hash) that imports refuse"
    )
    q.add_argument(
        "files",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="images, ground-truth files, or folders (recursive)",
    )
    q.add_argument("--out", type=Path, required=True, help="the reserved list to write (.tsv)")
    q.add_argument("--kind", default="held-out", help="the kind column, e.g. dev or held-out")
    q.add_argument("--source", default="", help="the source column's prefix, e.g. owner/name@commit")
    q.set_defaults(func=run_reserve)


def _reserved_arg(q: argparse.ArgumentParser) -> None:
    choice = q.add_mutually_exclusive_group()
    choice.add_argument(
        "--reserved",
        type=Path,
        metavar="FILE",
        help=f"sha256 list of evaluation files to refuse (default: ${RESERVED_ENV}; "
        "with neither, --no-reserved is required)",
    )
    choice.add_argument(
        "--no-reserved",
        action="store_true",
        help="import without a reserved list (only for data that no evaluation set was drawn from)",
    )


def reserved_path(args: argparse.Namespace) -> Path | None:
    """The reserved list to refuse. Importing without one must be asked for: an evaluation page that
    slips into training unnoticed inflates every later score, and a warning scrolls past in a long import."""
    if args.reserved is not None:
        return args.reserved
    if args.no_reserved:
        return None
    if os.environ.get(RESERVED_ENV):
        return Path(os.environ[RESERVED_ENV])
    raise OcrkitError(
        f"no reserved list of evaluation files: pass --reserved FILE, set ${RESERVED_ENV}, "
        "or pass --no-reserved to import without one"
    )


def reserved_hashes(args: argparse.Namespace) -> set[str]:
    """The reserved hashes, with one line saying how many were read from which list."""
    from ocrkit.data.reserved import read_reserved

    path = reserved_path(args)
    if path is None:
        return set()
    hashes = read_reserved(path)
    print(f"reserved list: {len(hashes)} hashes read from {path}")
    return hashes


def run_import(args: argparse.Namespace) -> int:
    from ocrkit.data.ground_truth.card import import_card
    from ocrkit.data.ground_truth.importer import (
        Importer,
        ImportSettings,
        check_subset,
        find_annotations,
        subset_from_folder,
    )
    from ocrkit.data.ground_truth.reserve import describe_reserved
    from ocrkit.data.ground_truth.text_rules import TextRules
    from ocrkit.pages.outputs import write_atomic

    if not 0.0 <= args.val_share < 1.0:
        raise OcrkitError(f"--val-share: expected a share in [0, 1), got {args.val_share}")
    started = time.perf_counter()
    subset = check_subset(args.subset) if args.subset else subset_from_folder(args.sources[0])
    if not args.subset:
        print(f"subset: {subset} (the folder's name; --subset NAME to choose another)")
    importer = Importer(args.out, reserved_hashes(args), near=reserved_phashes(args))
    files, refused = find_annotations(args.sources, args.format)
    importer.summary.failed.update(refused)
    if not files and not refused:
        raise OcrkitError(f"no ground truth found in {', '.join(map(str, args.sources))}")
    settings = ImportSettings(
        source=args.source or args.sources[0].resolve().name,
        license=args.license,
        subset=subset,
        fmt=args.format,
        rules=TextRules(case_sensitive=not args.case_insensitive),
        val_share=args.val_share,
        root=args.sources[0] if args.sources[0].is_dir() else args.sources[0].parent,
    )
    importer.add(files, settings)
    importer.finish()
    if not any(split == "val" for _, split in importer.summary.documents):
        print("no document in the val split (--val-share): no val files written")
    card = import_card(importer, [settings], describe_reserved(reserved_path(args), importer))
    write_atomic(args.out / "DATA_CARD.md", card)
    return _report(importer, started)


def reserved_phashes(args: argparse.Namespace):
    """The reserved list's perceptual hashes (none in a list of sha256 only), with one line if any."""
    from ocrkit.data.ground_truth.phash import read_reserved_phashes

    near = read_reserved_phashes(reserved_path(args))
    if len(near):
        copies = "resized, re-encoded, bordered, turned, cropped or brightened copies are refused too"
        print(f"reserved list: {len(near)} perceptual hashes ({copies})")
    return near


def run_prepare(args: argparse.Namespace) -> int:
    from ocrkit.data.ground_truth.sources import prepare

    started = time.perf_counter()
    importer = prepare(
        args.sources_file, args.clones, args.out, reserved_hashes(args), reserved_phashes(args)
    )
    return _report(importer, started)


def _report(importer, started: float) -> int:
    for line in importer.summary.lines_out():
        print(line)
    print(f"written to {importer.out} in {time.perf_counter() - started:.0f} s")
    return 0 if importer.summary.imported else 1


def run_reserve(args: argparse.Namespace) -> int:
    from ocrkit.data.ground_truth.reserve import reserve_rows, write_reserved

    rows = reserve_rows(args.files, args.kind, args.source)
    if not rows:
        raise OcrkitError(f"no readable image or ground-truth file in {', '.join(map(str, args.files))}")
    write_reserved(args.out, rows)
    images = sum(1 for row in rows if row[3])
    print(
        f"{args.out}: {images} images (sha256 and perceptual hash), {len(rows) - images} ground-truth files"
    )
    return 0


def run_pack(args: argparse.Namespace) -> int:
    from ocrkit.data.packed import pack

    shards = pack(
        args.source, args.out, args.shard_mb, args.line_height, args.page_side, args.limit, args.codec
    )
    print(f"{len(shards)} shard(s) in {args.out}")
    return 0
