"""Aspect-ratio buckets as plain index lists (numpy only: the ONNX runtime batches exactly like torch)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def aspect_ratio_batches(
    shapes: Sequence[tuple[int, int]], batch_size: int, seed: int = 0
) -> list[list[int]]:
    """Shuffle, stable-sort by aspect (ties stay shuffled), cut into batches, shuffle the batches.

    Items with the same padded (H, W) are interchangeable for padding, so batch contents stay random
    within a shape while every batch spans a narrow range of shapes.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(shapes))
    key = np.array([math.log(h / w) for h, w in shapes], dtype=np.float64)
    order = order[np.argsort(key[order], kind="stable")]
    chunks = [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]
    return [chunks[i] for i in rng.permutation(len(chunks))]
