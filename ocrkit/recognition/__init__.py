"""Line recognition: variable-resolution ViT encoder + TrOCR decoder.

Imports torch lazily, so the torch-free runtime can use `ocrkit.recognition.preprocessing`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ocrkit.recognition.predictor import Recognizer


def load_recognizer(
    model_dir: str | Path, num_beams: int = 1, device: str = "cpu", decoding: str | None = None
) -> Recognizer:
    """A Recognizer from a model folder (HF files + its settings); ModelError if missing or corrupt.
    `decoding` (attention | ctc | joint) overrides the folder's own choice."""
    from ocrkit.recognition.predictor import Recognizer

    recognizer = Recognizer.load(model_dir, num_beams=num_beams, decoding=decoding)
    recognizer.model.to(device)
    return recognizer


__all__ = ["load_recognizer"]
