"""Line crops framed the way other tools and annotators frame them: blank margins, neighbouring lines.

Why: a recognizer trained on crops cut tight at the annotated box reads a box with a blank upper half, or
one that holds the descenders of the line above and the ascenders of the line below (dense print, tight
leading), as garbage. A clean line of 1910 print with one line height of blank paper above it read 5 of
6 words wrong, the same pixels trimmed to the ink read right. Training crops framed like that teach the
model which line a box is about: the tallest, most complete one near the middle.
"""

from __future__ import annotations

import cv2
import numpy as np

MAX_MARGIN = 1.0  # blank margin, in line heights, at most on any side
FRAGMENT = (0.15, 0.6)  # share of a neighbour's height that shows above or below
GAP = (0.0, 0.15)  # paper between the line and a neighbour's fragment, in line heights


def paper_level(image: np.ndarray) -> int:
    """The paper's gray level: the median of the crop's first and last columns."""
    return int(np.median(image[:, [0, -1]].reshape(-1, image.shape[2] if image.ndim == 3 else 1)))


def frame_line(
    image: np.ndarray,
    above: np.ndarray | None,
    below: np.ndarray | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """The HxWx3 crop with, on each side, nothing, a blank margin or (top and bottom) a neighbour's edge.

    `above` / `below` are other line crops; the line above shows its bottom rows, the one below its top
    rows, scaled to this line's height and tiled or cut to its width."""
    height, width = image.shape[:2]
    paper = paper_level(image)
    pieces = [image]
    for side, neighbour in (("top", above), ("bottom", below)):
        roll = rng.random()
        if roll < 0.35 or (roll >= 0.7 and neighbour is None):
            rows = int(round(rng.uniform(0.0, MAX_MARGIN) * height))
            piece = np.full((rows, width, 3), paper, np.uint8)
        elif roll >= 0.7:
            piece = _fragment(neighbour, height, width, side, paper, rng)
        else:
            continue
        pieces = [piece, *pieces] if side == "top" else [*pieces, piece]
    framed = np.concatenate(pieces, axis=0)
    left, right = (
        int(round(rng.uniform(0.0, MAX_MARGIN) * height)) if rng.random() < 0.3 else 0 for _ in range(2)
    )
    if left or right:
        framed = cv2.copyMakeBorder(framed, 0, 0, left, right, cv2.BORDER_CONSTANT, value=(paper,) * 3)
    return framed


def _fragment(
    neighbour: np.ndarray, height: int, width: int, side: str, paper: int, rng: np.random.Generator
) -> np.ndarray:
    """The neighbour's bottom (side="top") or top (side="bottom") rows at this line's scale, plus a gap."""
    scale = height / max(1, neighbour.shape[0])
    scaled = cv2.resize(
        neighbour, (max(1, round(neighbour.shape[1] * scale)), height), interpolation=cv2.INTER_AREA
    )
    # shift the neighbour's paper to this line's, so the seam does not show where a real page has none
    scaled = np.clip(scaled.astype(np.int16) + (paper - paper_level(scaled)), 0, 255).astype(np.uint8)
    reps = -(-width // scaled.shape[1])
    offset = int(rng.integers(0, max(1, scaled.shape[1] * reps - width + 1)))
    row = np.concatenate([scaled] * reps, axis=1)[:, offset : offset + width]
    rows = max(1, int(round(rng.uniform(*FRAGMENT) * height)))
    part = row[height - rows :] if side == "top" else row[:rows]
    gap = np.full((int(round(rng.uniform(*GAP) * height)), width, 3), paper, np.uint8)
    return np.concatenate([part, gap] if side == "top" else [gap, part], axis=0)
