"""Schema of a detector training config (configs/detector/*.yaml)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ocrkit.data.coco_dataset import AugmentConfig
from ocrkit.engine.settings import TrainSettings
from ocrkit.hub.model_folder import SETTINGS_NAME, read_spec
from ocrkit.images.postprocess import PostConfig
from ocrkit.images.preprocess import PageSizing

# Detections per image. Receipts have up to ~120 lines and a DETR spends several queries on one line;
# 100 queries capped recall on dense pages (docs/design.md, "300 queries, not 100").
DEFAULT_NUM_QUERIES = 300


@dataclass
class ModelConfig:
    arch: str = "dfine"  # dfine | rtdetr | rtdetr_v2
    size: str = "n"  # dfine: n | n8 | s; rtdetr*: r18
    pretrained: str = ""  # hub id or local HF folder to start from (re-headed to one class); "" = random init
    num_queries: int = DEFAULT_NUM_QUERIES
    num_denoising: int = 100  # denoising queries per training image group (0 = off)
    decoder_layers: int = 0  # 0 = the size's default
    encoder_positives: int = 1  # encoder proposals matched to each line in training (1 = one-to-one)
    channels_last: bool = True  # NHWC memory layout for the convolutions: faster oneDNN kernels on CPU
    extra: dict = field(default_factory=dict)  # any other transformers config key, e.g. {decoder_n_points: 4}


@dataclass
class DataConfig:
    # COCO json of training pages (file_name relative to the json's folder), or a weighted mixture of them:
    # [{path: ..., weight: 0.3}, ...] (ocrkit/data/mixing.py)
    train: str | list = ""
    epoch_pages: int = 0  # pages per mixture epoch (0: as many as the sources hold)
    val: str = ""  # COCO json of validation pages; "" = no evaluation
    val_limit: int = 0  # evaluate on the first N validation pages (0 = all)
    longest: int = 640  # letterbox size: long side, a multiple of `divisor`
    divisor: int = 32  # D-FINE/RT-DETR feature strides go to 32
    square: bool = True  # pad to longest×longest (fixed-size batches)
    # page-shaped input only: a narrow page's long side grows until its short side has `min_short` px,
    # up to `max_longest` (ocrkit.images.preprocess.page_longest); 0 = every page at `longest`
    min_short: int = 0
    max_longest: int = 0
    eval_batch_size: int = 4  # images per forward pass during evaluation (page-shaped input: one)
    augment: AugmentConfig = field(default_factory=AugmentConfig)

    @property
    def sizing(self) -> PageSizing:
        """The page sizing these settings describe (what the saved folder records)."""
        return PageSizing(self.longest, self.divisor, self.square, self.min_short, self.max_longest)


@dataclass
class DetectorConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    post: PostConfig = field(default_factory=PostConfig)
    train: TrainSettings = field(default_factory=TrainSettings)

    @staticmethod
    def start_folder_settings(raw: dict) -> dict:
        """Queries, input geometry and post-processing (score threshold included) of the ocrkit folder
        `model.pretrained` names ({} for a hub id or a folder without ocrkit settings): a fine-tune keeps
        them (ocrkit.util.config), so its validation and its saved folder read pages as the start model
        did."""
        start = (raw.get("model") or {}).get("pretrained") or ""
        if not start or not (Path(start) / SETTINGS_NAME).is_file():
            return {}
        spec = read_spec(start, "detector")
        hf = json.loads((Path(start) / "config.json").read_text(encoding="utf-8"))
        return {
            "model": {
                "num_queries": hf.get("num_queries", DEFAULT_NUM_QUERIES),
                "num_denoising": hf.get("num_denoising", 100),
            },
            "data": asdict(spec.sizing),
            "post": asdict(spec.post),
        }
