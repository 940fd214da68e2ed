"""Auxiliary CTC head on the ViT encoder: its training loss, and reading lines with it in torch.

From scratch, the TrOCR decoder first learns a character language model and ignores the image: on
this CPU the loss sat at the unconditional ~2.8 nats/token for 1000+ steps while the decoder's
output did not depend on the image. A CTC head on the encoder's patch features, read column by
column (left to right, top to bottom inside a column), forces the encoder to make glyph-level
features in reading order, which the decoder's cross-attention can then use (hybrid CTC/attention
training, as in speech recognition). The head is saved beside the HF weights (ctc_head.safetensors);
a model whose ocrkit.json says `decoding: ctc` reads with it (ocrkit/decode/ctc.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers.modeling_outputs import BaseModelOutput

from ocrkit.decode.ctc import (
    HEAD_FILE,
    best_path,
    ctc_decode,
    frame_logits,
    load_head,
    log_softmax,
)
from ocrkit.decode.joint import (
    JointSettings,
    choose,
    joint_candidates,
    sequence_logprobs,
    teacher_forcing_batch,
)
from ocrkit.errors import ModelError
from ocrkit.recognition.case_folding import fold_cases
from ocrkit.recognition.decoding import generate_ids
from ocrkit.recognition.tokenizer import decode

HEAD = "ctc_head"


def add_ctc_head(model: torch.nn.Module, vocab_size: int) -> None:
    setattr(model, HEAD, torch.nn.Linear(model.encoder.config.hidden_size, vocab_size))


def save_head(model: torch.nn.Module, out_dir: Path) -> None:
    """Write the head as ctc_head.safetensors (weight, bias) if the model has one."""
    head = getattr(model, HEAD, None)
    if head is not None:
        tensors = {"weight": head.weight.detach().float().contiguous(), "bias": head.bias.detach().float()}
        save_file(tensors, str(Path(out_dir) / HEAD_FILE), metadata={"format": "pt"})


def restore_head(model: torch.nn.Module, model_dir: str | Path) -> None:
    """Copy a folder's ctc_head.safetensors into the model's (already added) head."""
    weight, bias = load_head(model_dir)
    head = getattr(model, HEAD)
    if tuple(head.weight.shape) != weight.shape:
        expected = tuple(head.weight.shape)
        raise ModelError(model_dir, f"CTC head shape {weight.shape} does not match the model's {expected}")
    with torch.no_grad():
        head.weight.copy_(torch.from_numpy(weight))
        head.bias.copy_(torch.from_numpy(bias))


def head_arrays(model: torch.nn.Module) -> tuple[np.ndarray, np.ndarray] | None:
    """The model's CTC head as float32 numpy (weight, bias), or None without one."""
    head = getattr(model, HEAD, None)
    if head is None:
        return None
    return head.weight.detach().float().cpu().numpy(), head.bias.detach().float().cpu().numpy()


def ctc_read(
    model: torch.nn.Module, tokenizer, pixels: torch.Tensor, head: tuple[np.ndarray, np.ndarray]
) -> list[tuple[str, float]]:
    """Encoder (torch) → best path of the head (the numpy code the ONNX runtime uses) → (text, confidence)."""
    with torch.no_grad():
        states = model.encoder(pixel_values=pixels, interpolate_pos_encoding=True).last_hidden_state
    decoded = ctc_decode(
        states.float().cpu().numpy(), tuple(pixels.shape[-2:]), *head, model.config.pad_token_id
    )
    return [(decode(tokenizer, ids), conf) for ids, conf in decoded]


def read_all(
    model: torch.nn.Module,
    tokenizer,
    pixels: torch.Tensor,
    head: tuple[np.ndarray, np.ndarray],
    joint: JointSettings,
    num_beams: int = 1,
) -> dict[str, list[tuple[str, float]]]:
    """{"ctc", "attention", "joint": [(text, confidence)]} from one encoder pass: the CTC best path, the
    decoder's reading and CTC's second choices are the candidates, the decoder scores them by teacher
    forcing and ocrkit.decode.joint picks (the same numpy code as the ONNX runtime). The gate is not
    applied: validation reads every line both ways."""
    with torch.no_grad():
        states, logits, ctc = _encode(model, pixels, head)
        att_ids, att_conf = generate_ids(
            model, pixels, tokenizer.eos_token_id, num_beams, encoder_states=states
        )
        ctc_ids = [ids for ids, _ in ctc]
        picked = _rescore(
            model, tokenizer, states, logits, ctc_ids, att_ids, joint.ctc_weight, joint.alternatives
        )
    return {
        "ctc": [(decode(tokenizer, ids), conf) for ids, conf in ctc],
        "attention": [(decode(tokenizer, ids), conf) for ids, conf in zip(att_ids, att_conf, strict=True)],
        "joint": [(decode(tokenizer, ids), conf) for ids, conf in picked],
    }


def read_joint(
    model: torch.nn.Module,
    tokenizer,
    pixels: torch.Tensor,
    head: tuple[np.ndarray, np.ndarray],
    joint: JointSettings,
    num_beams: int = 1,
) -> list[tuple[str, float]]:
    """Joint decoding for inference: the decoder reads (and rescores) only the lines the gate leaves
    unsure; the others keep their CTC reading and confidence."""
    with torch.no_grad():
        states, logits, ctc = _encode(model, pixels, head)
        picked = list(ctc)
        unsure = joint.unsure([conf for _, conf in ctc])
        if unsure:
            rows = torch.tensor(unsure, device=states.device)
            att_ids, _ = generate_ids(
                model, pixels[rows], tokenizer.eos_token_id, num_beams, encoder_states=states[rows]
            )
            ctc_ids = [ctc[i][0] for i in unsure]
            rescored = _rescore(
                model,
                tokenizer,
                states[rows],
                logits[unsure],
                ctc_ids,
                att_ids,
                joint.ctc_weight,
                joint.alternatives,
            )
            for i, pick in zip(unsure, rescored, strict=True):
                picked[i] = pick
    return [(decode(tokenizer, ids), conf) for ids, conf in picked]


def _encode(
    model: torch.nn.Module, pixels: torch.Tensor, head: tuple[np.ndarray, np.ndarray]
) -> tuple[torch.Tensor, np.ndarray, list[tuple[list[int], float]]]:
    """Encoder states, the CTC head's frame logits, and its best path per line."""
    states = model.encoder(pixel_values=pixels, interpolate_pos_encoding=True).last_hidden_state
    logits = frame_logits(states.float().cpu().numpy(), tuple(pixels.shape[-2:]), *head)
    return states, logits, best_path(logits, model.config.pad_token_id)


def _rescore(
    model: torch.nn.Module,
    tokenizer,
    states: torch.Tensor,
    logits: np.ndarray,
    ctc_ids: list[list[int]],
    att_ids: list[list[int]],
    ctc_weight: float,
    alternatives: int,
) -> list[tuple[list[int], float]]:
    """Score the candidates (both decoders' readings and CTC's second choices) with the decoder (teacher
    forcing) and the CTC forward algorithm."""
    frames = log_softmax(logits.astype(np.float64))
    candidates = joint_candidates(frames, ctc_ids, att_ids, model.config.pad_token_id, alternatives)
    inputs, targets, mask, owners = teacher_forcing_batch(
        candidates,
        model.config.decoder_start_token_id,
        tokenizer.eos_token_id,
        model.config.pad_token_id,
        model.decoder.config.max_position_embeddings,
    )
    scored = model(
        encoder_outputs=BaseModelOutput(last_hidden_state=states[owners]),
        decoder_input_ids=torch.from_numpy(inputs).to(states.device),
    ).logits
    attention = sequence_logprobs(scored.float().cpu().numpy(), targets, mask, owners, len(candidates))
    return choose(frames, candidates, attention, model.config.pad_token_id, ctc_weight)


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
    height, width = pixel_shape[0] // 16, pixel_shape[1] // 16
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
    input_lengths = torch.full((batch,), width * height, dtype=torch.long)
    return F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank=blank_id, reduction="sum", zero_infinity=True
    )
