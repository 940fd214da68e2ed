"""Torch-free line detector: letterbox → ONNX graph (model + NMS) → unmap to page pixels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ocrkit import boxes as B
from ocrkit.errors import ModelError
from ocrkit.preprocess import letterbox
from ocrkit.runtime.session import create_session


class OnnxDetector:
    """Same contract as the torch Detector: predict(images) → [(xyxy original pixels, scores)]."""

    def __init__(self, folder: str | Path, threads: int | None = None, opt_level: str = "all") -> None:
        folder = Path(folder)
        settings_path = folder / "ocrkit.json"
        if not settings_path.is_file():
            raise ModelError(folder, "not an exported detector folder: ocrkit.json is missing")
        self.settings = json.loads(settings_path.read_text(encoding="utf-8"))
        self.longest = int(self.settings["longest"])
        self.divisor = int(self.settings.get("divisor", 32))
        self.session = create_session(folder / self.settings.get("onnx", "detector.onnx"), threads, opt_level)

    def predict(self, images: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        results = []
        for image in images:
            pixels, geometry = letterbox(image, self.longest, self.divisor, square=True)
            x = np.ascontiguousarray(pixels.transpose(2, 0, 1)[None], dtype=np.float32) / np.float32(255.0)
            boxes, scores = self.session.run(["boxes", "scores"], {"pixel_values": x})
            xyxy = geometry.unmap(boxes)
            real = B.area(xyxy) > 0
            results.append((xyxy[real].astype(np.float32), scores[real].astype(np.float32)))
        return results
