"""Detector batches: letterboxed pages → the model's pixel tensor, pixel boxes → DETR labels.

The dataset (ocrkit.data.coco_dataset) hands over pages and boxes in pixels; the encoding the model
expects lives here, beside the model, and inference builds its input with the same `pixel_tensor`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ocrkit import boxes as B
from ocrkit.preprocess import Geometry, detector_input


def pixel_tensor(pages: list[np.ndarray]) -> torch.Tensor:
    """Same-size letterboxed HxWx3 uint8 pages → float [N, 3, H, W] in [0, 1]."""
    return torch.from_numpy(np.stack([detector_input(p) for p in pages]))


def make_labels(xyxy: np.ndarray, geometry: Geometry) -> dict[str, torch.Tensor]:
    """Original-pixel xyxy boxes → HF DETR labels in the letterboxed frame (normalised cxcywh)."""
    mapped = B.normalize(geometry.map(xyxy), geometry.width, geometry.height).clip(0, 1)
    return {
        "class_labels": torch.zeros(len(mapped), dtype=torch.int64),
        "boxes": torch.from_numpy(B.xyxy_to_cxcywh(mapped)),
    }


def collate_pages(items: list[dict[str, Any]]) -> dict[str, Any]:
    """items: {"pixels", "boxes", "geometry", "image_id"} (ocrkit.data.coco_dataset) → a model batch."""
    return {
        "pixel_values": pixel_tensor([it["pixels"] for it in items]),
        "labels": [make_labels(it["boxes"], it["geometry"]) for it in items],
        "geometry": [it["geometry"] for it in items],
        "image_id": [it["image_id"] for it in items],
    }
