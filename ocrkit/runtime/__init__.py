"""Torch-free inference with onnxruntime (used by `--backend onnx` and by deploy/).

Importing this package must never import torch or transformers (a test checks sys.modules).
"""

from __future__ import annotations

from pathlib import Path

from ocrkit.runtime.detector import OnnxDetector
from ocrkit.runtime.recognizer import OnnxRecognizer

__all__ = ["OnnxDetector", "OnnxRecognizer", "load_onnx_models"]


def load_onnx_models(
    det_dir: str | Path,
    rec_dir: str | Path,
    threads: int | None = None,
    opt_level: str = "all",
    decoding: str | None = None,
) -> tuple[OnnxDetector, OnnxRecognizer]:
    return OnnxDetector(det_dir, threads, opt_level), OnnxRecognizer(rec_dir, threads, opt_level, decoding)
