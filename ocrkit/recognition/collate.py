"""Batch line items: letterbox each crop with the model's preprocessing, pad images to the batch's largest
H and W, tokenize the texts and pad the labels to the longest target with -100."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.recognition.tokenizer import encode_label

IGNORE = -100  # label value skipped by the loss


def pad_labels(labels: list[list[int]]) -> torch.Tensor:
    """Right-pad label lists with -100 (the decoder's causal mask makes trailing padding harmless)."""
    out = torch.full((len(labels), max(len(x) for x in labels)), IGNORE, dtype=torch.long)
    for i, ids in enumerate(labels):
        out[i, : len(ids)] = torch.as_tensor(ids, dtype=torch.long)
    return out


class LineCollator:
    """items: {"image": HxWx3 uint8 crop, "text": str, "case_sensitive": bool} (ocrkit.data.lines_dataset)."""

    def __init__(
        self, preprocess: LinePreprocess, tokenizer: PreTrainedTokenizerBase, max_target_length: int
    ) -> None:
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.max_target_length = max_target_length

    def __call__(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        images = [self.preprocess.apply(np.asarray(it["image"]), fit_width=True) for it in items]
        texts = [it.get("text", "") for it in items]
        return {
            "pixel_values": torch.from_numpy(self.preprocess.batch(images)),
            "labels": pad_labels([encode_label(self.tokenizer, t, self.max_target_length) for t in texts]),
            "texts": texts,
            # labels that ignore the print's case (scored upper-or-lower: recognition/case_folding.py)
            "case_free": torch.tensor([it.get("case_sensitive", True) is False for it in items]),
        }
