"""Text-line detection: D-FINE / RT-DETR factory, CIoU loss, post-processing, inference.

Imports are lazy so that the torch-free ONNX runtime can import `ocrkit.postprocess`
without pulling in torch and transformers through this package.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "create_detector": "ocrkit.detection.factory",
    "Detector": "ocrkit.detection.predictor",
    "load_detector": "ocrkit.detection.predictor",
    "PostConfig": "ocrkit.postprocess",
    "postprocess": "ocrkit.postprocess",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ocrkit.detection' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
