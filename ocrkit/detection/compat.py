"""Differences between transformers 4.57 and 5.x that the detectors meet, handled in one place.

Config keys: 4.57 configs take `use_pretrained_backbone` / `use_timm_backbone` / `backbone` to
say "build the backbone from `backbone_config`, no download"; 5.x always does that and no longer
declares those keys (passed anyway, they end up as dead entries in config.json). `accepted_kwargs`
keeps only the keys the installed config class declares.

Tied heads: 5.x D-FINE and RT-DETRv2 declare, besides tying the decoder's prediction heads to the
model's, regex ties from decoder layer 1.. to layer 0. Those are superseded by the decoder ties (each
layer keeps its own head, as in 4.57), and with a single decoder layer they match nothing and
building the model raises. `untie_layer_copies` drops them so one-layer detectors build and load.
"""

from __future__ import annotations

import inspect
from typing import Any


def accepted_kwargs(config_class: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` without the keys `config_class` does not declare (its `__init__` parameters)."""
    declared = inspect.signature(config_class.__init__).parameters
    return {k: v for k, v in kwargs.items() if k in declared}


def untie_layer_copies() -> None:
    """Drop transformers 5's per-layer regex ties (`bbox_embed.(?![0])\\d+` → layer 0) from the
    detector classes; call before building or loading a detector. Idempotent.

    A no-op under 4.57, whose `_tied_weights_keys` are lists of module names.
    """
    from transformers import DFineForObjectDetection, RTDetrForObjectDetection, RTDetrV2ForObjectDetection

    for model_class in (DFineForObjectDetection, RTDetrForObjectDetection, RTDetrV2ForObjectDetection):
        keys = getattr(model_class, "_tied_weights_keys", None)
        if isinstance(keys, dict):
            model_class._tied_weights_keys = {t: s for t, s in keys.items() if "\\d" not in t}
