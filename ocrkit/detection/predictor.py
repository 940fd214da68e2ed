"""Line detector inference: letterbox → model → post-process, from a saved model folder.

The folder's settings (ocrkit.hub.model_folder) hold the preprocessing the model was trained with, so
inference can never resize differently than training did.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from safetensors import SafetensorError

from ocrkit.detection.batch import pixel_tensor
from ocrkit.hub.model_folder import check_folder
from ocrkit.images.postprocess import PostConfig, postprocess
from ocrkit.images.preprocess import Geometry, PageSizing
from ocrkit.util.errors import ModelError


@torch.no_grad()
def raw_outputs(model: torch.nn.Module, pixel_values: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(logits [B, Q, C], normalised cxcywh boxes [B, Q, 4]) as float32 numpy.

    Inputs go in channels-last (NHWC) layout, the faster one for oneDNN convolutions on CPU.
    """
    device = next(model.parameters()).device
    out = model(pixel_values=pixel_values.to(device).contiguous(memory_format=torch.channels_last))
    return out.logits.float().cpu().numpy(), out.pred_boxes.float().cpu().numpy()


class Detector:
    """`predict(images)` → per image (xyxy float32 [N, 4] in original pixels, scores [N]), best first."""

    def __init__(
        self,
        model: torch.nn.Module,
        sizing: PageSizing,
        post: PostConfig | None = None,
        batch_size: int = 4,
    ) -> None:
        self.model = model.eval().to(memory_format=torch.channels_last)
        self.sizing = sizing
        self.post = post or PostConfig()
        self.batch_size = batch_size

    def predict(self, images: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        results: list[tuple[np.ndarray, np.ndarray]] = []
        for start in range(0, len(images), self.batch_size):
            chunk = [self.sizing.letterbox(im) for im in images[start : start + self.batch_size]]
            results += self._detect([c[0] for c in chunk], [c[1] for c in chunk])
        return results

    def _detect(
        self, pixels: list[np.ndarray], geometries: list[Geometry]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        if not self.sizing.square:  # variable sizes: one image per forward pass
            return [
                r for p, g in zip(pixels, geometries, strict=True) for r in self._detect_same_size([p], [g])
            ]
        return self._detect_same_size(pixels, geometries)

    def _detect_same_size(self, pixels: list[np.ndarray], geometries: list[Geometry]) -> list:
        logits, boxes = raw_outputs(self.model, pixel_tensor(pixels))
        return [
            postprocess(lg, bx, g, self.post) for lg, bx, g in zip(logits, boxes, geometries, strict=True)
        ]


def load_detector(model_dir: str | Path, device: str = "cpu", batch_size: int = 4) -> Detector:
    """A Detector from a folder written by DetectionTask.save_pretrained (HF folder + its settings)."""
    from transformers import AutoModelForObjectDetection

    from ocrkit.detection.compat import behave_as_457

    behave_as_457()
    model_dir = Path(model_dir)
    spec = check_folder(model_dir, "detector")
    try:
        model = AutoModelForObjectDetection.from_pretrained(model_dir, use_safetensors=True).to(device)
    except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as exc:
        raise ModelError(model_dir, f"cannot load the detector ({exc.__class__.__name__}: {exc})") from None
    return Detector(model, spec.sizing, spec.post, batch_size)
