"""Copy a trained model folder into the repo as a shipped model: fp16 safetensors, everything else as is.

  python tools/ship_model.py runs/detector_n8/model ocrkit/models/detector
  python tools/ship_model.py runs/rec/best ocrkit/models/recognizer --set joint_gate=0.9

`--set KEY=VALUE` (VALUE as JSON) overrides an ocrkit.json inference setting chosen after training (a key the
folder already has; an unknown key is an error, not a silently ignored setting), such as
a detector's score_threshold or a recognizer's joint_gate, so the model card's command is the whole recipe.

Loading code casts back to float32 (transformers' default dtype), so inference runs in fp32 with
fp16-rounded weights; the parity and evaluation numbers in the model cards are measured on the copy.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from safetensors.torch import load_file, save_file

from ocrkit.config import ConfigError, split_override


def ship(src: Path, dst: Path, settings: dict | None = None) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.suffix != ".safetensors":
            shutil.copy2(f, dst / f.name)
    if settings:
        settings_file = dst / "ocrkit.json"
        current = json.loads(settings_file.read_text(encoding="utf-8"))
        settings_file.write_text(json.dumps({**current, **settings}, indent=2) + "\n")
    for weights in src.glob("*.safetensors"):
        tensors = {
            k: (v.half() if v.is_floating_point() else v).contiguous()
            for k, v in load_file(str(weights)).items()
        }
        save_file(tensors, str(dst / weights.name), metadata={"format": "pt"})


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
            parser.error(f"--set {item!r}: VALUE must be JSON (a number, true/false, null or a quoted text)")
    known = json.loads((args.src / "ocrkit.json").read_text(encoding="utf-8")) if settings else {}
    unknown = sorted(set(settings) - set(known))
    if unknown:  # a typo would otherwise ship a setting nothing reads
        parser.error(
            f"--set {', '.join(unknown)}: not in {args.src / 'ocrkit.json'} (has {', '.join(known)})"
        )
    ship(args.src, args.dst, settings)
    total = sum(f.stat().st_size for f in args.dst.iterdir()) / 2**20
    print(f"{args.dst}: {total:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
