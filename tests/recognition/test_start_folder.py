"""Every recognizer config that starts from the shipped folder builds the shipped architecture.

A base file's `ctc_frames_per_patch: 1` once overrode the shipped folder's 2, and the GPU burst stopped
at "CTC head shape (704, 192) does not match the model's (352, 192)" before its first step."""

from __future__ import annotations

import json

import pytest
from fixtures import REPO

from ocrkit.recognition.config import RecognizerConfig
from ocrkit.util.config import load_config

SHIPPED = REPO / "ocrkit" / "models" / "recognizer"
CONFIGS = sorted(
    p
    for p in (REPO / "configs" / "recognizer").glob("*.yaml")
    if "pretrained: ocrkit/models/recognizer" in p.read_text()
)


def test_the_configs_that_start_from_the_shipped_folder_are_found():
    assert {p.name for p in CONFIGS} >= {"burst.yaml", "finetune.yaml"}


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_config_builds_the_shipped_model_with_its_settings(config, monkeypatch):
    from ocrkit.recognition.task import RecognitionTask

    monkeypatch.chdir(REPO)
    settings = json.loads((SHIPPED / "ocrkit.json").read_text())
    loaded = load_config(RecognizerConfig, config)
    assert loaded.model.ctc_frames_per_patch == settings["ctc_frames_per_patch"]
    assert loaded.data.longest == settings["longest"] and loaded.data.max_height == settings["max_height"]
    model = RecognitionTask(loaded).build_model()  # loads the weights and the CTC head: shapes must agree
    assert sum(p.numel() for p in model.parameters()) > 5_000_000
