"""Train the page-orientation classifier.

    python tools/train_orientation.py -c configs/orientation/default.yaml [--set k=v] [--max-minutes M]

`--resume` continues from the latest checkpoint in train.out_dir; the model folder is <out_dir>/model
(best by page accuracy: <out_dir>/best).
"""

from __future__ import annotations

import sys

from ocrkit.engine.command import train_command
from ocrkit.orientation.config import OrientationConfig
from ocrkit.orientation.task import OrientationTask


def main(argv: list[str] | None = None) -> int:
    return train_command(__doc__, OrientationConfig, OrientationTask, argv)


if __name__ == "__main__":
    sys.exit(main())
