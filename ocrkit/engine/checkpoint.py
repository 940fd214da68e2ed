"""Atomic training checkpoints: a complete folder appears under its final name or not at all.

Weights go to safetensors; optimizer/scheduler state is loaded with `weights_only=True`, so resuming
never unpickles arbitrary objects.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_model, save_model

from ocrkit.outputs import write_atomic

LATEST = "latest.json"


@dataclass
class TrainerState:
    step: int = 0
    best_value: float | None = None
    best_step: int | None = None


def save_checkpoint(
    root: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    state: TrainerState,
    ema: torch.nn.Module | None = None,
    ema_updates: int = 0,
    keep: int = 2,
) -> Path:
    """Write root/step-N/ via a temp folder + rename, then point root/latest.json at it."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{state.step:07d}"
    tmp = root / f".step-{state.step:07d}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    save_model(model, str(tmp / "model.safetensors"))
    if ema is not None:
        save_model(ema, str(tmp / "ema.safetensors"))
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp / "optim.pt")
    write_atomic(tmp / "state.json", json.dumps({**state.__dict__, "ema_updates": ema_updates}, indent=2))
    for f in tmp.iterdir():  # data on disk before the rename makes it visible
        with open(f, "rb") as fh:
            os.fsync(fh.fileno())
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    write_atomic(root / LATEST, json.dumps({"checkpoint": final.name}, indent=2))
    for old in sorted(root.glob("step-*"))[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(root: Path) -> Path | None:
    pointer = root / LATEST
    if not pointer.is_file():
        return None
    path = root / json.loads(pointer.read_text(encoding="utf-8"))["checkpoint"]
    return path if path.is_dir() else None


def load_checkpoint(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    ema: torch.nn.Module | None = None,
) -> tuple[TrainerState, int]:
    """Restore everything saved by save_checkpoint; returns (state, ema_updates)."""
    load_model(model, str(path / "model.safetensors"))
    if ema is not None and (path / "ema.safetensors").is_file():
        load_model(ema, str(path / "ema.safetensors"))
    optim = torch.load(path / "optim.pt", map_location="cpu", weights_only=True)
    optimizer.load_state_dict(optim["optimizer"])
    scheduler.load_state_dict(optim["scheduler"])
    raw = json.loads((path / "state.json").read_text(encoding="utf-8"))
    ema_updates = int(raw.pop("ema_updates", 0))
    return TrainerState(**raw), ema_updates
