"""Train a text-line detector: `tools/train_detector.py -c configs/detector/dfine_n.yaml [--set k=v ...]`.

Runs on one CPU/GPU or several processes (`accelerate launch` / `torchrun`); `--resume` continues
from the latest checkpoint in train.out_dir. The final model folder is <out_dir>/model.
"""

from __future__ import annotations

import argparse
import sys

from ocrkit.config import ConfigError, load_config, to_dict
from ocrkit.detection.config import DetectorConfig
from ocrkit.detection.task import DetectionTask
from ocrkit.engine.trainer import Trainer
from ocrkit.errors import OcrkitError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-c", "--config", required=True, help="detector YAML config (configs/detector/*.yaml)"
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
        config = load_config(DetectorConfig, args.config, args.overrides)
        task = DetectionTask(config)
        Trainer(task, config.train, resume=args.resume, config=to_dict(config)).fit()
    except (ConfigError, OcrkitError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
