"""ocrkit: find the text lines on document pages and read them.

Public API (heavy modules load lazily so `import ocrkit` stays fast):
    OCR, Page, Line, Word, Orientation, render, load_detector, load_recognizer, letterbox, Geometry,
    PageSizing, load_image, InputError, ModelError, train and TrainRequest (what `ocrkit finetune` runs).
"""

from __future__ import annotations

import os

from ocrkit.util.lazy import lazy_exports

# albumentations checks PyPI for a newer version on import; ocrkit runs offline and must not phone home
os.environ.setdefault("NO_ALBUMENTATIONS_UPDATE", "1")

__version__ = "0.4.0"

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "ocrkit.pipeline": ("OCR",),
        "ocrkit.pages.document": ("Page", "Line", "Word", "Orientation"),
        "ocrkit.pages.formats": ("render",),
        "ocrkit.detection": ("load_detector",),
        "ocrkit.recognition": ("load_recognizer",),
        "ocrkit.images.preprocess": ("letterbox", "Geometry", "PageSizing"),
        "ocrkit.images.io": ("load_image",),
        "ocrkit.util.errors": ("InputError", "ModelError"),
        "ocrkit.finetune.run": ("TrainRequest", "train"),
    },
)
