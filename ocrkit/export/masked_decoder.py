"""Optimum's recognizer export with a cross-attention mask on both decoder graphs.

Lines of different widths give encoder states of different lengths. To run one greedy loop over all of
a page's lines, their states are padded to the longest and the decoder must not attend to the padding:
`encoder_attention_mask` (batch × encoder length, 1 = real state). `VisionEncoderDecoderModel.forward`
drops that mask (it passes None to the decoder), so the export calls the decoder through a forward that
keeps it, and tells Optimum about the extra input.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import torch
from optimum.exporters.onnx.base import ConfigBehavior
from optimum.exporters.onnx.model_configs import VisionEncoderDecoderOnnxConfig
from optimum.utils.input_generators import (
    DummyInputGenerator,
    DummyVisionEncoderDecoderPastKeyValuesGenerator,
    DummyVisionInputGenerator,
)
from transformers import VisionEncoderDecoderModel
from transformers.modeling_outputs import Seq2SeqLMOutput

from ocrkit.recognition.torch_backend import project_states


def _forward_with_mask(
    self: VisionEncoderDecoderModel,
    pixel_values: torch.Tensor | None = None,
    decoder_input_ids: torch.Tensor | None = None,
    encoder_outputs: Any = None,
    attention_mask: torch.Tensor | None = None,
    past_key_values: Any = None,
    use_cache: bool | None = None,
    **kwargs: Any,
) -> Seq2SeqLMOutput:
    """The model's forward, except that `attention_mask` reaches the decoder's cross-attention."""
    if encoder_outputs is None:  # the encoder graph: unchanged
        return VisionEncoderDecoderModel.forward(
            self, pixel_values=pixel_values, decoder_input_ids=decoder_input_ids, **kwargs
        )
    out = self.decoder(
        input_ids=decoder_input_ids,
        encoder_hidden_states=project_states(self, encoder_outputs[0]),
        encoder_attention_mask=attention_mask,
        past_key_values=past_key_values,
        use_cache=use_cache,
        return_dict=True,
    )
    return Seq2SeqLMOutput(logits=out.logits, past_key_values=out.past_key_values)


class _EncoderMaskGenerator(DummyInputGenerator):
    """A dummy mask as long as the dummy encoder states, one row with padding, for tracing."""

    SUPPORTED_INPUT_NAMES = ("attention_mask",)

    def __init__(
        self, task: str, normalized_config: Any, batch_size: int = 2, sequence_length: int = 16, **_
    ):
        self.batch_size, self.length = batch_size, sequence_length

    def generate(
        self, input_name: str, framework: str = "pt", int_dtype: str = "int64", float_dtype: str = ""
    ):
        mask = np.ones((self.batch_size, self.length), np.int64)
        mask[0, -3:] = 0
        return mask if framework == "np" else torch.from_numpy(mask)


class _MaskedOnnxConfig(VisionEncoderDecoderOnnxConfig):
    DUMMY_INPUT_GENERATOR_CLASSES = (
        DummyVisionInputGenerator,
        DummyVisionEncoderDecoderPastKeyValuesGenerator,
        _EncoderMaskGenerator,
    )

    @property
    def inputs(self) -> dict[str, dict[int, str]]:
        inputs = super().inputs
        if self._behavior is ConfigBehavior.DECODER:
            inputs["attention_mask"] = {0: "batch_size", 1: "encoder_sequence_length"}
        return inputs


def masked_export_inputs(model: VisionEncoderDecoderModel) -> dict[str, Any]:
    """Make `model` keep the cross-attention mask and return Optimum's per-graph configs for it."""
    model.forward = types.MethodType(_forward_with_mask, model)
    base = _MaskedOnnxConfig(model.config, task="image-to-text")
    return {
        "encoder_model": base.with_behavior("encoder"),
        "decoder_model": base.with_behavior("decoder", use_past=True, use_past_in_inputs=False),
        "decoder_with_past_model": base.with_behavior("decoder", use_past=True, use_past_in_inputs=True),
    }
