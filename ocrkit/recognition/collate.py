"""Batch line items: pad images to the batch's largest H and W, labels to the longest target with -100."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ocrkit.line_preprocess import LinePreprocess

IGNORE = -100  # label value skipped by the loss


def pad_labels(labels: list[list[int]]) -> torch.Tensor:
    """Right-pad label lists with -100 (the decoder's causal mask makes trailing padding harmless)."""
    out = torch.full((len(labels), max(len(x) for x in labels)), IGNORE, dtype=torch.long)
    for i, ids in enumerate(labels):
        out[i, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
    return out


class LineCollator:
    """items: {"image": letterboxed HxWx3 uint8, "labels": ids ending with </s>, "text": str}."""

    def __init__(self, preprocess: LinePreprocess) -> None:
        self.preprocess = preprocess

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        images = [np.asarray(it["image"]) for it in items]
        return {
            "pixel_values": torch.from_numpy(self.preprocess.batch(images)),
            "labels": pad_labels([it["labels"] for it in items]),
            "texts": [it.get("text", "") for it in items],
            # labels that ignore the print's case (scored upper-or-lower: recognition/case_folding.py)
            "case_free": torch.tensor([it.get("case_sensitive", True) is False for it in items]),
        }
