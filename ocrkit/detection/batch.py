"""Detector batches: letterboxed pages → the model's pixel tensor, pixel boxes → DETR labels.

The dataset (ocrkit.data.coco_dataset) hands over pages and boxes in pixels; the encoding the model
expects lives here, beside the model, and inference builds its input with the same `pixel_tensor`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from ocrkit.images import boxes as B
from ocrkit.images.preprocess import Geometry, detector_input


def pixel_tensor(pages: list[np.ndarray]) -> torch.Tensor:
    """Same-size letterboxed HxWx3 uint8 pages → float [N, 3, H, W] in [0, 1]."""
    return torch.from_numpy(np.stack([detector_input(p) for p in pages]))


def pad_to_largest(
    pages: list[np.ndarray], geometries: list[Geometry]
) -> tuple[list[np.ndarray], list[Geometry]]:
    """Page-shaped letterboxes of one batch → all padded bottom/right to the batch's largest H and W, with
    geometries that say so (the model's normalised boxes are relative to the padded size)."""
    height = max(p.shape[0] for p in pages)
    width = max(p.shape[1] for p in pages)
    padded, shifted = [], []
    for page, g in zip(pages, geometries, strict=True):
        out = np.zeros((height, width, 3), dtype=page.dtype)
        out[: page.shape[0], : page.shape[1]] = page
        padded.append(out)
        extra_w, extra_h = width - page.shape[1], height - page.shape[0]
        shifted.append(
            replace(
                g,
                width=width,
                height=height,
                pad_right=g.pad_right + extra_w,
                pad_bottom=g.pad_bottom + extra_h,
            )
        )
    return padded, shifted


def make_labels(xyxy: np.ndarray, geometry: Geometry) -> dict[str, torch.Tensor]:
    """Original-pixel xyxy boxes → HF DETR labels in the letterboxed frame (normalised cxcywh)."""
    mapped = B.normalize(geometry.map(xyxy), geometry.width, geometry.height).clip(0, 1)
    return {
        "class_labels": torch.zeros(len(mapped), dtype=torch.int64),
        "boxes": torch.from_numpy(B.xyxy_to_cxcywh(mapped)),
    }


def collate_pages(items: list[dict[str, Any]]) -> dict[str, Any]:
    """items: {"pixels", "boxes", "geometry", "image_id"} (ocrkit.data.coco_dataset) → a model batch;
    pages of different shapes are padded to the largest."""
    pages, geometries = pad_to_largest([it["pixels"] for it in items], [it["geometry"] for it in items])
    return {
        "pixel_values": pixel_tensor(pages),
        "labels": [make_labels(it["boxes"], g) for it, g in zip(items, geometries, strict=True)],
        "geometry": geometries,
        "image_id": [it["image_id"] for it in items],
    }
