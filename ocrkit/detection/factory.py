"""One factory for the text-line detectors: D-FINE (n, n8, s) and RT-DETR / RT-DETRv2 (r18).

Models are built from transformers configs with random init — nothing is downloaded (no timm or
hub backbone weights) — or loaded with `from_pretrained` and re-headed to our single class.
Every model trains with the CIoU criterion (`ocrkit.detection.loss`).

Sizes follow the published D-FINE / RT-DETR recipes, with DETR knobs tuned for text pages:
receipts hold up to ~120 lines and a DETR spends several queries on one line, so the configs keep
300 queries (docs/design.md, "300 queries, not 100").
`n8` is D-FINE-N plus a stride-8 level: receipt lines letterboxed to 640 px are 7–12 px tall,
which stride-16/32 features localise poorly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformers import (
    AutoModelForObjectDetection,
    DFineConfig,
    DFineForObjectDetection,
    HGNetV2Config,
    PretrainedConfig,
    PreTrainedModel,
    RTDetrConfig,
    RTDetrForObjectDetection,
    RTDetrResNetConfig,
    RTDetrV2Config,
    RTDetrV2ForObjectDetection,
)

from ocrkit.detection.compat import accepted_kwargs, behave_as_457
from ocrkit.detection.config import DEFAULT_NUM_QUERIES
from ocrkit.detection.loss import install_ciou_loss

LABEL = "text_line"


def _hgnetv2_b0(out_indices: list[int]) -> HGNetV2Config:
    """HGNetV2-B0, the backbone of D-FINE-N/S (stage strides 4, 8, 16, 32)."""
    return HGNetV2Config(
        stem_channels=[3, 16, 16],
        stage_in_channels=[16, 64, 256, 512],
        stage_mid_channels=[16, 32, 64, 128],
        stage_out_channels=[64, 256, 512, 1024],
        stage_num_blocks=[1, 1, 2, 1],
        stage_downsample=[False, True, True, True],
        stage_light_block=[False, False, True, True],
        stage_kernel_size=[3, 3, 5, 5],
        stage_numb_of_layers=[3, 3, 3, 3],
        use_learnable_affine_block=True,
        hidden_sizes=[64, 256, 512, 1024],
        out_indices=out_indices,
    )


HGNETV2_B0_CHANNELS = {1: 64, 2: 256, 3: 512, 4: 1024}  # output channels of each backbone stage


@dataclass(frozen=True)
class DFineSize:
    """What tells the D-FINE sizes apart; every other width follows from these."""

    stages: tuple[int, ...]  # backbone stages fed to the encoder (stage i has stride 2**(i + 1))
    width: int  # encoder/decoder hidden size; feed-forward layers are 4x as wide
    hidden_expansion: float
    depth_mult: float
    decoder_n_points: tuple[int, ...]


DFINE_SIZES = {
    "n": DFineSize(stages=(3, 4), width=128, hidden_expansion=0.34, depth_mult=0.5, decoder_n_points=(6, 6)),
    # D-FINE-N widths with a stride-8 level
    "n8": DFineSize((2, 3, 4), 128, hidden_expansion=0.34, depth_mult=0.5, decoder_n_points=(3, 6, 3)),
    "s": DFineSize((2, 3, 4), 256, hidden_expansion=0.5, depth_mult=0.34, decoder_n_points=(3, 6, 3)),
}


def _dfine(size: str) -> tuple[type, dict[str, Any]]:
    if size not in DFINE_SIZES:
        raise ValueError(f"dfine: unknown size {size!r} (choose {', '.join(DFINE_SIZES)})")
    s = DFINE_SIZES[size]
    levels = len(s.stages)
    return DFineConfig, dict(
        backbone_config=_hgnetv2_b0(list(s.stages)),
        encoder_in_channels=[HGNETV2_B0_CHANNELS[i] for i in s.stages],
        feat_strides=[2 ** (i + 1) for i in s.stages],
        encoder_hidden_dim=s.width,
        encoder_ffn_dim=4 * s.width,
        encode_proj_layers=[levels - 1],
        hidden_expansion=s.hidden_expansion,
        depth_mult=s.depth_mult,
        d_model=s.width,
        decoder_in_channels=[s.width] * levels,
        decoder_ffn_dim=4 * s.width,
        num_feature_levels=levels,
        decoder_n_points=list(s.decoder_n_points),
        decoder_layers=3,
    )


def _resnet18() -> RTDetrResNetConfig:
    return RTDetrResNetConfig(
        layer_type="basic",
        depths=[2, 2, 2, 2],
        hidden_sizes=[64, 128, 256, 512],
        out_indices=[2, 3, 4],
    )


def _rtdetr_r18(config_class: type) -> Callable[[str], tuple[type, dict[str, Any]]]:
    def build(size: str) -> tuple[type, dict[str, Any]]:
        if size != "r18":
            raise ValueError(f"rtdetr: unknown size {size!r} (choose r18)")
        return config_class, dict(
            backbone_config=_resnet18(),
            encoder_in_channels=[128, 256, 512],
            feat_strides=[8, 16, 32],
            encoder_hidden_dim=256,
            encoder_ffn_dim=1024,
            hidden_expansion=0.5,
            d_model=256,
            decoder_in_channels=[256, 256, 256],
            decoder_ffn_dim=1024,
            decoder_layers=3,
        )

    return build


ARCHS: dict[str, Callable[[str], tuple[type, dict[str, Any]]]] = {
    "dfine": _dfine,
    "rtdetr": _rtdetr_r18(RTDetrConfig),
    "rtdetr_v2": _rtdetr_r18(RTDetrV2Config),
}
MODEL_CLASSES: dict[type, type] = {
    DFineConfig: DFineForObjectDetection,
    RTDetrConfig: RTDetrForObjectDetection,
    RTDetrV2Config: RTDetrV2ForObjectDetection,
}


# Settings of a detector built from scratch (nothing downloaded). transformers 5 configs lack the
# first three (their backbone is always built from `backbone_config`); `detector_config` drops them there.
RANDOM_INIT: dict[str, Any] = {
    "use_pretrained_backbone": False,
    "use_timm_backbone": False,
    "backbone": None,
    # frozen BN statistics of a random backbone blow up gradients (~1e13 measured at init)
    "freeze_backbone_batch_norms": False,
    # anchors are built per input size, so non-square inputs (multiples of 32) work
    "anchor_image_size": None,
}


def _label_kwargs() -> dict[str, Any]:
    return {"num_labels": 1, "id2label": {0: LABEL}, "label2id": {LABEL: 0}}


def detector_config(
    arch: str, size: str, num_queries: int = DEFAULT_NUM_QUERIES, num_denoising: int = 100, **overrides: Any
) -> PretrainedConfig:
    """The transformers config of a randomly initialised one-class detector (no pretrained weights)."""
    if arch not in ARCHS:
        raise ValueError(f"unknown detector arch {arch!r} (choose {', '.join(ARCHS)})")
    config_class, kwargs = ARCHS[arch](size)
    kwargs.update(
        _label_kwargs(),
        **accepted_kwargs(config_class, RANDOM_INIT),
        num_queries=num_queries,
        num_denoising=num_denoising,
    )
    kwargs.update(overrides)
    return config_class(**kwargs)


def create_detector(
    arch: str = "dfine",
    size: str = "n",
    num_queries: int = DEFAULT_NUM_QUERIES,
    num_denoising: int = 100,
    pretrained: str | Path | None = None,
    encoder_positives: int = 1,
    **overrides: Any,
) -> PreTrainedModel:
    """A one-class (`text_line`) detector in train mode with the CIoU loss installed.

    encoder_positives: encoder proposals each line is matched to in training (ocrkit.detection.loss).
    pretrained: a hub id or local `save_pretrained` folder; its head is replaced for one class
    (`ignore_mismatched_sizes`), `arch`/`size` are then ignored, and `num_queries`/overrides still apply.
    """
    behave_as_457()
    if pretrained:
        model = AutoModelForObjectDetection.from_pretrained(
            str(pretrained),
            ignore_mismatched_sizes=True,
            num_queries=num_queries,
            num_denoising=num_denoising,
            **_label_kwargs(),
            **overrides,
        )
    else:
        config = detector_config(arch, size, num_queries, num_denoising, **overrides)
        model = MODEL_CLASSES[type(config)](config)
    model.train()
    return install_ciou_loss(model, encoder_positives)
