"""The torch networks of a recognizer behind ocrkit.decode.read's backend protocol."""

from __future__ import annotations

import numpy as np
import torch
from transformers import VisionEncoderDecoderModel
from transformers.modeling_outputs import BaseModelOutput

from ocrkit.decode.ctc import CtcHead
from ocrkit.recognition.decoding import greedy_from_states


class TorchBackend:
    """Runs a VisionEncoderDecoderModel (and its CTC head, as numpy arrays, when given) without gradients.

    The model's train/eval mode is left as the caller set it; greedy decoding switches to eval itself."""

    def __init__(self, model: VisionEncoderDecoderModel, ctc_head: CtcHead | None = None) -> None:
        self.model = model
        self.ctc_head = ctc_head
        self.start_id = model.config.decoder_start_token_id
        self.eos_id = model.config.eos_token_id
        self.blank_id = model.config.pad_token_id
        self.max_positions = model.decoder.config.max_position_embeddings
        self.patch = model.config.encoder.patch_size

    @torch.no_grad()
    def encode(self, pixels: np.ndarray) -> torch.Tensor:
        device = next(self.model.parameters()).device
        inputs = torch.from_numpy(pixels).to(device)
        return self.model.encoder(pixel_values=inputs, interpolate_pos_encoding=True).last_hidden_state

    def ctc_logits(self, states: torch.Tensor, pixel_shape: tuple[int, int]) -> np.ndarray:
        if self.ctc_head is None:
            raise ValueError("this model has no CTC head")
        return self.ctc_head.logits(states.float().cpu().numpy(), tuple(pixel_shape), self.patch)

    def greedy(self, states: torch.Tensor, max_new_tokens: int) -> tuple[list[list[int]], list[float]]:
        return greedy_from_states(self.model, states, self.eos_id, max_new_tokens)

    @torch.no_grad()
    def score(self, states: torch.Tensor, input_ids: np.ndarray) -> np.ndarray:
        logits = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=states),
            decoder_input_ids=torch.from_numpy(input_ids).to(states.device),
        ).logits
        return logits.float().cpu().numpy()
