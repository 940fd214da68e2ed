"""Which annotated lines a detector misses, by size: recall per box height and width bin, the share of
boxes left uncovered, and pictures of the misses.

Sizes are measured in the detector's input pixels (page pixels × the letterbox scale), because that is
what decides whether a line is big enough for the model's stride-8/16/32 features; page pixels differ
tenfold between a phone photo of a receipt and a 300-dpi book scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

from ocrkit.detection.metrics import match_pairs
from ocrkit.images import boxes as B

HEIGHT_EDGES = (0, 8, 12, 16, 24, 32)  # box height at the detector's input, px
WIDTH_EDGES = (0, 32, 64, 128, 256, 512)  # box width at the detector's input, px
UNCOVERED = 0.3  # a box with less than this share of its area under any one detected box is not found


def best_cover(gt_xyxy: np.ndarray, pred_xyxy: np.ndarray) -> np.ndarray:
    """Per annotated box, the largest share of its area inside a single detected box (0 with none)."""
    if len(gt_xyxy) == 0 or len(pred_xyxy) == 0:
        return np.zeros(len(gt_xyxy), np.float32)
    inter = B.intersection(gt_xyxy, pred_xyxy)
    return (inter.max(1) / np.maximum(B.area(gt_xyxy), 1e-12)).astype(np.float32)


def found(gt_xyxy: np.ndarray, pred_xyxy: np.ndarray, iou_threshold: float = 0.5) -> np.ndarray:
    """Per annotated box, whether the one-to-one matching of line F1 pairs it with a detected box."""
    hit = np.zeros(len(gt_xyxy), bool)
    hit[match_pairs(pred_xyxy, gt_xyxy, iou_threshold)[1]] = True
    return hit


def bin_labels(edges: Sequence[int]) -> list[str]:
    """'<8', '8-12', ..., '≥32' for edges (0, 8, 12, ..., 32)."""
    inner = [f"{lo}-{hi}" for lo, hi in zip(edges[1:-1], edges[2:], strict=False)]
    return [f"<{edges[1]}", *inner, f"≥{edges[-1]}"]


@dataclass
class MissCounts:
    """Annotated boxes of one subset, with their size at the detector input and whether they were found."""

    heights: list[float] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    covers: list[float] = field(default_factory=list)

    def add_page(self, gt_xyxy: np.ndarray, pred_xyxy: np.ndarray, scale: float) -> np.ndarray:
        """Count one page's boxes (page pixels; `scale` = detector input px per page px); its hit mask."""
        gt_xyxy = np.asarray(gt_xyxy, np.float32).reshape(-1, 4)
        pred_xyxy = np.asarray(pred_xyxy, np.float32).reshape(-1, 4)
        hits = found(gt_xyxy, pred_xyxy)
        self.heights += ((gt_xyxy[:, 3] - gt_xyxy[:, 1]) * scale).tolist()
        self.widths += ((gt_xyxy[:, 2] - gt_xyxy[:, 0]) * scale).tolist()
        self.hits += hits.tolist()
        self.covers += best_cover(gt_xyxy, pred_xyxy).tolist()
        return hits

    def recall_by(self, values: list[float], edges: Sequence[int]) -> list[tuple[str, int, float]]:
        """(bin label, boxes in the bin, recall@0.5 in the bin) for each bin of `values`."""
        bins = np.digitize(np.asarray(values), edges[1:])
        hits = np.asarray(self.hits, bool)
        rows = []
        for i, label in enumerate(bin_labels(edges)):
            inside = bins == i
            count = int(inside.sum())
            rows.append((label, count, float(hits[inside].mean()) if count else float("nan")))
        return rows

    def summary(self) -> dict:
        covers = np.asarray(self.covers, np.float32)
        return {
            "boxes": len(self.hits),
            "recall": float(np.mean(self.hits)) if self.hits else float("nan"),
            "uncovered": float((covers < UNCOVERED).mean()) if len(covers) else float("nan"),
            "by_height": self.recall_by(self.heights, HEIGHT_EDGES),
            "by_width": self.recall_by(self.widths, WIDTH_EDGES),
        }


def draw_misses(
    image: np.ndarray, gt_xyxy: np.ndarray, hits: np.ndarray, pred_xyxy: np.ndarray, longest: int = 900
) -> Image.Image:
    """The page with detected boxes in blue, found annotated boxes in thin green and missed ones in thick
    red, shrunk to `longest` px: where and what kind of line the detector leaves out, without its text."""
    picture = Image.fromarray(image).convert("RGB")
    scale = min(1.0, longest / max(picture.size))
    if scale < 1.0:
        picture = picture.resize((round(picture.width * scale), round(picture.height * scale)))
    draw = ImageDraw.Draw(picture)
    for box in np.asarray(pred_xyxy).reshape(-1, 4) * scale:
        draw.rectangle(box.tolist(), outline=(40, 90, 230), width=1)
    for box, hit in zip(np.asarray(gt_xyxy).reshape(-1, 4) * scale, hits, strict=True):
        draw.rectangle(box.tolist(), outline=(0, 170, 0) if hit else (230, 0, 0), width=1 if hit else 3)
    return picture
