"""Fine-tuning recipes: the YAML files in ocrkit/finetune/recipes/ turned into training configs.

A recipe holds the choices (learning rates, warm-up, batch size, how much synthetic data to mix in); the
start model's folder holds what fine-tuning must keep (architecture, input geometry, post-processing,
tokenizer, decoding), so a fine-tuned folder reads pages exactly as its start model did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ocrkit.decode.ctc import Decoding
from ocrkit.detection.config import DetectorConfig
from ocrkit.hub.model_folder import read_spec
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.util.config import ConfigError, apply_overrides, from_dict, read_yaml

Model = Literal["detector", "recognizer"]
RECIPES = Path(__file__).parent / "recipes"


@dataclass
class Mixing:
    """How much freshly rendered synthetic data joins the user's (the recipe's `finetune:` section)."""

    synth: int = 0  # items rendered per run, at most
    synth_per_minute: float = 0.0  # and at most this many per minute of the budget
    synth_weight: float = 0.0  # their share of each epoch

    def count(self, budget_minutes: float) -> int:
        return int(min(self.synth, self.synth_per_minute * budget_minutes))


def load_recipe(kind: Model, overrides: list[str] | None = None) -> tuple[dict, Mixing]:
    """(the training config as a dict, the mixing settings) of the shipped recipe, with `--set`-style
    overrides (`train.lr=1e-4`, `finetune.synth_weight=0.3`) applied."""
    recipe = {**read_yaml(RECIPES / f"{kind}.yaml"), "finetune": read_yaml(RECIPES / "mixing.yaml")[kind]}
    data = apply_overrides(recipe, overrides or [])
    mixing = from_dict(Mixing, data.pop("finetune", None) or {}, "finetune")
    return data, mixing


def _train_source(own: str, synth: str | None, weight: float) -> str | list:
    if synth is None or weight <= 0:
        return own
    return [{"path": own, "weight": 1.0 - weight}, {"path": synth, "weight": weight}]


def detector_config(
    recipe: dict, start: Path, train: str, val: str, synth: str | None, weight: float, out_dir: Path
) -> DetectorConfig:
    """The detector's training config: recipe choices, the start folder's queries, geometry and
    post-processing (DetectorConfig.start_folder_settings, as for any config starting from a folder)."""
    inherited = DetectorConfig.start_folder_settings({"model": {"pretrained": str(start)}})
    if not inherited:
        read_spec(start, "detector")  # not an ocrkit detector folder: the one-line error says why
    fixed = {
        "model": {"pretrained": str(start), **inherited["model"]},
        "data": {"train": _train_source(train, synth, weight), "val": val, **inherited["data"]},
        "post": inherited["post"],
        "train": {"out_dir": str(out_dir)},
    }
    return from_dict(DetectorConfig, _merge(recipe, fixed))


def recognizer_config(
    recipe: dict, start: Path, train: str, val: str, synth: str | None, weight: float, out_dir: Path
) -> RecognizerConfig:
    """The recognizer's training config: recipe choices, the start folder's geometry and decoding
    (RecognizerConfig.start_folder_settings: the same settings any config starting from a folder keeps)."""
    inherited = RecognizerConfig.start_folder_settings({"model": {"pretrained": str(start)}})
    if not inherited:
        read_spec(start, "recognizer")  # not an ocrkit recognizer folder: the one-line error says why
    model = {"pretrained": str(start), **inherited["model"]}
    if "ctc_frames_per_patch" not in model:  # no CTC head: the decoder reads
        model.update(ctc_weight=0.0, decoding=Decoding.ATTENTION.value)
    elif (
        float(recipe.get("model", {}).get("ctc_weight", 0.0)) <= 0 and Decoding(model["decoding"]).reads_head
    ):
        raise ConfigError("model.ctc_weight: the start model reads with its CTC head; keep it above 0")
    fixed = {
        "model": model,
        "data": {"train": _train_source(train, synth, weight), "val": val, **inherited["data"]},
        "train": {"out_dir": str(out_dir)},
    }
    return from_dict(RecognizerConfig, _merge(recipe, fixed))


def _merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for key, value in top.items():
        out[key] = _merge(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out
