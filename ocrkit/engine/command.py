"""The command line shared by `tools/train_detector.py` and `tools/train_recognizer.py`.

Both read a YAML config with `--set key=value` overrides, build their task and hand it to the one
Trainer; a bad config key or input is one `ocrkit: error:` line and exit code 2, not a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ocrkit.argparse_kit import Parser
from ocrkit.config import ConfigError, load_config, to_dict
from ocrkit.engine.task import Task
from ocrkit.engine.trainer import Trainer
from ocrkit.errors import OcrkitError, report_error


def train_command(
    usage: str, config_class: type, make_task: Callable[[Any], Task], argv: list[str] | None = None
) -> int:
    """Parse `-c CONFIG [--set k=v ...] [--resume]`, train, and return the process exit code.

    `usage` is the tool's docstring: its first line describes the command."""
    parser = Parser(description=usage.splitlines()[0])
    parser.add_argument("-c", "--config", required=True, help="YAML config (configs/<model>/*.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set train.steps=100 (repeatable)",
    )
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    parser.add_argument(
        "--max-minutes",
        type=float,
        help="stop after this many minutes, validated and checkpointed (train.max_minutes); the schedule "
        "still follows train.steps, so --resume continues it exactly",
    )
    parser.add_argument(
        "--fit-minutes",
        type=float,
        help="fit the run to this many minutes (train.fit_minutes): time a few steps, then set train.steps "
        "(at most the configured value) so the cosine schedule ends when the time does",
    )
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), help="train.device")
    args = parser.parse_args(argv)
    overrides = list(args.overrides)
    if args.max_minutes is not None:
        overrides.append(f"train.max_minutes={args.max_minutes}")
    if args.fit_minutes is not None:
        overrides.append(f"train.fit_minutes={args.fit_minutes}")
    if args.device is not None:
        overrides.append(f"train.device={args.device}")
    try:
        config = load_config(config_class, args.config, overrides)
        task = make_task(config)
        Trainer(task, config.train, resume=args.resume, config=to_dict(config)).fit()
    except (ConfigError, OcrkitError) as exc:
        report_error(exc)
        return 2
    return 0
