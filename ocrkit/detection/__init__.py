"""Text-line detection: D-FINE / RT-DETR factory, CIoU loss, post-processing, inference.

Imports are lazy so that the torch-free ONNX runtime can import `ocrkit.detection.postprocess`
without pulling in torch and transformers through this package.
"""

from __future__ import annotations

from ocrkit.lazy import lazy_exports

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "ocrkit.detection.factory": ("create_detector",),
        "ocrkit.detection.predictor": ("Detector", "load_detector"),
        "ocrkit.detection.postprocess": ("PostConfig", "postprocess"),
    },
)
