from dataclasses import dataclass, field

import pytest
from fixtures import REPO

from ocrkit.engine.settings import TrainSettings
from ocrkit.util.config import ConfigError, load_config


@dataclass
class Model:
    name: str = "dfine"
    size: int = 640


@dataclass
class Cfg:
    model: Model = field(default_factory=Model)
    train: TrainSettings = field(default_factory=TrainSettings)


def test_include_override_and_set(tmp_path):
    (tmp_path / "base.yaml").write_text("model: {name: rtdetr, size: 512}\ntrain: {lr: 0.001, steps: 10}\n")
    (tmp_path / "run.yaml").write_text("include: base.yaml\nmodel: {size: 800}\n")
    cfg = load_config(Cfg, tmp_path / "run.yaml", ["train.steps=25", "train.adam_betas=[0.8, 0.9]"])
    assert cfg.model.name == "rtdetr" and cfg.model.size == 800
    assert cfg.train.lr == 0.001 and cfg.train.steps == 25 and cfg.train.adam_betas == (0.8, 0.9)


def test_unknown_key_is_named(tmp_path):
    (tmp_path / "c.yaml").write_text("model: {nmae: x}\n")
    with pytest.raises(ConfigError, match="model.nmae"):
        load_config(Cfg, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="train.lrr"):
        load_config(Cfg, None, ["train.lrr=1"])


def test_type_errors_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="train.steps"):
        load_config(Cfg, None, ["train.steps=lots"])
    with pytest.raises(ConfigError, match="not found"):
        load_config(Cfg, tmp_path / "nope.yaml")


def test_a_fine_tune_keeps_the_start_folders_settings_unless_its_own_file_sets_them(tmp_path):
    """Base files give defaults a start folder replaces; the named file and --set still win."""
    import json
    import shutil

    from ocrkit.recognition.config import RecognizerConfig

    start = tmp_path / "start"
    shutil.copytree(REPO / "ocrkit" / "models" / "recognizer", start)
    settings = json.loads((start / "ocrkit.json").read_text())
    (tmp_path / "base.yaml").write_text(
        "model: {ctc_weight: 0.5, ctc_frames_per_patch: 1, decoding: joint}\ndata: {longest: 1024}\n"
    )
    (tmp_path / "run.yaml").write_text(f"include: base.yaml\nmodel: {{pretrained: {start}}}\n")
    config = load_config(RecognizerConfig, tmp_path / "run.yaml")
    assert config.model.ctc_frames_per_patch == settings["ctc_frames_per_patch"] == 2
    assert config.model.decoding == settings["decoding"]
    assert config.data.longest == settings["longest"]
    assert config.model.decoder_gate == settings["decoder_gate"]
    (tmp_path / "own.yaml").write_text(
        f"include: base.yaml\nmodel: {{pretrained: {start}}}\ndata: {{longest: 512}}\n"
    )
    config = load_config(RecognizerConfig, tmp_path / "own.yaml", ["model.decoding=ctc"])
    assert config.data.longest == 512 and config.model.decoding == "ctc"
    assert config.model.ctc_frames_per_patch == 2


def test_a_saved_fine_tune_keeps_the_reading_settings_its_run_never_sets(tmp_path):
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import read_spec, with_settings, write_spec
    from ocrkit.recognition.task import inherit_settings

    start = tmp_path / "start"
    shutil.copytree(REPO / "ocrkit" / "models" / "recognizer", start)
    begun = with_settings(read_spec(start, "recognizer"), {"windowed": True, "min_confidence": 0.5}, start)
    write_spec(start, begun)
    trained = replace(begun, preprocess=replace(begun.preprocess, windowed=False), min_confidence=None)
    trained = replace(trained, decoder_gate=0.9)  # a setting the run does own
    saved = inherit_settings(trained, str(start), tmp_path / "out")
    assert saved.preprocess.windowed is True and saved.min_confidence == 0.5
    assert saved.decoder_gate == 0.9
    assert inherit_settings(trained, "", tmp_path / "out") == trained  # a hub id or random init


def _include_depth(path) -> int:
    import yaml

    named = yaml.safe_load(path.read_text(encoding="utf-8")).get("include") or []
    named = [named] if isinstance(named, str) else named
    return 1 + max((_include_depth(path.parent / name) for name in named), default=0) if named else 0


@pytest.mark.parametrize(
    "path", sorted((REPO / "configs").glob("*/*.yaml")), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_shipped_configs_include_flat(path):
    """A run's config includes a model file, which includes the defaults, and no more: a value is read
    in one of three files, not found by walking a chain of earlier runs' configs."""
    assert _include_depth(path) <= 2
