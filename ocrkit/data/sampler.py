"""Aspect-ratio bucketing: batches of items (lines, pages) with similar shapes, so batch padding stays small.

Deterministic per seed: the shipped engine calls `batch_sampler(dataset, batch_size, seed)` with a new
seed per epoch and shards the resulting batch list by rank (every rank builds the same list), so DDP
needs nothing here. For another loop, pass `seed + epoch` and take `batches[rank::world_size]`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
from torch.utils.data import Sampler

from ocrkit.images.buckets import aspect_ratio_batches


class AspectRatioBatchSampler(Sampler[list[int]]):
    """Torch Sampler over `aspect_ratio_batches` (the numpy-only grouping the ONNX runtime shares)."""

    def __init__(self, shapes: Sequence[tuple[int, int]], batch_size: int, seed: int = 0) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.shapes = list(shapes)
        self.batch_size = batch_size
        self.seed = seed

    def batches(self) -> list[list[int]]:
        return aspect_ratio_batches(self.shapes, self.batch_size, self.seed)

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches())

    def __len__(self) -> int:
        return math.ceil(len(self.shapes) / self.batch_size)


def random_batches(n: int, batch_size: int, seed: int = 0) -> list[list[int]]:
    """Plain shuffled batches (the baseline bucketing is compared against)."""
    order = np.random.default_rng(seed).permutation(n)
    return [order[i : i + batch_size].tolist() for i in range(0, n, batch_size)]


def padding_fraction(shapes: Sequence[tuple[int, int]], batches: list[list[int]], patch: int = 16) -> float:
    """Share of the batch tensors' patches that are batch padding (not part of any letterboxed line)."""
    content = total = 0
    for batch in batches:
        hs = [shapes[i][0] for i in batch]
        ws = [shapes[i][1] for i in batch]
        total += len(batch) * math.ceil(max(hs) / patch) * math.ceil(max(ws) / patch)
        content += sum(math.ceil(h / patch) * math.ceil(w / patch) for h, w in zip(hs, ws, strict=True))
    return 1.0 - content / total if total else 0.0
