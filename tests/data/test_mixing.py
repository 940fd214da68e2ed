"""Weighted mixtures of line sources: the weights hold, small sources repeat, manifests and shards mix."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from fixtures import write_manifest

from ocrkit.data.lines_dataset import read_line_sources
from ocrkit.data.mixing import MixtureDataset, mixture, parse_sources
from ocrkit.data.packed import pack
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.util.config import ConfigError, load_config


def test_mixture_follows_the_weights_and_repeats_small_sources():
    big, small = list(range(1000)), list(range(1000, 1010))
    mixed = mixture([(big, 0.5), (small, 0.5)], total=200, seed=1)
    assert len(mixed) == 200 and sum(x >= 1000 for x in mixed) == 100
    assert Counter(x for x in mixed if x >= 1000) == Counter({x: 10 for x in small})
    assert mixture([(big, 1), (small, 1)], total=200, seed=1) == mixed  # seeded
    ds = MixtureDataset([(big, 3.0), (small, 1.0)], total=40)
    assert len(ds) == 40 and sum(ds[i] >= 1000 for i in range(40)) == 10
    with pytest.raises(ConfigError, match="weight"):
        parse_sources([{"path": "a", "weight": -1}], "data.train")


def test_recognizer_reads_a_weighted_mixture_of_manifests_and_shards(tmp_path):
    a = write_manifest(tmp_path / "a", ["A"] * 4)
    b = write_manifest(tmp_path / "b", ["B"] * 8)
    pack(b, tmp_path / "b_packed")
    spec = [{"path": str(a), "weight": 3}, {"path": str(tmp_path / "b_packed" / "*.parquet"), "weight": 1}]
    records = read_line_sources(spec, total=40)
    assert Counter(r["text"] for r in records) == {"A": 30, "B": 10}
    config = load_config(RecognizerConfig, None, [f"data.train={json.dumps(spec)}"])
    assert config.data.train == spec
