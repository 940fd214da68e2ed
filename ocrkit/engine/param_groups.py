"""The AdamW parameter-group rule both tasks use: a backbone may learn at a multiple of the learning rate,
and 1-D tensors (biases, norms) and named embeddings take no weight decay."""

from __future__ import annotations

from collections.abc import Callable

import torch


def param_groups(
    model: torch.nn.Module,
    lr: float,
    weight_decay: float,
    in_backbone: Callable[[str], bool],
    backbone_lr_mult: float = 1.0,
    no_decay_names: tuple[str, ...] = (),
    by_setting: bool = False,
) -> list[dict]:
    """Trainable parameters in AdamW groups.

    One group per (in backbone, decays) class in sorted order, or with `by_setting` one group per distinct
    (lr, weight decay) in the order first met: the layouts detector and recognizer checkpoints hold, so
    runs resume onto the same optimizer state."""
    groups: dict[tuple, list[torch.nn.Parameter]] = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        backbone = in_backbone(name)
        flat = param.ndim < 2 or any(k in name.lower() for k in no_decay_names)
        setting = (lr * (backbone_lr_mult if backbone else 1.0), 0.0 if flat else weight_decay)
        groups.setdefault(setting if by_setting else (backbone, flat, *setting), []).append(param)
    keys = list(groups) if by_setting else sorted(groups)
    return [{"params": groups[k], "lr": k[-2], "weight_decay": k[-1]} for k in keys]
