"""Score ocrkit (or any tool writing the same JSON) on real data.

pages: python tools/evaluate.py pages --gt DIR_OR_COCO... [--pred DIR] [--det-model D --rec-model R]
       per subset: line P/R/F1@0.5, COCO mAP, page CER (row order), bag-of-words F1, s/page.
       Without --pred, runs ocrkit itself (torch or onnx backend) and scores its pages.
       --min-score 0.2 0.3 0.4: one table per detector score threshold (pick it on validation data
       from one low-threshold run; post-processing makes this equal to re-running at each threshold).
       --gt-boxes: recognise the ground-truth boxes instead of detected ones, so page CER minus this
       run's CER is what detection costs.
rec:   python tools/evaluate.py rec --gt lines.jsonl --pred preds.jsonl
       per subset: CER and WER (micro), case-insensitive for records with "case_sensitive": false.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ocrkit.commands.options import Parser
from ocrkit.data.manifest import read_jsonl
from ocrkit.evaluation import (
    drop_unconfident,
    markdown_table,
    read_coco_pages,
    read_prediction_dir,
    score_records,
    score_subset,
)


def coco_files(paths: list[str]) -> list[Path]:
    out = []
    for raw in paths:
        p = Path(raw)
        out.extend(
            sorted(p.glob("*/coco.json")) + ([p / "coco.json"] if (p / "coco.json").is_file() else [])
            if p.is_dir()
            else [p]
        )
    return out


def run_ocrkit(coco_path: Path, args: argparse.Namespace) -> dict:
    from ocrkit.pipeline import OCR

    ocr = OCR(args.det_model, args.rec_model, backend=args.backend, threads=args.threads)
    save = Path(args.save_pred) / coco_path.parent.name if args.save_pred else None
    return read_coco_pages(ocr, coco_path, gt_boxes=args.gt_boxes, save_pred=save)


def report(results: dict[str, dict], keys: list[str], json_path: str | None) -> int:
    """Print the results per subset as a table, write them as JSON when asked; the exit code."""
    print(markdown_table([{"subset": name, **r} for name, r in results.items()], ["subset", *keys]))
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


def cmd_pages(args: argparse.Namespace) -> int:
    results = {}
    for coco_path in coco_files(args.gt):
        name = coco_path.parent.name
        if args.pred:
            pred_dir = Path(args.pred)
            pages = read_prediction_dir(pred_dir / name if (pred_dir / name).is_dir() else pred_dir)
        else:
            pages = run_ocrkit(coco_path, args)
        for threshold in args.min_score or [None]:
            kept = (
                pages if threshold is None else {k: drop_unconfident(p, threshold) for k, p in pages.items()}
            )
            label = name if threshold is None else f"{name} (det_score >= {threshold:g})"
            results[label] = score_subset(coco_path, kept, name)
    keys = ["pages", "precision", "recall", "f1", "map", "map50", "cer", "bow_f1", "s_per_page"]
    return report(results, keys, args.json)


def cmd_rec(args: argparse.Namespace) -> int:
    gt, pred = read_jsonl(args.gt, "ground truth"), read_jsonl(args.pred, "predictions")
    return report(score_records(gt, pred), ["lines", "cer", "wer"], args.json)


def main() -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pages", help="end-to-end page scores against COCO GT with text")
    p.add_argument("--gt", nargs="+", required=True, help="coco.json files, or folders of <subset>/coco.json")
    p.add_argument("--pred", help="folder of <stem>.json predictions (or <subset>/<stem>.json)")
    p.add_argument("--det-model")
    p.add_argument("--rec-model")
    p.add_argument("--backend", default="torch", choices=("torch", "onnx"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--save-pred", help="with no --pred: also write ocrkit's page JSON here")
    p.add_argument("--json", help="write the results table as JSON")
    p.add_argument("--min-score", type=float, nargs="+", help="also score with these detector thresholds")
    p.add_argument(
        "--gt-boxes",
        action="store_true",
        help="read the ground-truth line boxes instead of detecting (the recognizer's share of page CER)",
    )
    p.set_defaults(func=cmd_pages)
    r = sub.add_parser("rec", help="CER/WER of recognizer predictions against a lines.jsonl manifest")
    r.add_argument("--gt", required=True)
    r.add_argument("--pred", required=True)
    r.add_argument("--json")
    r.set_defaults(func=cmd_rec)
    args = parser.parse_args()
    if getattr(args, "gt_boxes", False) and args.pred:
        parser.error("--gt-boxes runs the recognizer itself; it cannot score --pred files")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
