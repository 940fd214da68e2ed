"""A trained model folder as a folder to use and share: fp16 safetensors, everything else as is.

Loading code casts back to float32 (transformers' default dtype), so inference runs in fp32 with
fp16-rounded weights at half the size; scores of a shipped copy are measured on the copy itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from safetensors.torch import load_file, save_file

from ocrkit.hub.model_folder import Spec, read_spec, write_spec


def ship(src: Path, dst: Path, spec: Spec | None = None) -> Path:
    """Copy `src` into `dst` with fp16 weights and `spec` (default: the folder's own settings, rewritten
    in the current format). Files of `dst` that `src` lacks (a model card) stay."""
    src, dst = Path(src), Path(dst)
    spec = spec or read_spec(src)
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.suffix != ".safetensors":
            shutil.copy2(f, dst / f.name)
    write_spec(dst, spec)
    for weights in src.glob("*.safetensors"):
        tensors = {
            k: (v.half() if v.is_floating_point() else v).contiguous()
            for k, v in load_file(str(weights)).items()
        }
        save_file(tensors, str(dst / weights.name), metadata={"format": "pt"})
    return dst
