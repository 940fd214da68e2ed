"""Train a line recognizer: `python tools/train_recognizer.py -c configs/recognizer/small.yaml [--set k=v]`.

Runs on one CPU/GPU or several processes (`accelerate launch` / `torchrun`); `--resume` continues
from the latest checkpoint in train.out_dir. The final model folder is <out_dir>/model (best by CER:
<out_dir>/best).
"""

from __future__ import annotations

import sys

from ocrkit.engine.command import train_command
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.task import RecognitionTask


def main(argv: list[str] | None = None) -> int:
    return train_command(__doc__, RecognizerConfig, RecognitionTask, argv)


if __name__ == "__main__":
    sys.exit(main())
