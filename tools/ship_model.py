"""Copy a trained model folder into the repo as a shipped model: fp16 safetensors, everything else as is.

  python tools/ship_model.py runs/detector_n8/model ocrkit/models/detector
  python tools/ship_model.py runs/rec/best ocrkit/models/recognizer --set joint_gate=0.9

`--set KEY=VALUE` (VALUE as JSON) overrides an inference setting of the folder chosen after training (a
setting of that kind of model; an unknown key is an error, not a silently ignored setting), such as
a detector's score_threshold or a recognizer's joint_gate, so the model card's command is the whole recipe.
The settings are written in the current format (ocrkit.model_folder).

The copy itself is ocrkit.shipping.ship (also what `ocrkit train` writes its model folders with); the
parity and evaluation numbers in the model cards are measured on the copy.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ocrkit.argparse_kit import Parser
from ocrkit.config import ConfigError, split_override
from ocrkit.errors import ModelError
from ocrkit.model_folder import read_spec, with_settings
from ocrkit.shipping import ship


def main() -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    settings = {}
    for item in args.settings:
        try:
            key, raw = split_override(item)
            settings[key] = json.loads(raw)
        except ConfigError as exc:
            parser.error(str(exc))
        except json.JSONDecodeError:
            parser.error(
                f"--set {item!r}: VALUE must be JSON (a number, true/false, null or a quoted string)"
            )
    try:  # a typo in --set would otherwise ship a setting nothing reads
        spec = with_settings(read_spec(args.src), settings, args.src)
    except ModelError as exc:
        parser.error(f"--set: {exc}" if settings else str(exc))
    ship(args.src, args.dst, spec)
    total = sum(f.stat().st_size for f in args.dst.iterdir()) / 2**20
    print(f"{args.dst}: {total:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
