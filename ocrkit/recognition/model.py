"""Recognizer factory: ViT encoder (absolute position embeddings, interpolated) + TrOCR decoder.

One entry point, `create_recognizer`, from a registry of named sizes (random init, nothing downloaded)
or from a Hugging Face checkpoint / local folder. Inputs are never squashed to the encoder's square
`image_size`: every forward and generate call passes `interpolate_pos_encoding=True`, and the square
grid of learned position embeddings is resampled to each batch's patch grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from transformers import (
    PreTrainedTokenizerBase,
    TrOCRConfig,
    VisionEncoderDecoderConfig,
    VisionEncoderDecoderModel,
    ViTConfig,
)

from ocrkit.recognition.tokenizer import build_tokenizer, padded_vocab_size
from ocrkit.util.errors import ModelError

PATCH = 16


@dataclass(frozen=True)
class RecognizerSize:
    enc_dim: int
    enc_layers: int
    enc_heads: int
    dec_dim: int
    dec_layers: int
    dec_heads: int
    mlp_ratio: int = 4


SIZES: dict[str, RecognizerSize] = {
    "tiny": RecognizerSize(32, 1, 2, 32, 1, 2, 2),  # tests only
    "small": RecognizerSize(192, 6, 3, 192, 3, 3),  # the shipped size (~5.5 M parameters)
    "base": RecognizerSize(256, 8, 4, 256, 4, 4),  # more capacity when a GPU or more CPU time is available
}

# What every size shares: RGB patches with biased attention projections and no dropout in the encoder;
# a TrOCR decoder with learned positions, scaled and normalised embeddings, its LM head tied to them.
ENCODER_FIXED: dict[str, Any] = {
    "patch_size": PATCH,
    "num_channels": 3,
    "qkv_bias": True,
    "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0,
}
DECODER_FIXED: dict[str, Any] = {
    "activation_function": "gelu",
    "use_learned_position_embeddings": True,
    "layernorm_embedding": True,
    "scale_embedding": True,
    "tie_word_embeddings": True,
}


def create_recognizer(
    size: str = "small",
    pretrained: str | Path | None = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
    image_size: int = 512,
    max_target_length: int = 160,
    dropout: float = 0.1,
) -> VisionEncoderDecoderModel:
    """A VisionEncoderDecoderModel with special-token ids set for training and `generate`.

    pretrained: hub id or local folder (safetensors weights only); `size` is then ignored.
    image_size: the square position-embedding grid (image_size/16 per side), set to the letterbox `L`
    so a full-width line's columns need no horizontal resampling.
    """
    tokenizer = tokenizer or build_tokenizer()
    if pretrained is not None:
        model = _from_pretrained(pretrained)
        grow_vocab(model, padded_vocab_size(tokenizer))
    else:
        if size not in SIZES:
            raise ValueError(f"unknown recognizer size {size!r} (known: {', '.join(SIZES)})")
        model = _from_scratch(SIZES[size], tokenizer, image_size, max_target_length, dropout)
    set_special_tokens(model, tokenizer)
    freeze_unused(model)
    return model


def _from_scratch(
    s: RecognizerSize, tokenizer: PreTrainedTokenizerBase, image_size: int, max_len: int, dropout: float
) -> VisionEncoderDecoderModel:
    if image_size % PATCH:
        raise ValueError(f"image_size={image_size} must be a multiple of {PATCH}")
    encoder = ViTConfig(
        hidden_size=s.enc_dim,
        num_hidden_layers=s.enc_layers,
        num_attention_heads=s.enc_heads,
        intermediate_size=s.enc_dim * s.mlp_ratio,
        image_size=image_size,
        **ENCODER_FIXED,
    )
    decoder = TrOCRConfig(
        vocab_size=padded_vocab_size(tokenizer),
        d_model=s.dec_dim,
        decoder_layers=s.dec_layers,
        decoder_attention_heads=s.dec_heads,
        decoder_ffn_dim=s.dec_dim * s.mlp_ratio,
        max_position_embeddings=max_len,
        dropout=dropout,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.bos_token_id,
        **DECODER_FIXED,
    )
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    return VisionEncoderDecoderModel(config=config)


def _from_pretrained(name_or_dir: str | Path) -> VisionEncoderDecoderModel:
    try:
        return VisionEncoderDecoderModel.from_pretrained(str(name_or_dir), use_safetensors=True)
    except (OSError, ValueError, SafetensorError) as exc:
        raise ModelError(
            name_or_dir, f"cannot load recognizer weights ({exc.__class__.__name__}: {exc})"
        ) from None


def grow_vocab(model: VisionEncoderDecoderModel, size: int) -> None:
    """Give the decoder `size` token rows when its tokenizer gained characters; trained rows are kept (the
    output projection is tied to the embeddings and grows with them)."""
    if size > model.decoder.config.vocab_size:
        model.decoder.resize_token_embeddings(size)
        model.config.decoder.vocab_size = size


def set_special_tokens(model: VisionEncoderDecoderModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """Decoder start = <s>, pad, eos from the tokenizer, on both the config and the generation config."""
    if len(tokenizer) > model.decoder.config.vocab_size:
        raise ModelError(
            "tokenizer", f"{len(tokenizer)} tokens > decoder vocab {model.decoder.config.vocab_size}"
        )
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = {
        "decoder_start_token_id": start,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    for key, value in ids.items():
        setattr(model.config, key, value)
        setattr(model.generation_config, key, value)
    model.generation_config.bos_token_id = start


def freeze_unused(model: VisionEncoderDecoderModel) -> None:
    """The ViT pooler never feeds the decoder: frozen, so DDP does not wait for its (absent) gradients."""
    pooler = getattr(model.encoder, "pooler", None)
    if pooler is not None:
        pooler.requires_grad_(False)


def count_parameters(model: torch.nn.Module) -> int:
    """Unique trainable parameters (tied embedding / LM head counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters() if p.requires_grad}.values())
