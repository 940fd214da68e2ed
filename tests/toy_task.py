"""A tiny Task for engine tests: linear regression with variable-length targets (units = rows)."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_model
from torch.utils.data import Dataset

from ocrkit.engine.settings import TrainSettings


class ToyData(Dataset):
    def __init__(self, n: int = 64) -> None:
        g = torch.Generator().manual_seed(0)
        self.items = []
        for i in range(n):
            rows = 1 + i % 5  # variable "length"
            x = torch.randn(rows, 4, generator=g)
            self.items.append((x, x @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        x, y = self.items[i]
        return x + 0.01 * torch.randn_like(x), y  # uses the global RNG like a data augmentation


class ToyTask:
    def __init__(self, out: Path | None = None) -> None:
        self.evaluated = 0

    def build_model(self) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 1))

    def train_dataset(self):
        return ToyData()

    def collate(self, items):
        return {"x": torch.cat([x for x, _ in items]), "y": torch.cat([y for _, y in items])}

    def batch_sampler(self, dataset, batch_size, seed):
        return None

    def units(self, batch) -> int:
        return len(batch["y"])

    def loss(self, model, batch) -> torch.Tensor:
        return ((model(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum()

    def param_groups(self, model, lr, weight_decay):
        return [{"params": list(model.parameters()), "lr": lr, "weight_decay": weight_decay}]

    def evaluate(self, model):
        self.evaluated += 1
        data = ToyData(16)
        batch = self.collate([data.items[i] for i in range(16)])
        return {"mse": float(self.loss(model, batch) / len(batch["y"]))}

    def save_pretrained(self, model, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        save_model(model, str(out_dir / "model.safetensors"))


def toy_settings(out: Path, **overrides) -> TrainSettings:
    """The engine tests' run: 12 steps, accumulation 2, EMA, checkpoints every 4, evaluation every 6."""
    base = dict(
        out_dir=str(out),
        steps=12,
        batch_size=4,
        grad_accum=2,
        lr=1e-2,
        warmup_steps=3,
        eval_every=6,
        save_every=4,
        log_every=2,
        ema_decay=0.9,
        ema_warmup_steps=2,
        best_metric="mse",
        best_mode="min",
        torch_threads=1,
    )
    return TrainSettings(**{**base, **overrides})
