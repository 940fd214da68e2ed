"""Each decoding of one recognizer side by side on line crops, in one run: per subset the crop CER, the
CTC frames per character the line geometry gives, and milliseconds per line (ONNX, as `ocrkit infer
--backend onnx` reads them: same-shape batches, one session per decoding).

    python benchmarks/recognizer_decodings.py --model FOLDER --gt lines.jsonl [--decodings ctc joint]

FOLDER is a recognizer model folder (exported to ONNX once, into the ocrkit cache) or an ONNX export.
Frames per character = patches of the letterboxed line (every patch of every column is a CTC frame) ×
CTC frames per patch / characters; CTC needs a blank between doubled letters, so fewer than ~2 frames
per character loses them. Prints the load
average: timings taken on a busy machine are not comparable.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from ocrkit.data.manifest import read_jsonl
from ocrkit.decode.ctc import DECODINGS
from ocrkit.evaluation import markdown_table, score_records
from ocrkit.hub.model_folder import has_spec, read_spec
from ocrkit.hub.zoo import cached_onnx_export
from ocrkit.images.io import load_image
from ocrkit.recognition.metrics import edit_distance
from ocrkit.runtime.recognizer import OnnxRecognizer


def onnx_export(folder: Path) -> Path:
    """`folder` itself when it is an ONNX export, else its cached export."""
    return folder if (folder / "encoder_model.onnx").is_file() else cached_onnx_export(folder, "recognizer")


def frames_per_char(records: list[dict], crops: list[np.ndarray], folder: Path) -> list[float]:
    """CTC frames per character of each line, from the folder's preprocessing and head settings (the
    frames are the patches column by column, ocrkit.decode.ctc.patch_columns)."""
    spec = read_spec(folder, "recognizer")
    prep, frames_per_patch = spec.preprocess, spec.ctc_frames_per_patch
    out = []
    for rec, crop in zip(records, crops, strict=True):
        height, width = prep.padded_shape(*crop.shape[:2])
        patches = (height // prep.divisor) * (width // prep.divisor)
        out.append(patches * frames_per_patch / max(1, len(rec["text"])))
    return out


def print_worst(
    records: list[dict], texts: list[str], subsets: dict[str, list[int]], decoding: str, n: int
) -> None:
    """The n lines with the most edits per subset: reference, then reading."""
    for name, idx in subsets.items():
        worst = sorted(idx, key=lambda i: -edit_distance(records[i]["text"], texts[i]))[:n]
        print(f"-- {decoding}, {name}")
        for i in worst:
            print(f"   {records[i]['text']!r}\n   {texts[i]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", required=True, help="recognizer model folder or its ONNX export")
    parser.add_argument("--gt", required=True, help="lines.jsonl of crops (image paths relative to it)")
    parser.add_argument("--decodings", nargs="+", default=list(DECODINGS), choices=DECODINGS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--json", help="also write the table as JSON")
    parser.add_argument(
        "--errors", type=int, default=0, help="print the N worst lines per subset, per decoding"
    )
    args = parser.parse_args()

    folder = Path(args.model)
    if not has_spec(folder):
        parser.error(f"{folder}: not a model folder")
    records = read_jsonl(args.gt, "ground truth")
    crops = [load_image(Path(args.gt).parent / rec["image"]) for rec in records]
    subsets = defaultdict(list)
    for i, rec in enumerate(records):
        subsets[rec.get("subset", "all")].append(i)
    fpc = frames_per_char(records, crops, folder)
    export = onnx_export(folder)
    rows = {
        name: {"lines": len(idx), "frames_per_char": float(np.median([fpc[i] for i in idx]))}
        for name, idx in subsets.items()
    }
    for decoding in args.decodings:
        recognizer = OnnxRecognizer(export, threads=args.threads, decoding=decoding)
        recognizer.recognize(crops[: args.batch_size], args.batch_size)  # warm-up: session allocations
        texts: list[str] = [""] * len(records)
        for name, idx in subsets.items():
            start = time.perf_counter()
            read = recognizer.recognize([crops[i] for i in idx], args.batch_size)
            rows[name][f"ms_per_line_{decoding}"] = 1000 * (time.perf_counter() - start) / len(idx)
            for i, (text, _) in zip(idx, read, strict=True):
                texts[i] = text
        scores = score_records(
            records, [{"image": r["image"], "text": t} for r, t in zip(records, texts, strict=True)]
        )
        for name in rows:
            rows[name][f"cer_{decoding}"] = scores[name]["cer"]
        if args.errors:
            print_worst(records, texts, subsets, decoding, args.errors)
    print(f"load average {os.getloadavg()[0]:.2f}, {args.threads} threads, model {folder}")
    keys = ["lines", "frames_per_char"]
    keys += [f"{m}_{d}" for d in args.decodings for m in ("cer", "ms_per_line")]
    print(markdown_table([{"subset": name, **r} for name, r in rows.items()], ["subset", *keys]))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
