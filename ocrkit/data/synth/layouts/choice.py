"""How the layout tables write a random pick among named options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Choice:
    """Options drawn with `rng.choice`: uniformly when `weights` is None, else by those weights."""

    options: tuple[Any, ...]
    weights: tuple[float, ...] | None = None

    def draw(self, rng: np.random.Generator, size: int | None = None) -> Any:
        weights = None if self.weights is None else list(self.weights)
        return rng.choice(list(self.options), size, p=weights)
