"""`ocrkit recognize`: line images (files, folders or a lines.jsonl manifest) → one JSON line each."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ocrkit.commands.common import Failures, set_torch_threads
from ocrkit.commands.options import add_model_options
from ocrkit.commands.progress import loading_line, say
from ocrkit.hub import zoo
from ocrkit.hub.model_info import release_name
from ocrkit.images.inputs import collect_inputs
from ocrkit.images.io import PageSource, load_page
from ocrkit.images.line_crops import DETECTED_FRAMING
from ocrkit.pages.outputs import prepare_out_file, write_atomic
from ocrkit.util.errors import InputError, printable

if TYPE_CHECKING:
    from ocrkit.recognition.predictor import Recognizer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recognize", help="read line images (each image is one text line)")
    p.add_argument("paths", nargs="+", metavar="IMAGES_OR_MANIFEST", help="images, folders, or lines.jsonl")
    p.add_argument("--out", type=Path, help="output JSONL file; default: standard output")
    add_model_options(p, detector=False, backend=False)
    p.add_argument(
        "--keep-margins",
        action="store_true",
        help="read each image as it is; by default blank margins and the edges of neighbouring lines are "
        "cut off first, except for crops `ocrkit detect --crops` cut from detected boxes (loose crops from "
        "other tools: a blank margin of one line height reads at CER 0.18 cut, 0.65 kept; tight crops "
        "0.169 and 0.173)",
    )
    p.set_defaults(func=run)


Item = tuple[str, PageSource, bool]  # value to echo as "image", page to read, whether it was detected


def _manifest_items(manifest: Path, failures: Failures) -> list[Item]:
    """An item per line of a lines.jsonl; a line without a usable "image" string, or a manifest that
    is not UTF-8 JSON lines, is one reported input each."""
    try:
        text = manifest.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problem = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror or str(exc)
        failures.report(manifest, InputError(manifest, f"cannot read manifest ({problem})"))
        return []
    items: list[Item] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            value, detected = record["image"], record.get("framing") == DETECTED_FRAMING
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            value, detected = None, False
        if not isinstance(value, str) or not value:
            failures.report(manifest, InputError(f"{manifest}:{n}", 'not a JSON object with an "image" path'))
            continue
        file = Path(value)
        file = file if file.is_absolute() else manifest.parent / file
        items.append((value, PageSource(file, file.name), detected))
    return items


def read_inputs(paths: list[str], failures: Failures) -> tuple[list[Item], int]:
    """An item for every input line image, and the number of inputs (failed ones included); bad inputs
    are reported here, before the model loads."""
    items: list[Item] = []
    failed_before = failures.count
    for raw in paths:
        p = Path(raw)
        if p.suffix == ".jsonl" and p.is_file():
            items.extend(_manifest_items(p, failures))
            continue
        for item in collect_inputs([p], unique_names=False).items:
            if isinstance(item, InputError):
                failures.report(item.path, item)
            else:
                items.append((item.label, item, False))
    return items, len(items) + failures.count - failed_before


def run(args: argparse.Namespace) -> int:
    from ocrkit.recognition import load_recognizer

    if args.out:
        prepare_out_file(args.out)
    failures = Failures(args.debug)
    items, total = read_inputs(args.paths, failures)
    if not items:
        return failures.exit_code(total)
    set_torch_threads(args.threads)
    folder = zoo.resolve(args.rec_model, "recognizer")
    zoo.refuse_onnx_export(folder, "ocrkit recognize runs torch folders; give the one it was exported from")
    say(loading_line([release_name(folder)], "torch", chosen=False))
    recognizer = load_recognizer(folder, device=args.device, decoding=args.decoding)
    records: list[str] = []
    chunk = args.batch_size * 8  # decode a few batches at a time: bounded memory, good bucketing
    for start in range(0, len(items), chunk):
        loaded = []
        for n, (value, source, detected) in enumerate(items[start : start + chunk], start):
            try:
                loaded.append((value, source, not (detected or args.keep_margins), load_page(source)))
            except InputError as exc:
                failures.report(source.label, exc, key=("line image", n))
        for (value, source), (text, score) in read_loaded(recognizer, loaded, args.batch_size):
            record = {"image": printable(value), "text": text, "score": round(float(score), 5)}
            if source.is_pdf or source.pages > 1:
                record["page"] = source.page
            records.append(json.dumps(record, ensure_ascii=False))
    output = "".join(r + "\n" for r in records)
    if args.out:
        write_atomic(args.out, output)
    else:
        sys.stdout.write(output)
    return failures.exit_code(total)


Loaded = tuple[str, PageSource, bool, np.ndarray]  # value, source, whether to cut it to its line, pixels


def read_loaded(
    recognizer: Recognizer, loaded: list[Loaded], batch_size: int
) -> list[tuple[tuple[str, PageSource], tuple[str, float]]]:
    """((value, source), (text, score)) for loaded items, in their order: the crops to cut to their
    line and the others read apart, each with its framing."""
    results: dict[int, tuple[str, float]] = {}
    for trim in (True, False):
        picked = [n for n, item in enumerate(loaded) if item[2] is trim]
        if picked:
            read = recognizer.recognize(
                [loaded[n][3] for n in picked], batch_size=batch_size, trim_margins=trim
            )
            results.update(zip(picked, read, strict=True))
    return [((value, source), results[n]) for n, (value, source, _, _) in enumerate(loaded)]
