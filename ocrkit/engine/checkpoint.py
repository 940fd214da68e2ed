"""Atomic training checkpoints: a complete folder appears under its final name or not at all.

Weights go to safetensors; optimizer/scheduler state is loaded with `weights_only=True`, so resuming
never unpickles arbitrary objects.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from pickle import UnpicklingError

import torch
from safetensors import SafetensorError
from safetensors.torch import load_model, save_model

from ocrkit.pages.outputs import replace_folder, write_atomic
from ocrkit.util.errors import OcrkitError

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
    """Write root/step-N/ as one atomic folder swap, point root/latest.json at it, and keep the `keep`
    most recently written checkpoints.

    Rotation goes by recency, not by step number: a new run (or one with fewer steps) in a folder that
    holds higher-numbered checkpoints of an earlier run must not delete what it has just written."""

    def write(tmp: Path) -> None:
        save_model(model, str(tmp / "model.safetensors"))
        if ema is not None:
            save_model(ema, str(tmp / "ema.safetensors"))
        optim = {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}
        torch.save(optim, tmp / "optim.pt")
        state_json = json.dumps({**state.__dict__, "ema_updates": ema_updates}, indent=2)
        (tmp / "state.json").write_text(state_json, encoding="utf-8")

    final = replace_folder(root / f"step-{state.step:07d}", write)
    os.utime(final)  # the newest, whatever the clock granularity of the files inside
    write_atomic(root / LATEST, json.dumps({"checkpoint": final.name}, indent=2))
    older = sorted((p for p in root.glob("step-*") if p != final), key=lambda p: p.stat().st_mtime)
    for old in older[: max(len(older) - (keep - 1), 0)]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(root: Path) -> Path | None:
    """The checkpoint root/latest.json points at, or None when there is no latest.json; OcrkitError
    when it cannot be read or names a folder that is gone."""
    pointer = root / LATEST
    if not pointer.is_file():
        return None
    try:
        name = json.loads(pointer.read_text(encoding="utf-8"))["checkpoint"]
        path = root / name
        usable = Path(name).name == name and path.is_dir()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OcrkitError(f"{pointer}: cannot read ({type(exc).__name__}: {exc})") from None
    if not usable:
        present = ", ".join(p.name for p in sorted(root.glob("step-*"))) or "none"
        raise OcrkitError(f"{pointer}: names {name!r}, which is not a checkpoint folder (present: {present})")
    return path


def resume_checkpoint(root: Path) -> Path:
    """The checkpoint `--resume` continues from; OcrkitError when there is none, so a mistyped
    train.out_dir or a lost checkpoint is never a silent restart from step 0."""
    path = latest_checkpoint(root)
    if path is None:
        raise OcrkitError(
            f"--resume: no checkpoint in {root} (no {LATEST}); check train.out_dir, or start without --resume"
        )
    return path


def load_checkpoint(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    ema: torch.nn.Module | None = None,
) -> tuple[TrainerState, int]:
    """Restore everything saved by save_checkpoint; returns (state, ema_updates). A missing, corrupt or
    foreign file is one OcrkitError naming the checkpoint (optim.pt is never unpickled beyond tensors)."""
    try:
        load_model(model, str(path / "model.safetensors"))
        if ema is not None and (path / "ema.safetensors").is_file():
            load_model(ema, str(path / "ema.safetensors"))
        with warnings.catch_warnings():  # torch warns on a foreign pickle before failing: the error says it
            warnings.simplefilter("ignore", UserWarning)
            optim = torch.load(path / "optim.pt", map_location="cpu", weights_only=True)
        optimizer.load_state_dict(optim["optimizer"])
        scheduler.load_state_dict(optim["scheduler"])
        raw = json.loads((path / "state.json").read_text(encoding="utf-8"))
        ema_updates = int(raw.pop("ema_updates", 0))
        return TrainerState(**raw), ema_updates
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, UnpicklingError, SafetensorError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise OcrkitError(f"{path}: cannot load the checkpoint ({type(exc).__name__}: {detail})") from None
