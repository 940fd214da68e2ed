"""tools/gpu_burst.py --dry-run: trains on packed shards and returns small fp16 files with the settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from fixtures import REPO, make_coco, write_manifest

from ocrkit.data.packed import pack
from ocrkit.hub.model_folder import read_spec

pytestmark = pytest.mark.slow  # a training run in a subprocess

TEXTS = ["Total 12.50", "CASH", "Kaffee und Kuchen", "no. 7", "Anzahl", "x"]


def test_gpu_burst_dry_run_trains_and_returns_small_fp16_files(tmp_path, tiny_recognizer_dir):
    manifest = write_manifest(tmp_path / "lines", TEXTS, sizes=True)
    pack(manifest, tmp_path / "packed")
    cmd = [
        sys.executable,
        str(REPO / "tools" / "gpu_burst.py"),
        "--dry-run",
        "--out",
        str(tmp_path / "out"),
        "--set",
        f"model.pretrained={tiny_recognizer_dir}",
        "--set",
        "model.size=tiny",
        "--set",
        f"data.train={json.dumps([{'path': str(tmp_path / 'packed' / '*.parquet'), 'weight': 1}])}",
        "--set",
        f"data.val={manifest}",
        "--set",
        "data.longest=128",
        "--set",
        f"train.out_dir={tmp_path / 'run'}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["best_value"] is not None
    from safetensors.torch import load_file

    weights = load_file(str(tmp_path / "out" / "model.safetensors"))
    assert {v.dtype for v in weights.values() if v.is_floating_point()} == {torch.float16}
    assert read_spec(tmp_path / "out", "recognizer").preprocess.longest > 0
    assert (tmp_path / "out" / "metrics.jsonl").is_file()


def test_gpu_burst_dry_run_from_the_shipped_recognizer_keeps_every_setting(tmp_path):
    """The burst's default config starts from the shipped folder and must take its architecture and
    reading settings (a config once overrode its CTC frame rate, and the burst stopped on a head shape
    mismatch before its first step): the returned folder's settings are the shipped folder's."""
    manifest = write_manifest(tmp_path / "lines", TEXTS, sizes=True)
    pack(manifest, tmp_path / "packed")
    train = json.dumps([{"path": str(tmp_path / "packed" / "*.parquet"), "weight": 1}])
    cmd = [sys.executable, str(REPO / "tools" / "gpu_burst.py"), "--dry-run", "--out", str(tmp_path / "out")]
    for key, value in (("data.train", train), ("data.val", manifest), ("train.out_dir", tmp_path / "run")):
        cmd += ["--set", f"{key}={value}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    shipped = json.loads((REPO / "ocrkit" / "models" / "recognizer" / "ocrkit.json").read_text())
    returned = json.loads((tmp_path / "out" / "ocrkit.json").read_text())
    assert {k: v for k, v in returned.items() if k in shipped} == shipped
    assert set(returned) - set(shipped) <= {"min_confidence"}


def test_gpu_burst_dry_run_from_the_shipped_detector_keeps_every_setting(tmp_path):
    """The same for the detector: the burst trains at the shipped folder's page geometry and returns its
    settings (threshold and post-processing included) unchanged."""
    coco = make_coco(tmp_path / "pages", 2, size=(320, 200))
    pack(coco, tmp_path / "packed", page_side=320, codec=".webp")
    shards = str(tmp_path / "packed" / "*.parquet")
    train = json.dumps([{"path": shards, "weight": 1}])
    cmd = [sys.executable, str(REPO / "tools" / "gpu_burst.py"), "--task", "det", "--dry-run"]
    cmd += ["--out", str(tmp_path / "out")]
    sets = (
        ("data.train", train),
        ("data.epoch_pages", 2),
        ("data.val", shards),
        ("train.out_dir", tmp_path / "run"),
    )
    for key, value in sets:
        cmd += ["--set", f"{key}={value}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    shipped = json.loads((REPO / "ocrkit" / "models" / "detector" / "ocrkit.json").read_text())
    returned = json.loads((tmp_path / "out" / "ocrkit.json").read_text())
    assert returned == shipped


def test_gpu_burst_dry_run_trains_the_detector_on_page_shards(tmp_path, tiny_detector_dir):
    coco = make_coco(tmp_path / "pages", 4, size=(200, 120))
    pack(coco, tmp_path / "packed", page_side=160, codec=".webp")
    shards = str(tmp_path / "packed" / "*.parquet")
    sets = {
        "model.pretrained": str(tiny_detector_dir),
        "model.num_queries": "30",  # a 128 px page has fewer anchors than the default 300
        "data.train": json.dumps([{"path": shards, "weight": 1}]),
        "data.epoch_pages": "4",
        "data.val": shards,
        "data.longest": "128",
        "train.out_dir": str(tmp_path / "run"),
    }
    cmd = [sys.executable, str(REPO / "tools" / "gpu_burst.py"), "--task", "det", "--dry-run"]
    cmd += ["--out", str(tmp_path / "out")] + [x for k, v in sets.items() for x in ("--set", f"{k}={v}")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["best_value"] is not None and summary["pages_per_s"] > 0
    from safetensors.torch import load_file

    weights = load_file(str(tmp_path / "out" / "model.safetensors"))
    assert {v.dtype for v in weights.values() if v.is_floating_point()} == {torch.float16}
    spec = read_spec(tmp_path / "out", "detector")
    start = read_spec(tiny_detector_dir, "detector")  # the start folder's shape is kept; --set's side wins
    assert (spec.sizing.longest, spec.sizing.square, spec.post) == (128, start.sizing.square, start.post)
    from ocrkit.detection import load_detector

    detector = load_detector(tmp_path / "out")  # config.json + fp16 weights + settings: a loadable folder
    assert next(detector.model.parameters()).dtype == torch.float32
