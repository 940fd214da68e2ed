"""Orientation classifier training config: `model:` / `data:` / `train:` of configs/orientation/*.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field

from ocrkit.engine.settings import TrainSettings


@dataclass
class ModelConfig:
    arch: str = "mobilenetv3_small_050"  # any timm classifier; trained from scratch
    pretrained: str = ""  # an orientation folder to continue from; "" = random init
    page_side: int = 1024
    window: int = 128
    windows: int = 8  # windows read per page at inference
    min_confidence: float = 0.9  # sure of the turn (1.0: never; the page's lines settle its direction)
    axis_confidence: float = 0.9  # sure of the axis: turned for the lines to settle


@dataclass
class DataConfig:
    train: list[str] = field(default_factory=list)  # COCO files of upright pages (real or synthetic)
    val: list[str] = field(default_factory=list)  # COCO files of upright validation pages
    train_pages: int = 0  # at most this many training pages, spread over the files (0 = all)
    val_pages: int = 60  # validation pages, each read turned 0/90/180/270
    windows_per_page: int = 12  # training windows cut from each page
    skew: float = 0.0  # pages are turned by up to this many degrees either way before windows are cut ...
    skew_share: float = 0.0  # ... this share of them (phone photos and loose scans)


@dataclass
class OrientationConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainSettings = field(default_factory=TrainSettings)
