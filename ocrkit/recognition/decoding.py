"""Greedy decoding with a per-line confidence, in torch (Hugging Face `generate`).

The token budget is ocrkit.decode.budget's, shared with the ONNX runtime.
"""

from __future__ import annotations

import torch
from transformers import PreTrainedTokenizerBase, VisionEncoderDecoderModel
from transformers.modeling_outputs import BaseModelOutput

from ocrkit.decode.budget import greedy_token_budget
from ocrkit.recognition.tokenizer import decode


def max_new_tokens_for(width: int, model: VisionEncoderDecoderModel) -> int:
    """Token budget for a batch of width `width`, from the model's patch size and decoder positions."""
    return greedy_token_budget(
        width, model.config.encoder.patch_size, model.decoder.config.max_position_embeddings
    )


def generate_ids(
    model: VisionEncoderDecoderModel,
    pixel_values: torch.Tensor,
    eos_id: int,
    max_new_tokens: int | None = None,
) -> tuple[list[list[int]], list[float]]:
    """Decode a batch of pixels → (token ids up to and without </s>, confidence = exp(mean token log-prob,
    </s> included))."""
    budget = max_new_tokens or max_new_tokens_for(pixel_values.shape[-1], model)
    inputs = {"pixel_values": pixel_values, "interpolate_pos_encoding": True}
    return _greedy(model, inputs, eos_id, budget)


def greedy_from_states(
    model: VisionEncoderDecoderModel, encoder_states: torch.Tensor, eos_id: int, max_new_tokens: int
) -> tuple[list[list[int]], list[float]]:
    """`generate_ids` from encoder states already computed for the pixels (no second encoder pass)."""
    inputs = {"encoder_outputs": BaseModelOutput(last_hidden_state=encoder_states)}
    return _greedy(model, inputs, eos_id, max_new_tokens)


def generate(
    model: VisionEncoderDecoderModel,
    tokenizer: PreTrainedTokenizerBase,
    pixel_values: torch.Tensor,
    max_new_tokens: int | None = None,
) -> list[tuple[str, float]]:
    """Decode a batch → [(text, confidence)]; confidence = exp(mean token log-prob), </s> included."""
    ids, confidences = generate_ids(model, pixel_values, tokenizer.eos_token_id, max_new_tokens)
    return [(decode(tokenizer, seq), conf) for seq, conf in zip(ids, confidences, strict=True)]


@torch.no_grad()
def _greedy(
    model: VisionEncoderDecoderModel, inputs: dict, eos_id: int, max_new_tokens: int
) -> tuple[list[list[int]], list[float]]:
    was_training = model.training
    model.eval()
    out = model.generate(
        **inputs,
        num_beams=1,
        do_sample=False,
        max_new_tokens=max_new_tokens,
        return_dict_in_generate=True,
        output_logits=True,
    )
    model.train(was_training)
    sequences = out.sequences[:, 1:]  # drop the decoder start token
    logprobs = torch.stack(out.logits, dim=1).float().log_softmax(-1)
    token_lp = logprobs.gather(-1, sequences[:, : logprobs.shape[1], None]).squeeze(-1)
    keep = _up_to_eos(sequences[:, : logprobs.shape[1]], eos_id)
    mean_lp = (token_lp * keep).sum(1) / keep.sum(1).clamp(min=1)
    ids = []
    for seq in sequences.tolist():
        ids.append(seq[: seq.index(eos_id)] if eos_id in seq else seq)
    return ids, mean_lp.exp().tolist()


def _up_to_eos(sequences: torch.Tensor, eos_id: int) -> torch.Tensor:
    """1.0 for tokens up to and including the first </s>, 0.0 after it (padding of finished lines)."""
    is_eos = (sequences == eos_id).int()
    after = (is_eos.cumsum(1) - is_eos) > 0
    return (~after).float()
