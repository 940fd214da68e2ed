"""What the shared training engine needs from a task (detection or recognition).

The engine owns the lifecycle (devices, precision, optimizer, schedule, EMA, accumulation,
checkpoints, resume, logging); a task owns the model, the data and the metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import torch
from torch.utils.data import Dataset, Sampler


class Task(Protocol):
    def build_model(self) -> torch.nn.Module:
        """A fresh (or from_pretrained) model, in train mode, on CPU."""

    def train_dataset(self) -> Dataset:
        """Training items; `collate` turns a list of them into a batch dict of tensors."""

    def collate(self, items: list[Any]) -> dict[str, Any]: ...

    def batch_sampler(self, dataset: Dataset, batch_size: int, seed: int) -> Sampler | None:
        """Optional batch sampler (e.g. aspect-ratio buckets); None → shuffled fixed-size batches."""

    def units(self, batch: dict[str, Any]) -> int:
        """Loss units in a batch: non-pad target tokens (recognizer) or images (detector)."""

    def loss(self, model: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        """The loss SUMMED over the batch's units (not averaged). The engine divides by the units of the
        whole accumulated step (all micro-batches, all ranks), so long and short targets weigh fairly."""

    def param_groups(self, model: torch.nn.Module, lr: float, weight_decay: float) -> list[dict]:
        """AdamW parameter groups (e.g. lower LR for a backbone, no decay on norms/biases)."""

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        """Validation metrics on the unwrapped (EMA) model in eval mode."""

    def save_pretrained(self, model: torch.nn.Module, out_dir: Path) -> None:
        """A Hugging Face folder (config.json, model.safetensors, …) plus the ocrkit settings file."""

    # Optional: `pop_loss_parts() -> dict[str, float]`, the loss terms per unit since the last call; the
    # engine adds them to each metrics.jsonl log record (a hook, so tasks without terms need nothing).
