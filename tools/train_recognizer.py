"""Train a line recognizer: `python tools/train_recognizer.py -c configs/recognizer/small.yaml [--set k=v]`.

Runs on one CPU/GPU or several processes (`accelerate launch` / `torchrun`); `--resume` continues
from the latest checkpoint in train.out_dir. The final model folder is <out_dir>/model (best by CER:
<out_dir>/best).
"""

from __future__ import annotations

import argparse
import sys

from ocrkit.config import ConfigError, load_config, to_dict
from ocrkit.engine.trainer import Trainer
from ocrkit.errors import OcrkitError
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.task import RecognitionTask


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-c", "--config", required=True, help="recognizer YAML config (configs/recognizer/*.yaml)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set train.steps=100 (repeatable)",
    )
    parser.add_argument("--resume", action="store_true", help="continue from the latest checkpoint")
    args = parser.parse_args(argv)
    try:
        config = load_config(RecognizerConfig, args.config, args.overrides)
        task = RecognitionTask(config)
        Trainer(task, config.train, resume=args.resume, config=to_dict(config)).fit()
    except (ConfigError, OcrkitError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
