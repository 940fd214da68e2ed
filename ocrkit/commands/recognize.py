"""`ocrkit recognize`: line images (files, folders or a lines.jsonl manifest) → one JSON line each."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ocrkit.commands.common import Failures, set_torch_threads
from ocrkit.errors import InputError
from ocrkit.io import expand_paths, load_image
from ocrkit.outputs import write_atomic
from ocrkit.pipeline import DEFAULT_RECOGNIZER, resolve_model
from ocrkit.recognition.ctc_decoding import DECODINGS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recognize", help="read line images (each image is one text line)")
    p.add_argument("paths", nargs="+", metavar="IMAGES_OR_MANIFEST", help="images, folders, or lines.jsonl")
    p.add_argument("--out", type=Path, help="output JSONL (default: stdout)")
    p.add_argument("--rec-model", type=Path, help="recognizer folder (default: the shipped model)")
    p.add_argument(
        "--decoding",
        choices=DECODINGS,
        help="override the model's decoder (ocrkit.json `decoding`)",
    )
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    p.set_defaults(func=run)


def read_inputs(paths: list[str], failures: Failures) -> list[tuple[str, Path]]:
    """(value to echo in the output's "image", file to read) for every input line image."""
    items: list[tuple[str, Path]] = []
    plain: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.suffix == ".jsonl" and p.is_file():
            for n, text in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
                if not text.strip():
                    continue
                try:
                    value = json.loads(text)["image"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    failures.report(p, InputError(f"{p}:{n}", 'not a JSON object with an "image" key'))
                    continue
                file = Path(value)
                items.append((value, file if file.is_absolute() else p.parent / file))
        else:
            plain.append(raw)
    files, errors = expand_paths(plain)
    for err in errors:
        failures.report(err.path, err)
    items.extend((str(f), f) for f in files)
    return items


def run(args: argparse.Namespace) -> int:
    from ocrkit.recognition import load_recognizer

    set_torch_threads(args.threads)

    recognizer = load_recognizer(
        resolve_model(args.rec_model, DEFAULT_RECOGNIZER, "recognizer"),
        device=args.device,
        decoding=args.decoding,
    )
    failures = Failures(args.debug)
    items = read_inputs(args.paths, failures)
    records: list[str] = []
    chunk = max(1, args.batch_size) * 8  # decode a few batches at a time: bounded memory, good bucketing
    for start in range(0, len(items), chunk):
        loaded = []
        for value, file in items[start : start + chunk]:
            try:
                loaded.append((value, load_image(file)))
            except InputError as exc:
                failures.report(file, exc)
        results = (
            recognizer.recognize([img for _, img in loaded], batch_size=args.batch_size) if loaded else []
        )
        for (value, _), (text, score) in zip(loaded, results, strict=True):
            records.append(
                json.dumps(
                    {"image": value, "text": text, "score": round(float(score), 5)}, ensure_ascii=False
                )
            )
    output = "".join(r + "\n" for r in records)
    if args.out:
        write_atomic(args.out, output)
    else:
        sys.stdout.write(output)
    return failures.exit_code(max(len(items), failures.count))
