"""Differences between transformers 4.57 and 5.x that the detectors meet, handled in one place.

Config keys: 4.57 configs take `use_pretrained_backbone` / `use_timm_backbone` / `backbone` to
say "build the backbone from `backbone_config`, no download"; 5.x always does that and no longer
declares those keys (passed anyway, they end up as dead entries in config.json). `accepted_kwargs`
keeps only the keys the installed config class declares.

`behave_as_457` makes 5.x models compute what 4.57 computes, so a model folder reads the same under
either version (call it before building or loading a detector; a no-op under 4.57):

- Tied heads: 5.x D-FINE and RT-DETRv2 declare, besides tying the decoder's prediction heads to the
  model's, regex ties from decoder layer 1.. to layer 0. Those are superseded by the decoder ties (each
  layer keeps its own head, as in 4.57), and with a single decoder layer they match nothing and building
  the model raises. They are dropped.
- Position embedding of the encoder's top feature map: 4.57 lays the 2-D sine-cosine grid out
  width-major while the features are flattened height-major, which on a non-square (page-shaped) input
  gives each position another one's code; 5.x lays it out height-major. Square inputs get the same
  embedding either way, page-shaped ones do not: a page-shaped detector trained under one version reads
  worse under the other. 5.x gets 4.57's layout back.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch


def accepted_kwargs(config_class: type, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` without the keys `config_class` does not declare (its `__init__` parameters)."""
    declared = inspect.signature(config_class.__init__).parameters
    return {k: v for k, v in kwargs.items() if k in declared}


def behave_as_457() -> None:
    """Make transformers 5.x detectors compute what 4.57 computes (see the module docstring). Idempotent."""
    from transformers import DFineForObjectDetection, RTDetrForObjectDetection, RTDetrV2ForObjectDetection

    for model_class in (DFineForObjectDetection, RTDetrForObjectDetection, RTDetrV2ForObjectDetection):
        keys = getattr(model_class, "_tied_weights_keys", None)
        if isinstance(keys, dict):  # 4.57: a list of module names
            model_class._tied_weights_keys = {t: s for t, s in keys.items() if "\\d" not in t}
        module = inspect.getmodule(model_class)
        if hasattr(module, "build_2d_sinusoidal_position_embedding"):  # 4.57: a method of the encoder
            module.build_2d_sinusoidal_position_embedding = position_embedding_457


def position_embedding_457(
    height: int,
    width: int,
    embed_dim: int = 256,
    temperature: float = 10000.0,
    cls_token: bool = False,
    device: torch.device | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """transformers 4.57's 2-D sine-cosine embedding ([H*W, embed_dim], grid laid out width-major) with
    the signature of 5.x's `build_2d_sinusoidal_position_embedding`."""
    if embed_dim % 4 != 0 or cls_token:
        raise ValueError("the 2-D position embedding needs embed_dim divisible by 4 and no class token")
    grid_w = torch.arange(width, device=device).to(dtype)
    grid_h = torch.arange(height, device=device).to(dtype)
    grid_w, grid_h = torch.meshgrid(grid_w, grid_h, indexing="ij")
    pos_dim = embed_dim // 4
    omega = 1.0 / (temperature ** (torch.arange(pos_dim, device=device).to(dtype) / pos_dim))
    out_w = grid_w.flatten()[..., None] @ omega[None]
    out_h = grid_h.flatten()[..., None] @ omega[None]
    return torch.concat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)
