"""Torch-free line detector: letterbox → ONNX graph (model + NMS) → page pixels (`postprocess.to_page`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ocrkit.hub.model_folder import check_folder
from ocrkit.images.postprocess import to_page
from ocrkit.images.preprocess import detector_input
from ocrkit.runtime.session import create_session
from ocrkit.util.errors import ModelError


class OnnxDetector:
    """Same contract as the torch Detector: predict(images) → [(xyxy original pixels, scores)]."""

    def __init__(self, folder: str | Path, threads: int | None = None, opt_level: str = "all") -> None:
        folder = Path(folder)
        spec = check_folder(folder, "detector")
        if spec.onnx is None:
            raise ModelError(folder, "not an exported detector folder (make one with `ocrkit export`)")
        self.spec = spec
        self.session = create_session(folder / spec.onnx, threads, opt_level)

    def predict(self, images: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        results = []
        for image in images:
            pixels, geometry = self.spec.sizing.letterbox(image)
            inputs = {"pixel_values": detector_input(pixels)[None]}
            boxes, scores = self.session.run(["boxes", "scores"], inputs)
            results.append(to_page(boxes, scores, geometry, self.spec.post))
        return results
