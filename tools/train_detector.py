"""Train a text-line detector: `tools/train_detector.py -c configs/detector/dfine_n.yaml [--set k=v ...]`.

Runs on one CPU/GPU or several processes (`accelerate launch` / `torchrun`); `--resume` continues
from the latest checkpoint in train.out_dir. The final model folder is <out_dir>/model.
"""

from __future__ import annotations

import sys

from ocrkit.detection.config import DetectorConfig
from ocrkit.detection.task import DetectionTask
from ocrkit.engine.command import train_command


def main(argv: list[str] | None = None) -> int:
    return train_command(__doc__, DetectorConfig, DetectionTask, argv)


if __name__ == "__main__":
    sys.exit(main())
