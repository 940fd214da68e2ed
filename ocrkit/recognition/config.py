"""Recognizer training config: `model:` / `data:` / `train:` sections of configs/recognizer/*.yaml."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ocrkit.decode.ctc import DECODINGS, Decoding
from ocrkit.decode.joint import CTC_ALTERNATIVES
from ocrkit.engine.settings import TrainSettings
from ocrkit.hub.model_folder import SETTINGS_NAME, read_spec
from ocrkit.util.config import ConfigError

# start-folder settings a fine-tune keeps unless its config sets them (RecognizerConfig.start_folder_settings)
START_MODEL_KEYS = (
    "size",
    "max_target_length",
    "decoding",
    "joint_ctc_weight",
    "joint_gate",
    "joint_alternatives",
    "decoder_max_chars",
    "decoder_gate",
)
HEAD_KEYS = ("decoding", "joint_gate", "decoder_max_chars", "decoder_gate")  # need a CTC head


@dataclass
class ModelConfig:
    size: str = "small"  # tiny (tests) | small (shipped, CPU) | base
    pretrained: str = ""  # hub id or local HF folder to start from (its tokenizer is used); "" = random init
    max_target_length: int = 160  # decoder positions; longer labels are truncated (keeping </s>)
    dropout: float = 0.1  # decoder dropout (the ViT encoder uses none)
    label_smoothing: float = 0.0  # keep 0: smoothing destabilises TrOCR training (see task.py)
    ctc_weight: float = 0.0  # >0: auxiliary CTC loss on the encoder's patches (see ocrkit/recognition/ctc.py)
    ctc_frames_per_patch: int = (
        1  # CTC frames per encoder patch (ocrkit.decode.ctc.CtcHead); 2 reads doubled letters
    )
    # attention (TrOCR decoder) | ctc (the CTC head; needs ctc_weight > 0) | joint (both, rescored; joint.py)
    decoding: str = "attention"
    joint_ctc_weight: float = 0.5  # joint decoding: weight of the CTC log-likelihood (decoder: 1 - this)
    # joint decoding at inference: lines whose least sure CTC frame is >= this keep the CTC reading
    # without running the decoder (speed); null = the decoder reads every line. Validation reads all.
    joint_gate: float | None = None
    joint_alternatives: int = CTC_ALTERNATIVES  # joint decoding: CTC second choices rescored too (0 = off)
    # attention decoding: a line whose CTC reading is longer than this many characters keeps it instead
    # of being read by the decoder, which misreads lines longer than most it trained on; null = off
    decoder_max_chars: int | None = None
    # attention decoding at inference: a line whose least sure CTC frame is at least this sure keeps the
    # CTC reading, the decoder unused (speed); null = off. Validation always reads every line.
    decoder_gate: float | None = None
    init_weights: str = ""  # a .safetensors file (e.g. a checkpoint's model.safetensors) to start from
    # characters to add to the tokenizer (and the decoder's and CTC head's rows) of the model trained;
    # the training log names the characters of the training lines the tokenizer lacks
    extra_chars: str = ""

    def __post_init__(self) -> None:
        if self.decoding not in DECODINGS:
            raise ConfigError(
                f"model.decoding: expected one of {', '.join(DECODINGS)}, got {self.decoding!r}"
            )
        if not 0.0 <= self.joint_ctc_weight <= 1.0:
            raise ConfigError(f"model.joint_ctc_weight: expected 0..1, got {self.joint_ctc_weight}")
        if self.joint_gate is not None and not 0.0 < self.joint_gate <= 1.0:
            raise ConfigError(
                f"model.joint_gate: expected null or a confidence in (0, 1], got {self.joint_gate}"
            )
        if self.ctc_frames_per_patch < 1:
            raise ConfigError(
                f"model.ctc_frames_per_patch: expected 1 or more, got {self.ctc_frames_per_patch}"
            )
        if self.joint_alternatives < 0:
            raise ConfigError(f"model.joint_alternatives: expected 0 or more, got {self.joint_alternatives}")
        if self.decoder_max_chars is not None and (self.decoder_max_chars < 1 or self.ctc_weight <= 0):
            raise ConfigError(
                "model.decoder_max_chars: expected null, or 1 or more with a CTC head "
                f"(model.ctc_weight > 0), got {self.decoder_max_chars}"
            )
        if self.decoder_gate is not None and (not 0.0 < self.decoder_gate <= 1.0 or self.ctc_weight <= 0):
            raise ConfigError(
                "model.decoder_gate: expected null, or a probability in (0, 1] with a CTC head "
                f"(model.ctc_weight > 0), got {self.decoder_gate}"
            )
        if Decoding(self.decoding).reads_head and self.ctc_weight <= 0:
            raise ConfigError(f"model.decoding: {self.decoding!r} needs a CTC head (model.ctc_weight > 0)")


@dataclass
class DataConfig:
    # a JSONL manifest {"image": rel/abs path, "text": ...}, Parquet shards (DIR/*.parquet, fsspec URLs), or a
    # weighted mixture of them: [{path: ..., weight: 0.3}, ...] (ocrkit/data/mixing.py)
    train: str | list = "data/synth/lines/train/lines.jsonl"
    epoch_lines: int = 0  # lines per mixture epoch (0: as many as the sources hold)
    val: str = "data/synth/lines/val/lines.jsonl"  # manifest or shards evaluated every train.eval_every steps
    val_limit: int = 300  # evaluate on a seeded sample of N validation lines (CPU budget); 0 = all
    eval_batch_size: int = 32  # lines per greedy-decoding batch during evaluation
    max_chars: int = 0  # >0: skip training lines longer than this (never truncate a label its image shows)
    glue_share: float = 0.0  # extra training lines made of two lines side by side (long-line practice)
    augment: bool = True  # light scan-like augmentation of training crops
    scan_augment: float = 0.0  # with augment: share of crops that also get stretch/stroke/fade/warp
    box_jitter: float = 0.0  # with augment: sd, in line heights, of a random shift of each crop edge
    frame_share: float = 0.0  # with augment: share of crops given blank margins or neighbour lines' edges
    bucketing: bool = True  # aspect-ratio bucketing batch sampler (False = plain shuffled batches)
    longest: int = 512  # letterbox: long side → this (multiple of 16); also the ViT position grid side
    max_height: int = 64  # cap on the scaled line height (short words not blown up); 0 = off
    grayscale: bool = True  # gray → 3 channels
    pad_value: int = 0  # letterbox / batch padding value (uint8)

    def __post_init__(self) -> None:
        if self.glue_share < 0:
            raise ConfigError(f"data.glue_share: expected 0 or more, got {self.glue_share}")
        if not 0.0 <= self.scan_augment <= 1.0:
            raise ConfigError(f"data.scan_augment: expected a share in 0..1, got {self.scan_augment}")
        if not 0.0 <= self.box_jitter <= 0.4:
            raise ConfigError(f"data.box_jitter: expected 0..0.4 line heights, got {self.box_jitter}")
        if not 0.0 <= self.frame_share <= 1.0:
            raise ConfigError(f"data.frame_share: expected a share in 0..1, got {self.frame_share}")


@dataclass
class RecognizerConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainSettings = field(default_factory=TrainSettings)

    @staticmethod
    def start_folder_settings(raw: dict) -> dict:
        """Architecture, geometry and reading settings of the ocrkit folder `model.pretrained` names
        ({} for a hub id or a folder without ocrkit settings): a fine-tune keeps them (ocrkit.util.config)."""
        start = (raw.get("model") or {}).get("pretrained") or ""
        if not start or not (Path(start) / SETTINGS_NAME).is_file():
            return {}
        spec = read_spec(start, "recognizer")
        has_head = (Path(start) / spec.ctc_head).is_file()
        values = {k: getattr(spec, k) for k in START_MODEL_KEYS}
        model = {k: getattr(v, "value", v) for k, v in values.items() if v is not None}
        if has_head:
            model["ctc_frames_per_patch"] = spec.ctc_frames_per_patch
        else:
            model = {k: v for k, v in model.items() if k not in HEAD_KEYS}
        p = spec.preprocess
        data = {
            "longest": p.longest,
            "max_height": p.max_height,
            "grayscale": p.grayscale,
            "pad_value": p.pad_value,
        }
        return {"model": model, "data": data}
