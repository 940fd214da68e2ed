"""Learning-rate schedules as multipliers of the base LR (used through torch's LambdaLR)."""

from __future__ import annotations

import math

from ocrkit.engine.settings import TrainSettings


def lr_multiplier(step: int, s: TrainSettings) -> float:
    """Linear warmup, then cosine (or flat then cosine) down to `min_lr_ratio`."""
    if step < s.warmup_steps:
        return (step + 1) / s.warmup_steps
    if s.schedule == "constant":
        return 1.0
    start = s.warmup_steps
    if s.schedule == "flat_cosine":
        start = max(start, int(s.steps * s.flat_fraction))
        if step < start:
            return 1.0
    elif s.schedule != "cosine":
        raise ValueError(f"train.schedule: unknown schedule {s.schedule!r} (cosine | flat_cosine | constant)")
    progress = min(1.0, (step - start) / max(1, s.steps - start))
    return s.min_lr_ratio + (1 - s.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
