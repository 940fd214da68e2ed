"""Exponential moving average of weights (what gets evaluated and shipped)."""

from __future__ import annotations

import copy
import math

import torch


class ModelEma:
    """EMA copy of a model; the decay ramps up over `warmup_steps` so early weights fade out fast."""

    def __init__(self, model: torch.nn.Module, decay: float, warmup_steps: int) -> None:
        self.module = copy.deepcopy(model).eval()
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.decay = decay
        self.warmup_steps = max(1, warmup_steps)
        self.updates = 0

    def current_decay(self) -> float:
        return self.decay * (1 - math.exp(-self.updates / self.warmup_steps))

    @torch.no_grad()
    def update(self, model: torch.nn.Module) -> None:
        self.updates += 1
        d = self.current_decay()
        source = model.state_dict()
        for name, ema_value in self.module.state_dict().items():
            value = source[name].detach()
            if ema_value.dtype.is_floating_point:
                ema_value.lerp_(value.to(ema_value.dtype), 1 - d)
            else:
                ema_value.copy_(value)
