"""Torch-free page-orientation classifier: the exported graph through onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ocrkit.hub.model_folder import check_folder
from ocrkit.orientation.decide import classify
from ocrkit.pages.document import Orientation
from ocrkit.runtime.session import create_session


class OnnxOrientation:
    """Same contract as ocrkit.orientation.model.OrientationClassifier: classify(page) → Orientation."""

    def __init__(self, folder: str | Path, threads: int | None = None, opt_level: str = "all") -> None:
        folder = Path(folder)
        self.spec = check_folder(folder, "orientation")
        self.session = create_session(folder / (self.spec.onnx or "orientation.onnx"), threads, opt_level)

    def logits(self, windows: np.ndarray) -> np.ndarray:
        (out,) = self.session.run(["logits"], {"windows": windows})
        return out

    def classify(self, image: np.ndarray) -> Orientation:
        return classify(image, self.spec, self.logits)
