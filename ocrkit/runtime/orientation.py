"""Torch-free page-orientation classifier: the exported graph through onnxruntime."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ocrkit.hub.model_folder import check_folder
from ocrkit.orientation.decide import classify
from ocrkit.pages.document import Orientation
from ocrkit.runtime.session import create_session

# The classifier reads eight 128-px windows, a few milliseconds of work: split over two threads they wait
# on each other. The orientation step on the 16 development receipts (2-core CPU, ten interleaved rounds,
# medians of their means): 18.4 ms per page with the graph on two threads, 16.3 ms on one, every page
# turned, straightened and cut alike.
CLASSIFIER_THREADS = 1


class OnnxOrientation:
    """Same contract as ocrkit.orientation.model.OrientationClassifier: classify(page) → Orientation."""

    def __init__(self, folder: str | Path, opt_level: str = "all") -> None:
        folder = Path(folder)
        self.spec = check_folder(folder, "orientation")
        onnx = folder / (self.spec.onnx or "orientation.onnx")
        self.session = create_session(onnx, CLASSIFIER_THREADS, opt_level)

    def logits(self, windows: np.ndarray) -> np.ndarray:
        (out,) = self.session.run(["logits"], {"windows": windows})
        return out

    def classify(self, image: np.ndarray) -> Orientation:
        return classify(image, self.spec, self.logits)
