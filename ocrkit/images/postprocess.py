"""DETR outputs of one image → line boxes in original-image pixels (numpy only).

Torch-free so the ONNX runtime reuses it. Order: sigmoid → top-k → score threshold → NMS →
drop nested duplicates (`boxes.suppress_contained`: DETR emits word boxes inside line boxes and boxes
over two lines that IoU-NMS misses) → `to_page`: original pixels, nested duplicates again. Reading
order is decided later (ocrkit.pages.reading_order, applied by pipeline.detect_page); boxes come back
sorted by decreasing score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ocrkit.images import boxes as B
from ocrkit.images.preprocess import Geometry


@dataclass
class PostConfig:
    score_threshold: float = 0.4  # minimum sigmoid score of a kept line
    nms_iou: float = 0.5  # IoU above which a lower-scoring box is a duplicate
    contain_threshold: float = 0.8  # share of a box's area inside a better box that makes it a duplicate
    top_k: int = 300  # best-scoring queries considered before thresholding


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def postprocess(
    logits: np.ndarray, pred_boxes: np.ndarray, geometry: Geometry, post: PostConfig
) -> tuple[np.ndarray, np.ndarray]:
    """logits [Q, C] and normalised cxcywh boxes [Q, 4] of one letterboxed image →
    (xyxy float32 [N, 4] in original pixels, scores float32 [N]) sorted by decreasing score."""
    scores = sigmoid(np.asarray(logits, dtype=np.float32)).max(-1)
    order = np.argsort(-scores, kind="stable")[: post.top_k]
    order = order[scores[order] >= post.score_threshold]
    scores = scores[order]
    xyxy = B.denormalize(
        B.cxcywh_to_xyxy(np.asarray(pred_boxes, dtype=np.float32)[order]), geometry.width, geometry.height
    )
    if len(order):
        keep = B.nms(xyxy, scores, post.nms_iou)
        xyxy, scores = xyxy[keep], scores[keep]
        keep = B.suppress_contained(xyxy, scores, post.contain_threshold)
        xyxy, scores = xyxy[keep], scores[keep]
    return to_page(xyxy, scores, geometry, post)


def to_page(
    xyxy: np.ndarray, scores: np.ndarray, geometry: Geometry, post: PostConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Kept boxes in letterboxed pixels (by decreasing score) → page pixels, for both backends: cut at the
    page's edges, those left with no area dropped (they lay in the padding), and containment judged once
    more, since a box running into the padding is cut and can only lie further inside its neighbour
    (below a will's signature: under 80 % inside at the detector's input, 84 % on the page)."""
    xyxy = geometry.unmap(xyxy)
    real = B.area(xyxy) > 0
    xyxy, scores = xyxy[real], np.asarray(scores, np.float32)[real]
    keep = B.suppress_contained(xyxy, scores, post.contain_threshold)
    return xyxy[keep].astype(np.float32), scores[keep].astype(np.float32)
