"""`ocrkit models list|show|ship`: the shipped models, what any model folder is (ocrkit.hub.model_info), and
a trained folder copied as one to ship (ocrkit.hub.shipping)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ocrkit.hub import zoo
from ocrkit.hub.model_info import CARD_NAME, ModelInfo, describe
from ocrkit.util.config import apply_overrides
from ocrkit.util.errors import ModelError, OcrkitError, report_error

LABELS = {
    "release": "release",
    "kind": "kind",
    "folder": "folder",
    "version": "version (weights hash)",
    "architecture": "architecture",
    "input": "input",
    "decoding": "decoding",
    "licence": "licence of the weights",
    "data_conditions": "training data licences",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the shipped models; show what a model folder is; ship one")
    p.set_defaults(func=run_list, json=False)  # `ocrkit models` alone lists them
    kinds = p.add_subparsers(dest="what", metavar="list|show|ship")
    q = kinds.add_parser("list", help="the shipped models: name, kind, version, release")
    q.add_argument("--json", action="store_true", help="one JSON object per model instead of a table")
    q.set_defaults(func=run_list)
    q = kinds.add_parser("show", help="name, version, architecture, input and licence conditions of a model")
    q.add_argument("model", metavar="NAME_OR_DIR", help="a shipped model's name or a model folder")
    q.add_argument("--json", action="store_true", help="a JSON object instead of text")
    q.set_defaults(func=run_show)
    q = kinds.add_parser(
        "ship",
        help="copy a trained model folder as one to ship: fp16 safetensors, chosen inference settings",
        description="Copy a trained model folder (e.g. runs/NAME/best) into DST as a folder to ship: "
        "weights as fp16 safetensors, settings in the current format, everything else as is. `--set` "
        "fixes an inference setting chosen after training, such as a detector's score_threshold or a "
        "recognizer's joint_gate; a key the model kind does not have is an error.",
    )
    q.add_argument("src", type=Path, metavar="SRC", help="the trained model folder")
    q.add_argument(
        "dst", type=Path, metavar="DST", help="the folder to write (a model card already in it stays)"
    )
    q.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an inference setting, VALUE read as YAML like a config override (repeatable)",
    )
    q.set_defaults(func=run_ship)


def run_list(args: argparse.Namespace) -> int:
    """The shipped models that can be described; one error line for each that cannot (exit 1)."""
    infos, broken = [], 0
    for model in zoo.list_models():
        try:
            infos.append(describe(model.path))
        except ModelError as exc:
            report_error(exc)
            broken += 1
    code = 1 if broken else 0
    if args.json:
        print("\n".join(json.dumps(info.to_dict(), ensure_ascii=False) for info in infos))
        return code
    rows = [("NAME", "KIND", "VERSION", "RELEASE")] + [(i.name, i.kind, i.version, i.release) for i in infos]
    widths = [max(len(row[n]) for row in rows) for n in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3])
    return code


def run_show(args: argparse.Namespace) -> int:
    info = describe(find(args.model))
    print(json.dumps(info.to_dict(), ensure_ascii=False, indent=2) if args.json else as_text(info))
    return 0


def find(name_or_path: str) -> Path:
    """A model folder given as a path, or a shipped model given by name (a folder wins, as in zoo.resolve)."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    shipped = {model.name: model.path for model in zoo.list_models()}
    if name_or_path in shipped:
        return shipped[name_or_path]
    match = zoo.nearest_name(name_or_path, list(shipped))
    hint = f"; did you mean {match!r}?" if match else ""
    raise ModelError(
        path, f"no such model folder, nor a shipped model ({', '.join(shipped) or 'none installed'}){hint}"
    )


def as_text(info: ModelInfo) -> str:
    values = info.to_dict()
    if not info.release:
        values["release"] = f"not stated (no {CARD_NAME})"
    if not info.data_conditions:
        values["data_conditions"] = f"not stated (no data_conditions in a {CARD_NAME}'s metadata)"
    width = max(map(len, LABELS.values()))
    lines = [info.name] + [
        f"  {label.ljust(width)}  {values[key]}" for key, label in LABELS.items() if values[key]
    ]
    return "\n".join(lines)


def run_ship(args: argparse.Namespace) -> int:
    from ocrkit.hub.model_folder import read_spec, with_settings
    from ocrkit.hub.shipping import ship

    spec = read_spec(args.src)
    try:  # a typo in --set would otherwise ship a setting nothing reads
        spec = with_settings(spec, apply_overrides({}, args.settings), args.src)
    except ModelError as exc:
        raise OcrkitError(f"--set: {exc}") from None
    ship(args.src, args.dst, spec)
    total = sum(f.stat().st_size for f in args.dst.iterdir()) / 2**20
    print(f"{args.dst}: {total:.1f} MiB")
    return 0
