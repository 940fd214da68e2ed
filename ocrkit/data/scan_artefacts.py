"""Dark marks a scanner leaves beside the text, drawn onto training pages as background.

Why: on scans of old books the detector boxes the black bars along the page edges, blots and specks,
and the recognizer reads words into some of them (unseen 1500–1779 print: 525 of 2 834 kept boxes cover
no annotated line; docs/models/detector/training-log.md). The training pages are mostly clean crops of
the text block, so the detector never learnt such marks as background. Marks are drawn only on paper
outside every line box (with a margin), so the boxes stay exactly the page's lines.
"""

from __future__ import annotations

import cv2
import numpy as np

KINDS = ("edge", "blot", "bar", "specks")


def add_scan_artefacts(image: np.ndarray, boxes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy of the HxWx3 uint8 page with one to three marks of random KINDS, none over a line box
    (xyxy pixels, widened by a quarter of the median line height)."""
    height, width = image.shape[:2]
    darkness = np.zeros((height, width), np.float32)
    for kind in rng.choice(KINDS, size=int(rng.integers(1, 4))):
        _DRAW[kind](darkness, rng)
    darkness = cv2.GaussianBlur(darkness, (3, 3), 0) * _paper_mask(boxes, height, width)
    ink = float(rng.uniform(10, 70))
    alpha = darkness[:, :, None]
    return (image.astype(np.float32) * (1 - alpha) + ink * alpha).round().astype(np.uint8)


def _paper_mask(boxes: np.ndarray, height: int, width: int) -> np.ndarray:
    """1 where a mark may go: everywhere but the line boxes and a margin around them."""
    mask = np.ones((height, width), np.float32)
    if len(boxes):
        margin = 0.25 * float(np.median(boxes[:, 3] - boxes[:, 1]))
        for x0, y0, x1, y1 in boxes:
            top, left = max(0, int(y0 - margin)), max(0, int(x0 - margin))
            mask[top : int(np.ceil(y1 + margin)), left : int(np.ceil(x1 + margin))] = 0
    return mask


def _edge(darkness: np.ndarray, rng: np.random.Generator) -> None:
    """A dark band along one page edge with a ragged inner side (the scanner lid, the book's edge)."""
    height, width = darkness.shape
    side = int(rng.integers(4))
    length = height if side < 2 else width
    across = width if side < 2 else height
    base = rng.uniform(0.005, 0.06) * across
    ragged = np.convolve(rng.normal(0, 1, length + 40), np.ones(41) / 41, mode="valid")[:length]
    depth = np.clip(base * (1 + 2.5 * ragged), 1, 0.08 * across).astype(int)
    strength = float(rng.uniform(0.7, 1.0))
    for i, d in enumerate(depth):
        if side == 0:
            darkness[i, :d] = strength
        elif side == 1:
            darkness[i, width - d :] = strength
        elif side == 2:
            darkness[:d, i] = strength
        else:
            darkness[height - d :, i] = strength


def _blot(darkness: np.ndarray, rng: np.random.Generator) -> None:
    """A filled, turned ellipse (ink blot, stain, hole)."""
    height, width = darkness.shape
    short = min(height, width)
    axes = (int(rng.uniform(0.005, 0.08) * short) + 1, int(rng.uniform(0.005, 0.08) * short) + 1)
    centre = (int(rng.integers(width)), int(rng.integers(height)))
    cv2.ellipse(darkness, centre, axes, float(rng.uniform(0, 180)), 0, 360, float(rng.uniform(0.6, 1.0)), -1)


def _bar(darkness: np.ndarray, rng: np.random.Generator) -> None:
    """A long thin dark bar, tapering (a fold's shadow, a gutter, a rule drawn across the margin)."""
    height, width = darkness.shape
    horizontal = bool(rng.integers(2))
    along, across = (width, height) if horizontal else (height, width)
    length = int(rng.uniform(0.2, 0.8) * along)
    start, at = int(rng.integers(max(1, along - length))), int(rng.integers(across))
    thick = max(2, int(rng.uniform(0.003, 0.02) * across))
    taper = np.linspace(1.0, rng.uniform(0.2, 1.0), length)
    for i, t in enumerate(taper):
        half = max(1, int(thick * t / 2))
        if horizontal:
            darkness[max(0, at - half) : at + half, start + i] = 1.0
        else:
            darkness[start + i, max(0, at - half) : at + half] = 1.0


def _specks(darkness: np.ndarray, rng: np.random.Generator) -> None:
    """A scatter of small dark dots (dust, foxing)."""
    height, width = darkness.shape
    for _ in range(int(rng.integers(5, 40))):
        centre = (int(rng.integers(width)), int(rng.integers(height)))
        cv2.circle(darkness, centre, int(rng.integers(1, 5)), float(rng.uniform(0.5, 1.0)), -1)


_DRAW = {"edge": _edge, "blot": _blot, "bar": _bar, "specks": _specks}
