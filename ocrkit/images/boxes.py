"""Box formats and torch-free box operations.

Public boundary: xyxy float pixels of the original image. Inside DETR models: normalised cxcywh.
All conversions live here so nobody re-derives them.
"""

from __future__ import annotations

import numpy as np


def xyxy_to_cxcywh(boxes: np.ndarray) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    return np.stack(
        [(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], 1
    )


def cxcywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    half_w, half_h = b[:, 2] / 2, b[:, 3] / 2
    return np.stack([b[:, 0] - half_w, b[:, 1] - half_h, b[:, 0] + half_w, b[:, 1] + half_h], 1)


def xywh_to_xyxy(boxes: np.ndarray) -> np.ndarray:
    """COCO [x, y, w, h] → xyxy."""
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    return np.concatenate([b[:, :2], b[:, :2] + b[:, 2:]], 1)


def xyxy_to_xywh(boxes: np.ndarray) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    return np.concatenate([b[:, :2], b[:, 2:] - b[:, :2]], 1)


def corners(boxes: np.ndarray) -> np.ndarray:
    """xyxy boxes → (n, 4, 2) corners, clockwise from the top left: the box as a polygon, to be turned."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    return np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)


def normalize(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Pixel boxes (any 4-coordinate x,y,x,y-ordered format) → [0, 1] relative to width/height."""
    return np.asarray(boxes, dtype=np.float32).reshape(-1, 4) / np.array(
        [width, height, width, height], np.float32
    )


def denormalize(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    return np.asarray(boxes, dtype=np.float32).reshape(-1, 4) * np.array(
        [width, height, width, height], np.float32
    )


def area(boxes: np.ndarray) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    return np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)


def intersection(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise intersection areas, shape (len(a), len(b))."""
    a = np.asarray(a, dtype=np.float32).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float32).reshape(-1, 4)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    return wh[..., 0] * wh[..., 1]


def iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of xyxy boxes, shape (len(a), len(b))."""
    inter = intersection(a, b)
    union = area(a)[:, None] + area(b)[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0).astype(np.float32)


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Greedy NMS; returns kept indices sorted by decreasing score (same contract as torchvision.ops.nms)."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    order = np.argsort(-np.asarray(scores, dtype=np.float32), kind="stable")
    keep: list[int] = []
    suppressed = np.zeros(len(boxes), dtype=bool)
    overlaps = iou(boxes, boxes)
    for i in order:
        if suppressed[i]:
            continue
        keep.append(int(i))
        suppressed |= overlaps[i] > iou_threshold
    return np.asarray(keep, dtype=np.int64)


# A container at most this many times as tall as the line inside it holds the same line (suppress_contained):
# two stacked lines make a box at least about twice as tall as one of them, while a loose box around one
# line reaches 1.6 times a tight one (a development receipt's "2" read twice at 1.5). A word narrower than
# BAND_WIDTH of its container stands for a line at least as tall as the page's median box: a word of
# x-height letters ("ma", "en") is shorter than its line.
SAME_LINE_HEIGHT = 1.75
# A box at least this share of a container's width reads a band of it (suppress_contained)...
BAND_WIDTH = 0.5
# ...from this share of its own height above it to as far below: the gap between two lines is read too.
BAND_GROW = 0.25


def median_height(heights: np.ndarray) -> float:
    """The lower median of box heights (0 for none): the page's line height, as the ONNX graph takes it."""
    return float(np.sort(heights)[(len(heights) - 1) // 2]) if len(heights) else 0.0


def suppress_contained(boxes: np.ndarray, scores: np.ndarray, threshold: float = 0.8) -> np.ndarray:
    """Drop a box that lies mostly (≥ threshold of its area) inside a higher-scoring box or inside a larger
    box of the same line; and drop a taller box holding a higher-scoring line when other boxes read every
    band of it. Returns kept indices by decreasing score.

    DETR-style detectors emit a word box inside its line box; IoU-NMS misses these because the IoU of a
    small box inside a large one is low. When the word scores higher than its line ("Slip N" inside
    "Slip No.: 8020178502" on a receipt), the line would otherwise be read twice. A taller container (two
    lines merged, a paragraph) drops only lower-scoring boxes, so real lines inside a false block survive;
    the block itself goes when the lines around and inside it read all of it (on handwritten wills, a box
    over one line and half the next, scored 0.42, held that line at 0.69: both were read), and stays when
    part of it is read by nothing else. Applied after NMS, and written without a sequential loop so the
    ONNX graph computes exactly the same thing.
    """
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    order = np.argsort(-np.asarray(scores, dtype=np.float32), kind="stable")
    ranked = boxes[order]
    areas = area(ranked)
    contained = intersection(ranked, ranked) / np.maximum(areas, 1e-12)[:, None] >= threshold
    higher = np.tril(np.ones((len(ranked), len(ranked)), dtype=bool), k=-1)  # column j ranks above row i
    heights = ranked[:, 3] - ranked[:, 1]
    widths = np.maximum(ranked[:, 2] - ranked[:, 0], 1e-12)
    across = np.minimum(ranked[:, None, 2], ranked[None, :, 2]) - np.maximum(
        ranked[:, None, 0], ranked[None, :, 0]
    )
    band = across / widths[None, :] >= BAND_WIDTH  # [i, j]: i spans a band of j
    line_height = np.where(band, heights[:, None], np.maximum(heights, median_height(heights))[:, None])
    taller = heights[None, :] > SAME_LINE_HEIGHT * line_height  # [i, j]: j is taller than i's line
    same_line = ~taller & (areas[None, :] > areas[:, None])
    duplicate = contained & (higher | same_line)  # [i, j]: i is a duplicate of j
    holds_better_line = (contained & higher.T & taller).any(axis=0)
    # [k, j]: how much of j's height k reads, when k spans a band of j and survives beside it
    grow = BAND_GROW * heights
    down = np.minimum(ranked[:, None, 3] + grow[:, None], ranked[None, :, 3])
    up = np.maximum(ranked[:, None, 1] - grow[:, None], ranked[None, :, 1])
    reads = band & ~duplicate & ~np.eye(len(ranked), dtype=bool)
    read_elsewhere = (np.clip(down - up, 0, None) * reads).sum(axis=0) >= heights
    dropped = duplicate.any(axis=1) | (holds_better_line & read_elsewhere)
    return order[~dropped].astype(np.int64)


def crowded(boxes: np.ndarray) -> np.ndarray:
    """Which boxes overlap another box of the same set (sharing rows and columns with it): a line box
    crowded by its neighbour's holds that neighbour's ascenders or descenders."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    shared = intersection(boxes, boxes)
    np.fill_diagonal(shared, 0.0)
    return (shared > 0).any(axis=1)


def nested_count(boxes: np.ndarray, threshold: float = 0.8) -> int:
    """How many boxes lie mostly (>= threshold of their area) inside another box of the same set: the
    nested boxes a page's output should not hold (a word box inside its line box reads the text twice).
    Of two equal boxes, one counts."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    if len(boxes) < 2:
        return 0
    areas = area(boxes)
    inside = intersection(boxes, boxes) / np.maximum(areas, 1e-12)[:, None]
    np.fill_diagonal(inside, 0.0)
    larger = (areas[None, :] > areas[:, None]) | (
        (areas[None, :] == areas[:, None]) & np.triu(np.ones_like(inside, dtype=bool), k=1)
    )
    return int(((inside >= threshold) & larger).any(axis=1).sum())
