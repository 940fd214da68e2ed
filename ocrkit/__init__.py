"""ocrkit: find the text lines on document pages and read them.

Public API (heavy modules load lazily so `import ocrkit` stays fast):
    OCR, Page, Line, load_detector, load_recognizer, letterbox, Geometry, load_image,
    InputError, ModelError.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# albumentations checks PyPI for a newer version on import; ocrkit runs offline and must not phone home
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

__version__ = "0.2.0"

_EXPORTS = {
    "OCR": "ocrkit.pipeline",
    "Page": "ocrkit.document",
    "Line": "ocrkit.document",
    "load_detector": "ocrkit.detection",
    "load_recognizer": "ocrkit.recognition",
    "letterbox": "ocrkit.preprocess",
    "Geometry": "ocrkit.preprocess",
    "load_image": "ocrkit.io",
    "InputError": "ocrkit.errors",
    "ModelError": "ocrkit.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ocrkit' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
