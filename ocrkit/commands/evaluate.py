"""`ocrkit evaluate pages|misses|rec`: score ocrkit (or any tool writing the same JSON) on annotated data.

pages:  per subset: line P/R/F1@0.5, COCO mAP, page CER (row order), bag-of-words F1, nested boxes, real
        lines dropped as not text, s/page; with several subsets also "all" (recall and page CER over all
        their boxes and characters). Without --pred, runs ocrkit itself and scores its pages.
        --min-score 0.2 0.3 0.4: one table per detector score threshold (pick it on validation data from
        one low-threshold run). --gt-boxes: read the annotated boxes instead of detecting, so page CER
        minus this run's is what detection costs.
misses: per subset: detector recall@0.5 by annotated box height and width at the detector's input, the
        share of boxes no detected box covers by 30 %, and pictures of the pages missing most.
rec:    per subset: CER and WER of line readings (`ocrkit recognize --out`), case-free for records with
        "case_sensitive": false.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ocrkit.commands.common import set_torch_threads
from ocrkit.commands.options import add_model_options, ocr_options, positive_int, probability
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.argparse_kit import DocHelpFormatter
from ocrkit.util.errors import OcrkitError

if TYPE_CHECKING:
    from ocrkit.pipeline import OCR


def coco_files(paths: list[str]) -> list[Path]:
    out = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise OcrkitError(f"{p}: not found")
        out.extend(
            sorted(p.glob("*/coco.json")) + ([p / "coco.json"] if (p / "coco.json").is_file() else [])
            if p.is_dir()
            else [p]
        )
    return out


def subset_name(coco_path: Path) -> str:
    """`<subset>/coco.json` is named by its folder, any other file by its stem, so several COCO files of
    one folder (e.g. `receipts_val.json`, `books_val.json`) each get their own row."""
    return coco_path.parent.name if coco_path.name == "coco.json" else coco_path.stem


def run_ocrkit(ocr: OCR, coco_path: Path, args: argparse.Namespace) -> dict:
    from ocrkit.evaluation import read_coco_pages

    save = Path(args.save_pred) / subset_name(coco_path) if args.save_pred else None
    return read_coco_pages(ocr, coco_path, gt_boxes=args.gt_boxes, save_pred=save)


def report(results: dict[str, dict], keys: list[str], args: argparse.Namespace, kind: str, **context) -> int:
    """Print the results per subset as a table, write them as JSON and append them to a results file
    as records of `kind` (ocrkit.results) when asked; the exit code."""
    from ocrkit.evaluation import markdown_table

    print(markdown_table([{"subset": name, **r} for name, r in results.items()], ["subset", *keys]))
    if args.json:
        write_atomic(Path(args.json), json.dumps(results, indent=2))
    if args.record:
        from ocrkit.results import append_records, new_records

        append_records(args.record, new_records(kind, args.engine, results, **context))
    return 0


def add_record_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--record",
        type=Path,
        metavar="RESULTS_JSONL",
        help="also append each subset's scores, dated, to this results file (e.g. results/results.jsonl)",
    )
    p.add_argument(
        "--engine", help="with --record: what was measured, e.g. 'detector 0.7.0 + recognizer 0.10.0'"
    )


def check_record_options(args: argparse.Namespace) -> None:
    if args.record and not args.engine:
        raise OcrkitError("--record needs --engine: the name the results file keeps the scores under")


def cmd_pages(args: argparse.Namespace) -> int:
    from ocrkit.evaluation import drop_unconfident, pooled, read_prediction_dir, score_subset

    if args.gt_boxes and args.pred:
        raise OcrkitError("--gt-boxes runs the recognizer itself; it cannot score --pred files")
    check_record_options(args)
    results, by_threshold = {}, defaultdict(list)
    paths = coco_files(args.gt)
    ocr = None
    if not args.pred:  # the models load once for every subset
        from ocrkit.pipeline import OCR

        ocr = OCR(**ocr_options(args))
    for coco_path in paths:
        name = subset_name(coco_path)
        if args.pred:
            pred_dir = Path(args.pred)
            pages = read_prediction_dir(pred_dir / name if (pred_dir / name).is_dir() else pred_dir)
        else:
            pages = run_ocrkit(ocr, coco_path, args)
        for threshold in args.min_score or [None]:
            kept = (
                pages if threshold is None else {k: drop_unconfident(p, threshold) for k, p in pages.items()}
            )
            label = name if threshold is None else f"{name} (det_score >= {threshold:g})"
            results[label] = score_subset(coco_path, kept, name)
            by_threshold[threshold].append(results[label])
    if len(paths) > 1:
        for threshold, rows in by_threshold.items():
            results["all" if threshold is None else f"all (det_score >= {threshold:g})"] = pooled(rows)
    keys = ["pages", "precision", "recall", "f1", "map", "map50", "cer", "bow_f1", "nested", "dropped_real"]
    keys.append("s_per_page")
    context = {} if ocr is None else {"backend": ocr.backend, "threads": args.threads}
    return report(results, keys, args, "pages", **context)


def cmd_misses(args: argparse.Namespace) -> int:
    from ocrkit.detection import load_detector
    from ocrkit.detection.misses import MissCounts, draw_misses
    from ocrkit.evaluation import load_coco
    from ocrkit.hub import zoo
    from ocrkit.hub.model_folder import read_spec
    from ocrkit.images import boxes as B
    from ocrkit.images.io import load_image

    set_torch_threads(args.threads)
    det_dir = zoo.resolve(args.det_model, "detector")
    detector, spec = load_detector(det_dir, args.device), read_spec(det_dir, "detector")
    results: dict[str, dict] = {}
    for coco_path in coco_files(args.gt):
        coco, counts, worst = load_coco(coco_path), MissCounts(), []
        for image in coco.dataset["images"]:
            pixels = load_image(coco_path.parent / image["file_name"])
            anns = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
            gt = B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4))
            ((pred, _),) = detector.predict([pixels])
            hits = counts.add_page(gt, pred, spec.sizing.side(*pixels.shape[:2]) / max(pixels.shape[:2]))
            # pixels are not kept: only the pages drawn are read again
            worst.append((int((~hits).sum()), image["file_name"], gt, hits, pred))
        results[subset_name(coco_path)] = counts.summary()
        if args.pictures:
            folder = Path(args.pictures)
            folder.mkdir(parents=True, exist_ok=True)
            for missed, name, gt, hits, pred in sorted(worst, key=lambda w: -w[0])[: args.per_subset]:
                pixels = load_image(coco_path.parent / name)
                out = folder / f"{subset_name(coco_path)}_{Path(name).stem}.webp"
                draw_misses(pixels, gt, hits, pred).save(out, quality=60)
                print(f"{out}: {missed} of {len(hits)} annotated lines missed")
    print(misses_table(results))
    if args.json:
        write_atomic(Path(args.json), json.dumps(results, indent=2))
    return 0


def misses_table(results: dict[str, dict]) -> str:
    """One markdown table per size axis: boxes and recall@0.5 per bin, per subset."""
    lines = []
    for axis, title in (("by_height", "box height"), ("by_width", "box width")):
        labels = [label for label, _, _ in next(iter(results.values()))[axis]]
        lines.append(f"| subset (recall, uncovered) | {title} at input, px: " + " | ".join(labels) + " |")
        lines.append("|---" * (len(labels) + 1) + "|")
        for name, r in results.items():
            cells = [f"{recall:.2f} ({n})" if n else "–" for _, n, recall in r[axis]]
            head = f"{name} ({r['recall']:.3f}, {r['uncovered']:.3f})"
            lines.append(f"| {head} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def cmd_rec(args: argparse.Namespace) -> int:
    from ocrkit.data.manifest import read_jsonl
    from ocrkit.evaluation import score_records

    check_record_options(args)
    gt, pred = read_jsonl(args.gt, "ground truth"), read_jsonl(args.pred, "predictions")
    return report(score_records(gt, pred), ["lines", "cer", "wer"], args, "crops")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "evaluate",
        help="score pages, detector misses or line readings against annotated data",
        description=__doc__,
        formatter_class=DocHelpFormatter,
    )
    what = parser.add_subparsers(dest="what", metavar="pages|misses|rec", required=True)
    p = what.add_parser("pages", help="end-to-end page scores against COCO files with line texts")
    p.add_argument("--gt", nargs="+", required=True, help="coco.json files, or folders of <subset>/coco.json")
    p.add_argument("--pred", help="folder of <stem>.json predictions (or <subset>/<stem>.json)")
    add_model_options(p)
    p.add_argument("--save-pred", help="with no --pred: also write ocrkit's page JSON here")
    p.add_argument("--json", help="write the results table as JSON")
    add_record_options(p)
    p.add_argument(
        "--min-score", type=probability, nargs="+", help="also score with these detector thresholds"
    )
    p.add_argument(
        "--gt-boxes",
        action="store_true",
        help="read the annotated line boxes instead of detecting (the recognizer's share of page CER)",
    )
    p.set_defaults(func=cmd_pages)
    m = what.add_parser("misses", help="detector recall by box size, uncovered boxes, pictures of misses")
    m.add_argument("--gt", nargs="+", required=True, help="coco.json files, or folders of <subset>/coco.json")
    add_model_options(m, recognizer=False, backend=False)
    m.add_argument("--pictures", help="write overlays of the pages with the most missed lines here")
    m.add_argument("--per-subset", type=positive_int, default=2, help="pictures per subset")
    m.add_argument("--json", help="write the counts as JSON")
    m.set_defaults(func=cmd_misses)
    r = what.add_parser("rec", help="CER/WER of line readings against a lines.jsonl manifest")
    r.add_argument("--gt", required=True, help="lines.jsonl with the true texts")
    r.add_argument("--pred", required=True, help="the readings, as `ocrkit recognize --out` writes them")
    r.add_argument("--json", help="write the results table as JSON")
    add_record_options(r)
    r.set_defaults(func=cmd_rec)
