"""Text-line detection: D-FINE / RT-DETR factory, CIoU loss, post-processing, inference.

Imports are lazy so that `import ocrkit.detection` does not load torch and transformers
until a model is built or loaded.
"""

from __future__ import annotations

from ocrkit.util.lazy import lazy_exports

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "ocrkit.detection.factory": ("create_detector",),
        "ocrkit.detection.predictor": ("Detector", "load_detector"),
        "ocrkit.images.postprocess": ("PostConfig", "postprocess"),
    },
)
