"""Detector configs that start from the shipped folder read pages as it does unless they say otherwise.

The detector burst once returned `score_threshold: 0.4` (the schema's default) for a shipped folder of
0.25, and the step-by-step fine-tune trained at 960 px square for a shipped model of 1280 px page-shaped."""

from __future__ import annotations

import pytest
from fixtures import REPO

from ocrkit.detection.config import DetectorConfig
from ocrkit.hub.model_folder import read_spec
from ocrkit.util.config import load_config, read_yaml

SHIPPED = read_spec(REPO / "ocrkit" / "models" / "detector", "detector")
CONFIGS = sorted((REPO / "configs" / "detector").glob("*.yaml"))


def starts_from_shipped(path) -> bool:
    return read_yaml(path).get("model", {}).get("pretrained") == "ocrkit/models/detector"


@pytest.mark.parametrize("name", ["finetune.yaml", "burst.yaml", "breadth.yaml"])
def test_user_facing_configs_keep_the_shipped_sizing_and_post_processing(name, monkeypatch):
    monkeypatch.chdir(REPO)
    config = load_config(DetectorConfig, REPO / "configs" / "detector" / name)
    assert config.data.sizing == SHIPPED.sizing and config.post == SHIPPED.post


@pytest.mark.parametrize("path", [p for p in CONFIGS if starts_from_shipped(p)], ids=lambda p: p.name)
def test_only_what_a_config_file_itself_sets_replaces_the_shipped_settings(path, monkeypatch):
    monkeypatch.chdir(REPO)
    config = load_config(DetectorConfig, path)
    own = read_yaml(path, includes=False)
    for key, value in vars(SHIPPED.sizing).items():
        expected = own.get("data", {}).get(key, value)
        assert getattr(config.data, key) == expected, key
    assert config.post.score_threshold == own.get("post", {}).get(
        "score_threshold", SHIPPED.post.score_threshold
    )
