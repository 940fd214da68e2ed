"""Greedy / beam decoding with a per-line confidence.

`max_new_tokens` grows with the input width: a line letterboxed to W pixels holds at most about
`chars_per_patch` characters per 16-px patch column (real crops: ~2-3 characters per unit of aspect).
"""

from __future__ import annotations

import math

import torch
from transformers import PreTrainedTokenizerBase, VisionEncoderDecoderModel
from transformers.modeling_outputs import BaseModelOutput

from ocrkit.recognition.tokenizer import decode


def max_new_tokens_for(
    width: int, model: VisionEncoderDecoderModel, patch: int = 16, chars_per_patch: float = 3.0
) -> int:
    """Token budget for a batch of width `width`, capped by the decoder's learned positions."""
    budget = math.ceil(width / patch * chars_per_patch) + 2
    return max(2, min(budget, model.decoder.config.max_position_embeddings - 1))


@torch.no_grad()
def generate_ids(
    model: VisionEncoderDecoderModel,
    pixel_values: torch.Tensor,
    eos_id: int,
    num_beams: int = 1,
    max_new_tokens: int | None = None,
    encoder_states: torch.Tensor | None = None,
) -> tuple[list[list[int]], list[float]]:
    """Decode a batch → (token ids up to and without </s>, confidence = exp(mean token log-prob, </s>
    included)). `encoder_states` (already computed for the same pixels) spares a second encoder pass."""
    was_training = model.training
    model.eval()
    budget = max_new_tokens or max_new_tokens_for(pixel_values.shape[-1], model)
    extra = {"early_stopping": True} if num_beams > 1 else {"output_logits": True}
    inputs = (
        {"pixel_values": pixel_values, "interpolate_pos_encoding": True}
        if encoder_states is None
        else {"encoder_outputs": BaseModelOutput(last_hidden_state=encoder_states)}
    )
    out = model.generate(
        **inputs,
        num_beams=num_beams,
        do_sample=False,
        max_new_tokens=budget,
        return_dict_in_generate=True,
        output_scores=num_beams > 1,
        **extra,
    )
    model.train(was_training)
    sequences = out.sequences[:, 1:]  # drop the decoder start token
    if num_beams > 1:
        # sequences_scores: sum of log-probs / length (length_penalty 1.0) → a mean log-prob already.
        confidences = out.sequences_scores.float().exp().tolist()
    else:
        logprobs = torch.stack(out.logits, dim=1).float().log_softmax(-1)
        token_lp = logprobs.gather(-1, sequences[:, : logprobs.shape[1], None]).squeeze(-1)
        keep = _up_to_eos(sequences[:, : logprobs.shape[1]], eos_id)
        mean_lp = (token_lp * keep).sum(1) / keep.sum(1).clamp(min=1)
        confidences = mean_lp.exp().tolist()
    ids = []
    for seq in sequences.tolist():
        ids.append(seq[: seq.index(eos_id)] if eos_id in seq else seq)
    return ids, confidences


def generate(
    model: VisionEncoderDecoderModel,
    tokenizer: PreTrainedTokenizerBase,
    pixel_values: torch.Tensor,
    num_beams: int = 1,
    max_new_tokens: int | None = None,
) -> list[tuple[str, float]]:
    """Decode a batch → [(text, confidence)]; confidence = exp(mean token log-prob), </s> included."""
    ids, confidences = generate_ids(model, pixel_values, tokenizer.eos_token_id, num_beams, max_new_tokens)
    return [(decode(tokenizer, seq), conf) for seq, conf in zip(ids, confidences, strict=True)]


def _up_to_eos(sequences: torch.Tensor, eos_id: int) -> torch.Tensor:
    """1.0 for tokens up to and including the first </s>, 0.0 after it (padding of finished lines)."""
    is_eos = (sequences == eos_id).int()
    after = (is_eos.cumsum(1) - is_eos) > 0
    return (~after).float()
