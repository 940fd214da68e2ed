"""Low-frequency noise shared by the page and office degradations."""

from __future__ import annotations

import cv2
import numpy as np


def smooth_noise(h: int, w: int, rng: np.random.Generator, cells: int) -> np.ndarray:
    """An h×w field of smooth noise, about [-1, 1], with `cells` random values along the longer side:
    paper blotches, uneven toner, wet and dry ribbon."""
    small = rng.uniform(-1, 1, (max(2, cells * h // max(h, w)), max(2, cells * w // max(h, w)))).astype(
        np.float32
    )
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
