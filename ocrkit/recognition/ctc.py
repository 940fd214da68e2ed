"""Auxiliary CTC head on the ViT encoder: the torch module, its file, and its training loss.

From scratch, the TrOCR decoder first learns a character language model and ignores the image: on
this CPU the loss sat at the unconditional ~2.8 nats/token for 1000+ steps while the decoder's
output did not depend on the image. A CTC head on the encoder's patch features, read column by
column (left to right, top to bottom inside a column), forces the encoder to make glyph-level
features in reading order, which the decoder's cross-attention can then use (hybrid CTC/attention
training, as in speech recognition). The head is saved beside the HF weights (ctc_head.safetensors);
a model whose settings say `decoding: ctc` reads with it (ocrkit/decode/ctc.py, numpy).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from ocrkit.decode.ctc import CtcHead
from ocrkit.hub.model_folder import CTC_HEAD_FILE, RecognizerSpec, has_spec, load_ctc_head, read_spec
from ocrkit.recognition.case_folding import fold_cases
from ocrkit.util.errors import ModelError

HEAD = "ctc_head"


class CtcProjection(torch.nn.Linear):
    """Encoder frames (B, T, D) → CTC logits (B, T·k, V): each patch emits k = `frames_per_patch` frames
    (see ocrkit.decode.ctc.CtcHead for why). Its weights keep the plain Linear layout (k·V × D)."""

    def __init__(self, dim: int, vocab_size: int, frames_per_patch: int = 1) -> None:
        super().__init__(dim, vocab_size * frames_per_patch)
        self.vocab_size, self.frames_per_patch = vocab_size, frames_per_patch

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        out = super().forward(frames)
        return out.reshape(*out.shape[:-2], out.shape[-2] * self.frames_per_patch, self.vocab_size)


def add_ctc_head(model: torch.nn.Module, vocab_size: int, frames_per_patch: int = 1) -> None:
    head = CtcProjection(model.encoder.config.hidden_size, vocab_size, frames_per_patch)
    setattr(model, HEAD, head)


def save_head(model: torch.nn.Module, out_dir: Path) -> None:
    """Write the head (weight, bias) beside the HF weights if the model has one."""
    head = getattr(model, HEAD, None)
    if head is not None:
        tensors = {"weight": head.weight.detach().float().contiguous(), "bias": head.bias.detach().float()}
        save_file(tensors, str(Path(out_dir) / CTC_HEAD_FILE), metadata={"format": "pt"})


def restore_head(model: torch.nn.Module, model_dir: str | Path, new_labels: bool = False) -> None:
    """Copy a folder's ctc_head.safetensors into the model's (already added) head. `new_labels`: the
    model's tokenizer is the folder's with characters added, so a smaller saved head is grown to fit.

    A head saved with one frame per patch fills a head with k: each of the k frames starts as a copy, so
    the new model reads exactly as the old one (repeated frames merge in CTC) until training splits them."""
    spec = read_spec(model_dir, "recognizer") if has_spec(model_dir) else RecognizerSpec()
    saved = load_ctc_head(model_dir, spec)
    weight, bias = saved.weight, saved.bias
    head = getattr(model, HEAD)
    copies = getattr(head, "frames_per_patch", 1)
    if new_labels and weight.shape[0] // saved.frames_per_patch < head.vocab_size:
        weight, bias = _grow_labels(weight, bias, saved.frames_per_patch, head.vocab_size)
    if copies > 1 and weight.shape[0] == head.vocab_size and saved.frames_per_patch == 1:
        weight, bias = np.tile(weight, (copies, 1)), np.tile(bias, copies)
    if tuple(head.weight.shape) != weight.shape:
        expected = tuple(head.weight.shape)
        raise ModelError(model_dir, f"CTC head shape {weight.shape} does not match the model's {expected}")
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(weight))
        head.bias.copy_(torch.from_numpy(bias))


def _grow_labels(
    weight: np.ndarray, bias: np.ndarray, copies: int, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """A (copies·V × D) head's rows laid out for `size` labels per frame: new labels get zero weights and
    the lowest bias of the old ones, so the head reads as before until training teaches them."""
    vocab, dim = weight.shape[0] // copies, weight.shape[1]
    grown_w = np.zeros((copies, size, dim), weight.dtype)
    grown_b = np.full((copies, size), bias.min(), bias.dtype)
    grown_w[:, :vocab] = weight.reshape(copies, vocab, dim)
    grown_b[:, :vocab] = bias.reshape(copies, vocab)
    return grown_w.reshape(copies * size, dim), grown_b.reshape(copies * size)


def head_arrays(model: torch.nn.Module) -> CtcHead | None:
    """The model's CTC head as float32 numpy, or None without one."""
    head = getattr(model, HEAD, None)
    if head is None:
        return None
    weight, bias = head.weight.detach().float().cpu().numpy(), head.bias.detach().float().cpu().numpy()
    return CtcHead(weight, bias, getattr(head, "frames_per_patch", 1))


def ctc_loss(
    model: torch.nn.Module,
    encoder_states: torch.Tensor,
    pixel_shape: tuple[int, int],
    labels: torch.Tensor,
    eos_id: int,
    blank_id: int,
    ignore: int = -100,
    case_free: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Summed CTC loss over the batch; targets are the label characters without </s>.

    `case_free`: (case partners per token, rows whose labels ignore case) — those rows' frames score each
    cased character as either case (recognition/case_folding.py)."""
    patch = model.config.encoder.patch_size
    height, width = pixel_shape[0] // patch, pixel_shape[1] // patch
    patches = encoder_states[:, -height * width :, :]  # drop the CLS token
    batch = patches.shape[0]
    columns = patches.reshape(batch, height, width, -1).transpose(1, 2).reshape(batch, width * height, -1)
    log_probs = F.log_softmax(getattr(model, HEAD)(columns).float(), dim=-1)
    if case_free is not None:
        log_probs = fold_cases(log_probs, *case_free)
    log_probs = log_probs.transpose(0, 1)
    keep = (labels != ignore) & (labels != eos_id)
    targets = labels[keep]
    target_lengths = keep.sum(1)
    input_lengths = torch.full((batch,), log_probs.shape[0], dtype=torch.long)
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank=blank_id, reduction="sum", zero_infinity=True
    )
