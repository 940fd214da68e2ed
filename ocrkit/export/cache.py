"""ONNX copies of the shipped default models, exported once on first use into a user cache folder.

The repository ships only the torch weights (the ONNX graphs would triple its size), so
`ocrkit infer --backend onnx` without `--det-model/--rec-model` exports the defaults the first time
and reuses the export afterwards. The cache key is a hash of the weights, so new shipped weights get
a new export instead of a stale one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

from ocrkit.extras import require

# What an export imports beyond the core install (the 'export' extra); checked before any work starts.
EXPORT_MODULES = ("torch", "transformers", "torchvision", "onnx", "optimum.exporters.onnx")


def cache_root() -> Path:
    """$OCRKIT_CACHE, else $XDG_CACHE_HOME/ocrkit, else ~/.cache/ocrkit."""
    if os.environ.get("OCRKIT_CACHE"):
        return Path(os.environ["OCRKIT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ocrkit"


def weights_digest(model_dir: Path) -> str:
    """Short content hash of a model folder's safetensors and ocrkit.json."""
    digest = hashlib.sha256()
    for path in sorted(model_dir.glob("*.safetensors")) + [model_dir / "ocrkit.json"]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cached_onnx_export(model_dir: Path, kind: str) -> Path:
    """The ONNX export of `model_dir` (kind: detector | recognizer), exporting it once if needed.

    The export is written to a temporary folder and renamed into place, so an interrupted export
    never leaves a half-written folder that would be mistaken for a finished one.
    """
    target = cache_root() / "onnx" / f"{kind}-{weights_digest(model_dir)}"
    if (target / "ocrkit.json").is_file():
        return target
    for module in EXPORT_MODULES:
        require(module, "export", f"exporting the shipped {kind} to ONNX")
    from ocrkit.export.detector import export_detector
    from ocrkit.export.recognizer import export_recognizer

    print(f"ocrkit: exporting the default {kind} to ONNX once, into {target}", file=sys.stderr)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=target.parent))
    try:
        with warnings.catch_warnings():  # tracer warnings about Python control flow are not for users
            warnings.simplefilter("ignore")
            (export_detector if kind == "detector" else export_recognizer)(model_dir, scratch)
        try:
            scratch.rename(target)
        except OSError:  # another process finished the same export first
            if not (target / "ocrkit.json").is_file():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target
