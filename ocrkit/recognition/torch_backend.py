"""The torch networks of a recognizer behind ocrkit.decode.read's backend protocol."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from transformers import VisionEncoderDecoderModel

from ocrkit.decode.ctc import CtcHead


def project_states(model: VisionEncoderDecoderModel, states: torch.Tensor) -> torch.Tensor:
    """Encoder states in the decoder's width, as VisionEncoderDecoderModel.forward projects them."""
    if (
        model.encoder.config.hidden_size != model.decoder.config.hidden_size
        and model.decoder.config.cross_attention_hidden_size is None
    ):
        return model.enc_to_dec_proj(states)
    return states


class TorchBackend:
    """Runs a VisionEncoderDecoderModel (and its CTC head, as numpy arrays, when given) without gradients.

    The model's train/eval mode is left as the caller set it; the decoder steps switch to eval for
    themselves. The decoder is called directly, not through the model's forward, because that forward
    drops the cross-attention mask lines of different widths need to decode in one batch."""

    masks_encoder = True

    def __init__(self, model: VisionEncoderDecoderModel, ctc_head: CtcHead | None = None) -> None:
        self.model = model
        self.ctc_head = ctc_head
        self.start_id = model.config.decoder_start_token_id
        self.eos_id = model.config.eos_token_id
        self.blank_id = model.config.pad_token_id
        self.max_positions = model.decoder.config.max_position_embeddings
        self.patch = model.config.encoder.patch_size

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @torch.no_grad()
    def encode(self, pixels: np.ndarray) -> torch.Tensor:
        inputs = torch.from_numpy(pixels).to(self.device)
        return self.model.encoder(pixel_values=inputs, interpolate_pos_encoding=True).last_hidden_state

    def ctc_logits(self, states: torch.Tensor, pixel_shape: tuple[int, int]) -> np.ndarray:
        if self.ctc_head is None:
            raise ValueError("this model has no CTC head")
        return self.ctc_head.logits(states.float().cpu().numpy(), tuple(pixel_shape), self.patch)

    def pad_states(self, states: list[torch.Tensor]) -> torch.Tensor:
        longest = max(s.shape[1] for s in states)
        return torch.cat([torch.nn.functional.pad(s, (0, 0, 0, longest - s.shape[1])) for s in states])

    @torch.no_grad()
    def first_step(self, states: torch.Tensor, mask: np.ndarray | None) -> tuple[np.ndarray, Any]:
        projected = project_states(self.model, states)
        start = torch.full((len(states), 1), self.start_id, dtype=torch.long, device=self.device)
        logits, past = self._decode(start, projected, mask, None)
        return logits[:, -1], (past, projected)

    def next_step(self, tokens: np.ndarray, cache: Any, mask: np.ndarray | None) -> tuple[np.ndarray, Any]:
        past, projected = cache
        ids = torch.from_numpy(tokens[:, None]).to(self.device)
        logits, past = self._decode(ids, projected, mask, past)
        return logits[:, -1], (past, projected)

    def select(self, cache: Any, rows: np.ndarray) -> Any:
        past, projected = cache
        index = torch.from_numpy(rows).to(self.device)
        past.reorder_cache(index)  # keeps the rows in `index` order, in place
        return past, projected[index]

    @torch.no_grad()
    def score(
        self, states: torch.Tensor, input_ids: np.ndarray, mask: np.ndarray | None = None
    ) -> np.ndarray:
        ids = torch.from_numpy(input_ids).to(self.device)
        logits, _ = self._decode(ids, project_states(self.model, states), mask, None, use_cache=False)
        return logits

    @torch.no_grad()
    def _decode(
        self,
        ids: torch.Tensor,
        states: torch.Tensor,
        mask: np.ndarray | None,
        past: Any,
        use_cache: bool = True,
    ) -> tuple[np.ndarray, Any]:
        encoder_mask = None if mask is None else torch.from_numpy(mask).to(self.device)
        with _eval(self.model.decoder):
            out = self.model.decoder(
                input_ids=ids,
                encoder_hidden_states=states,
                encoder_attention_mask=encoder_mask,
                past_key_values=past,
                use_cache=use_cache,
                return_dict=True,
            )
        return out.logits.float().cpu().numpy(), out.past_key_values


@contextmanager
def _eval(module: torch.nn.Module) -> Iterator[None]:
    """Eval mode (no dropout) for the block, the caller's mode restored after it."""
    was_training = module.training
    module.eval()
    try:
        yield
    finally:
        module.train(was_training)
