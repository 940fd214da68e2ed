"""Line recognition: variable-resolution ViT encoder + TrOCR decoder.

Imports torch lazily: `import ocrkit.recognition` alone stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ocrkit.recognition.predictor import Recognizer


def load_recognizer(model_dir: str | Path, device: str = "cpu", decoding: str | None = None) -> Recognizer:
    """A Recognizer from a model folder (HF files + its settings); ModelError if missing or corrupt.
    `decoding` (attention | ctc | joint) overrides the folder's own choice."""
    from ocrkit.recognition.predictor import Recognizer

    recognizer = Recognizer.load(model_dir, decoding=decoding)
    recognizer.model.to(device)
    return recognizer


__all__ = ["load_recognizer"]
