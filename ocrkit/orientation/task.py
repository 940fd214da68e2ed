"""Training the orientation classifier on the shared engine: windows of upright pages, turned.

Every training page is scaled to a long side drawn around the inference one (so print of every size is
seen), cut into the windows inference would read (ocrkit.orientation.patches), and each window is shown
turned 0, 90, 180 and 270 degrees: the label is the turn, so any upright page is training data and no
annotation is needed. Validation reads whole pages turned four ways through the inference path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch
from torch.utils.data import Dataset

from ocrkit.engine.param_groups import param_groups
from ocrkit.hub.model_folder import OrientationSpec
from ocrkit.images.frame import ANGLES, skewed, turned
from ocrkit.orientation.config import OrientationConfig
from ocrkit.orientation.decide import decide
from ocrkit.orientation.model import build, save
from ocrkit.orientation.patches import page_windows, to_input

SCALE_RANGE = (0.7, 1.4)  # training pages' long side, as a share of the inference one


def coco_pages(files: list[str], limit: int, seed: int) -> list[Path]:
    """Image paths of the pages in COCO files, at most `limit` (0: all) drawn evenly from every file."""
    per_file = []
    for file in files:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
        per_file.append([Path(file).parent / im["file_name"] for im in data["images"]])
    if not limit:
        return [p for paths in per_file for p in paths]
    rng = np.random.default_rng(seed)
    share = max(1, limit // max(len(per_file), 1))
    picked = [p for paths in per_file for p in rng.permutation(np.array(paths, dtype=object))[:share]]
    return [Path(p) for p in picked[:limit]]


def load_gray(path: Path, page_side: int) -> np.ndarray | None:
    """A page in gray at `page_side` long side (decoded at a reduced size where the file allows)."""
    flag = (
        cv2.IMREAD_REDUCED_GRAYSCALE_2 if path.suffix.lower() in (".jpg", ".jpeg") else cv2.IMREAD_GRAYSCALE
    )
    gray = cv2.imread(str(path), flag)
    if gray is None or min(gray.shape) < 8:
        return None
    scale = page_side / max(gray.shape)
    size = (max(1, round(gray.shape[1] * scale)), max(1, round(gray.shape[0] * scale)))
    return cv2.resize(gray, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)


class WindowDataset(Dataset):
    """Item i: window i // 4 turned (i % 4) quarter turns clockwise, lightly re-lit; its label i % 4."""

    def __init__(self, windows: np.ndarray, seed: int) -> None:
        self.windows = windows
        self.seed = seed

    def __len__(self) -> int:
        return 4 * len(self.windows)

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        rng = np.random.default_rng((self.seed, i))
        window = turned(self.windows[i // 4], i % 4).astype(np.float32)
        window = window * rng.uniform(0.7, 1.2) + rng.uniform(-30, 30)  # contrast, brightness
        if rng.random() < 0.3:
            window = cv2.GaussianBlur(window, (3, 3), rng.uniform(0.3, 1.2))
        if rng.random() < 0.05:
            window = 255 - window  # light print on dark
        window += rng.normal(0, rng.uniform(0, 8), window.shape)
        return np.clip(window, 0, 255).astype(np.uint8), i % 4


class OrientationTask:
    def __init__(self, config: OrientationConfig) -> None:
        self.config = config
        self._val: list[np.ndarray] | None = None

    def spec(self) -> OrientationSpec:
        m = self.config.model
        return OrientationSpec(m.arch, m.page_side, m.window, m.windows, m.min_confidence, m.axis_confidence)

    def build_model(self) -> torch.nn.Module:
        model = build(self.config.model.arch)
        if self.config.model.pretrained:
            from ocrkit.orientation.model import OrientationClassifier

            model.load_state_dict(OrientationClassifier.load(self.config.model.pretrained).model.state_dict())
        return model.train()

    def train_dataset(self) -> Dataset:
        d, m = self.config.data, self.config.model
        rng = np.random.default_rng(self.config.train.seed)
        cut = []
        for path in coco_pages(d.train, d.train_pages, self.config.train.seed):
            side = int(m.page_side * rng.uniform(*SCALE_RANGE))
            gray = load_gray(path, side)
            if gray is None:
                continue
            if d.skew and rng.random() < d.skew_share:
                gray = skewed(gray, float(rng.uniform(-d.skew, d.skew)))
            cut.append(page_windows(gray, m.window, d.windows_per_page))
        print(f"orientation: {sum(len(w) for w in cut)} windows from {len(cut)} pages", flush=True)
        return WindowDataset(np.concatenate(cut), self.config.train.seed)

    def collate(self, items: list[Any]) -> dict[str, Any]:
        windows = np.stack([w for w, _ in items])
        return {
            "pixels": torch.from_numpy(to_input(windows)),
            "labels": torch.tensor([label for _, label in items], dtype=torch.long),
        }

    def batch_sampler(self, dataset: Dataset, batch_size: int, seed: int) -> None:
        return None

    def units(self, batch: dict[str, Any]) -> int:
        return len(batch["labels"])

    def loss(self, model: torch.nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        logits = model(batch["pixels"])
        return torch.nn.functional.cross_entropy(logits, batch["labels"], reduction="sum")

    def param_groups(self, model: torch.nn.Module, lr: float, weight_decay: float) -> list[dict]:
        return param_groups(model, lr, weight_decay, lambda name: False, 1.0)

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        """Share of validation pages, each turned four ways, whose turn is found (`accuracy`) and found
        sure enough to be undone (`turned_right`), through the inference path."""
        m = self.config.model
        if self._val is None:
            paths = coco_pages(self.config.data.val, self.config.data.val_pages, 1)
            self._val = [g for g in (load_gray(p, m.page_side) for p in paths) if g is not None]
        device = next(model.parameters()).device
        found = undone = total = 0
        with torch.no_grad():
            for gray in self._val:
                for turns, angle in enumerate(ANGLES):
                    windows = page_windows(turned(gray, turns), m.window, m.windows)
                    logits = model(torch.from_numpy(to_input(windows)).to(device)).float().cpu().numpy()
                    result = decide(logits, m.min_confidence, m.axis_confidence)
                    found += result.angle == angle
                    undone += result.applied == angle
                    total += 1
        return {"accuracy": found / max(total, 1), "turned_right": undone / max(total, 1)}

    def save_pretrained(self, model: torch.nn.Module, out_dir: Path) -> None:
        save(model, self.spec(), Path(out_dir))
