"""`ocrkit finetune`: fine-tune the detector and the recognizer on your own pages in one command.

`ocrkit train KIND -c CONFIG` (commands/train.py) is the full-control route: one model, one YAML config."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ocrkit.commands.data import _reserved_arg, reserved_path
from ocrkit.commands.options import add_folder_options, add_provenance_options, positive_float, positive_int
from ocrkit.util.errors import OcrkitError

PREFIXES = {"det": "detector", "rec": "recognizer"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "finetune",
        help="fine-tune both models on your ground truth within a time budget, with a before/after report",
        description="Import PAGE-XML / ALTO / SROIE / line-pair folders, fine-tune the detector and the "
        "recognizer from the shipped (or given) models within --minutes, and write OUT/detector, "
        "OUT/recognizer, their ONNX export OUT/onnx/ and OUT/REPORT.md.",
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="ground-truth files or folders")
    p.add_argument("--out", type=Path, required=True, help="a new (or empty) folder for everything written")
    p.add_argument("--minutes", type=positive_float, default=30.0, help="the whole budget, import to report")
    p.add_argument(
        "--val",
        nargs="+",
        type=Path,
        default=[],
        metavar="PATH",
        help="validation pages; default: a share of PATH",
    )
    p.add_argument(
        "--val-share", type=float, default=0.1, help="without --val: share of documents kept for it"
    )
    p.add_argument(
        "--test",
        nargs="+",
        type=Path,
        default=[],
        metavar="PATH",
        help="pages scored once at the end, before and after, and reported apart: nothing is chosen on them",
    )
    start = p.add_argument_group("models to start from (and the threads to train them with)")
    add_folder_options(start)
    start.add_argument(
        "--threads",
        type=positive_int,
        help="CPU threads for training and scoring; default: every core (os.cpu_count)",
    )
    p.add_argument("--only", choices=("det", "rec"), help="fine-tune one model; the other stays as it is")
    add_provenance_options(p, "PATH")
    p.add_argument(
        "--one-by-one",
        action="store_true",
        help="train the models one after the other with all threads (default: side by side, one thread each)",
    )
    p.add_argument("--no-export", action="store_true", help="skip the ONNX export")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="det.KEY=VALUE|rec.KEY=VALUE",
        help="override a recipe key, e.g. --set rec.train.lr=5e-5 --set det.finetune.synth_weight=0",
    )
    _reserved_arg(p)
    p.set_defaults(func=run)


def split_overrides(items: list[str]) -> dict[str, list[str]]:
    """`det.train.lr=1e-5` → {"detector": ["train.lr=1e-5"]}."""
    out: dict[str, list[str]] = {}
    for item in items:
        prefix, _, rest = item.partition(".")
        if prefix not in PREFIXES or not rest:
            raise OcrkitError(f"--set {item!r}: expected det.KEY=VALUE or rec.KEY=VALUE")
        out.setdefault(PREFIXES[prefix], []).append(rest)
    return out


def run(args: argparse.Namespace) -> int:
    started = time.time()  # the budget includes loading torch and the models' code (a minute on a busy CPU)
    from ocrkit.data.ground_truth.importer import check_subset, subset_from_folder
    from ocrkit.finetune.data import Provenance
    from ocrkit.finetune.run import TrainRequest, train

    if not 0.0 < args.val_share < 1.0:
        raise OcrkitError(f"--val-share: expected a share in (0, 1), got {args.val_share}")
    for path in [*args.paths, *args.val, *args.test]:
        if not path.exists():
            raise OcrkitError(f"{path}: not found")
    subset = check_subset(args.subset) if args.subset else subset_from_folder(args.paths[0])
    if not args.subset:
        print(f"subset: {subset} (the first PATH's name; --subset NAME to choose another)")
    request = TrainRequest(
        paths=args.paths,
        out=args.out,
        minutes=args.minutes,
        val_paths=args.val,
        test_paths=args.test,
        det_model=args.det_model,
        rec_model=args.rec_model,
        only=args.only,
        reserved=reserved_path(args),
        provenance=Provenance(
            subset, args.license, args.source, args.format, case_sensitive=not args.case_insensitive
        ),
        val_share=args.val_share,
        parallel=False if args.one_by_one else None,
        overrides=split_overrides(args.overrides),
        threads=args.threads or 0,
        export=not args.no_export,
        started=started,
    )
    train(request)
    print(f"report: {args.out / 'REPORT.md'}")
    return 0
