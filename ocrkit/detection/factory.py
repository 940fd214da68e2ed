"""One factory for the text-line detectors: D-FINE (n, n8, s) and RT-DETR / RT-DETRv2 (r18).

Models are built from transformers configs with random init — nothing is downloaded (no timm or
hub backbone weights) — or loaded with `from_pretrained` and re-headed to our single class.
Every model trains with the CIoU criterion (`ocrkit.detection.loss`).

Sizes follow the published D-FINE / RT-DETR recipes, with DETR knobs tuned for text pages:
a page holds ≤ ~100 lines, so 100–150 queries suffice (COCO uses 300) and cost less on CPU.
`n8` is D-FINE-N plus a stride-8 level: receipt lines letterboxed to 640 px are 7–12 px tall,
which stride-16/32 features localise poorly.
"""

from __future__ import annotations

from collections.abc import Callable
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


def _dfine(size: str) -> tuple[type, dict[str, Any]]:
    if size == "n":  # strides 16, 32
        return DFineConfig, dict(
            backbone_config=_hgnetv2_b0([3, 4]),
            encoder_in_channels=[512, 1024],
            feat_strides=[16, 32],
            encoder_hidden_dim=128,
            encoder_ffn_dim=512,
            encode_proj_layers=[1],
            hidden_expansion=0.34,
            depth_mult=0.5,
            d_model=128,
            decoder_in_channels=[128, 128],
            decoder_ffn_dim=512,
            num_feature_levels=2,
            decoder_n_points=[6, 6],
            decoder_layers=3,
        )
    if size == "n8":  # D-FINE-N widths with strides 8, 16, 32
        return DFineConfig, dict(
            backbone_config=_hgnetv2_b0([2, 3, 4]),
            encoder_in_channels=[256, 512, 1024],
            feat_strides=[8, 16, 32],
            encoder_hidden_dim=128,
            encoder_ffn_dim=512,
            encode_proj_layers=[2],
            hidden_expansion=0.34,
            depth_mult=0.5,
            d_model=128,
            decoder_in_channels=[128, 128, 128],
            decoder_ffn_dim=512,
            num_feature_levels=3,
            decoder_n_points=[3, 6, 3],
            decoder_layers=3,
        )
    if size == "s":  # strides 8, 16, 32
        return DFineConfig, dict(
            backbone_config=_hgnetv2_b0([2, 3, 4]),
            encoder_in_channels=[256, 512, 1024],
            feat_strides=[8, 16, 32],
            encoder_hidden_dim=256,
            encoder_ffn_dim=1024,
            encode_proj_layers=[2],
            hidden_expansion=0.5,
            depth_mult=0.34,
            d_model=256,
            decoder_in_channels=[256, 256, 256],
            decoder_ffn_dim=1024,
            num_feature_levels=3,
            decoder_n_points=[3, 6, 3],
            decoder_layers=3,
        )
    raise ValueError(f"dfine: unknown size {size!r} (choose n, n8, s)")


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
        num_queries=num_queries,
        num_denoising=num_denoising,
        use_pretrained_backbone=False,
        use_timm_backbone=False,
        backbone=None,
        # frozen BN statistics of a random backbone blow up gradients (~1e13 measured at init)
        freeze_backbone_batch_norms=False,
        # anchors are built per input size, so non-square inputs (multiples of 32) work
        anchor_image_size=None,
    )
    kwargs.update(overrides)
    return config_class(**kwargs)


def create_detector(
    arch: str = "dfine",
    size: str = "n",
    num_queries: int = DEFAULT_NUM_QUERIES,
    num_denoising: int = 100,
    pretrained: str | Path | None = None,
    **overrides: Any,
) -> PreTrainedModel:
    """A one-class (`text_line`) detector in train mode with the CIoU loss installed.

    pretrained: a hub id or local `save_pretrained` folder; its head is replaced for one class
    (`ignore_mismatched_sizes`), `arch`/`size` are then ignored, and `num_queries`/overrides still apply.
    """
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
    return install_ciou_loss(model)
