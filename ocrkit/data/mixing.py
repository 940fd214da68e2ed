"""Weighted mixtures of training sets: e.g. real receipts 0.3, other real lines 0.3, synthetic 0.4.

A mixture is drawn once per run (seeded): each source contributes `weight / sum(weights)` of the
epoch's items, repeating a small source or sampling a large one, so one large set cannot drown the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from torch.utils.data import Dataset

from ocrkit.util.config import ConfigError

T = TypeVar("T")


def parse_sources(spec: str | Sequence[Any], key: str) -> list[tuple[str, float]]:
    """`"path"` or `[{"path": p, "weight": w} | "path", ...]` → [(path, weight)]."""
    if isinstance(spec, str):
        return [(spec, 1.0)]
    out = []
    for entry in spec:
        if isinstance(entry, str):
            out.append((entry, 1.0))
        elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
            weight = entry.get("weight", 1.0)
            if not isinstance(weight, int | float) or weight < 0:
                raise ConfigError(f"{key}: weight of {entry['path']!r} must be a number >= 0")
            out.append((entry["path"], float(weight)))
        else:
            raise ConfigError(f"{key}: expected a path or {{path, weight}}, got {entry!r}")
    if not out or sum(w for _, w in out) <= 0:
        raise ConfigError(f"{key}: no source with a positive weight")
    return out


def mixture(sources: Sequence[tuple[Sequence[T], float]], total: int = 0, seed: int = 0) -> list[T]:
    """Items of each source in proportion to its weight; `total` items (0: as many as all sources hold)."""
    total = total or sum(len(items) for items, _ in sources)
    weight_sum = sum(w for items, w in sources if items)
    rng = np.random.default_rng(seed)
    out: list[T] = []
    for items, weight in sources:
        if not items or weight <= 0:
            continue
        count = round(total * weight / weight_sum)
        whole, rest = divmod(count, len(items))
        picked = list(range(len(items))) * whole + sorted(
            rng.choice(len(items), rest, replace=False).tolist()
        )
        out.extend(items[i] for i in picked)
    return out


class MixtureDataset(Dataset):
    """Items of several datasets in proportion to their weights (one seeded draw, see `mixture`)."""

    def __init__(self, sources: Sequence[tuple[Dataset, float]], total: int = 0, seed: int = 0) -> None:
        self.datasets = [ds for ds, _ in sources]
        keyed = [([(k, i) for i in range(len(ds))], w) for k, (ds, w) in enumerate(sources)]
        self.index = mixture(keyed, total, seed)

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, item: int) -> Any:
        k, i = self.index[item]
        return self.datasets[k][i]

    def page_sizes(self) -> list[tuple[int, int]]:
        """(height, width) per drawn item, from sources that have `page_sizes` (for bucketing)."""
        sizes = [ds.page_sizes() for ds in self.datasets]
        return [sizes[k][i] for k, i in self.index]
