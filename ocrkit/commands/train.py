"""`ocrkit train KIND -c CONFIG`: train one model from a YAML config on the one Trainer.

The full-control route for the detector, the recognizer and the page-orientation classifier: the config
(`configs/<kind>/*.yaml`, with `--set key=value` overrides) says what to read, what to start from and how
long to train. `ocrkit finetune` is the one-command route for both reading models on your own pages.
A bad config key or input is one `ocrkit: error:` line, not a traceback.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

# kind -> (config class, task class), as "module:name"; imported when the kind runs, so --help stays fast
KINDS = {
    "detector": ("ocrkit.detection.config:DetectorConfig", "ocrkit.detection.task:DetectionTask"),
    "recognizer": ("ocrkit.recognition.config:RecognizerConfig", "ocrkit.recognition.task:RecognitionTask"),
    "orientation": ("ocrkit.orientation.config:OrientationConfig", "ocrkit.orientation.task:OrientationTask"),
}
WHAT = {
    "detector": "a text-line detector (D-FINE or RT-DETR)",
    "recognizer": "a line recognizer (TrOCR on variable-width lines)",
    "orientation": "the page-orientation classifier",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train one model (detector, recognizer, orientation) from a YAML config",
        description="Train one model from a YAML config, on one CPU/GPU or several processes "
        "(`accelerate launch -m ocrkit train ...`). The model folder is <train.out_dir>/model, the best "
        "validated one <train.out_dir>/best. To fine-tune both reading models on your pages in one "
        "command, use `ocrkit finetune`.",
        hint="to fine-tune both reading models on your pages, run `ocrkit finetune PATH ... --out OUT`",
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, what in WHAT.items():
        q = kinds.add_parser(kind, help=f"train {what}", description=f"Train {what} from a YAML config.")
        add_training_options(q, kind)
        q.set_defaults(func=run)


def add_training_options(p: argparse.ArgumentParser, kind: str) -> None:
    p.add_argument(
        "-c", "--config", type=Path, required=True, help=f"YAML config, e.g. configs/{kind}/*.yaml"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set train.steps=100 (repeatable)",
    )
    p.add_argument(
        "--resume", action="store_true", help="continue from the latest checkpoint in train.out_dir"
    )
    p.add_argument(
        "--max-minutes",
        type=float,
        help="stop after this many minutes, validated and checkpointed (train.max_minutes); the schedule "
        "still follows train.steps, so --resume continues it exactly",
    )
    p.add_argument(
        "--fit-minutes",
        type=float,
        help="fit the run to this many minutes (train.fit_minutes): time a few steps, then set train.steps "
        "(at most the configured value) so the cosine schedule ends when the time does",
    )
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="train.device; default: the config's")


def overrides(args: argparse.Namespace) -> list[str]:
    """The config overrides: every --set, then the options that name a config key."""
    out = list(args.overrides)
    for key in ("max_minutes", "fit_minutes", "device"):
        if getattr(args, key) is not None:
            out.append(f"train.{key}={getattr(args, key)}")
    return out


def load(reference: str) -> type:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def run(args: argparse.Namespace) -> int:
    from ocrkit.engine.trainer import Trainer
    from ocrkit.util.config import load_config, to_dict

    config_ref, task_ref = KINDS[args.kind]
    config = load_config(load(config_ref), args.config, overrides(args))
    task = load(task_ref)(config)
    Trainer(task, config.train, resume=args.resume, config=to_dict(config)).fit()
    return 0
