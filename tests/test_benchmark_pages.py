"""benchmarks/pages.py: each engine in its own child, with detection and recognition timed apart."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.fixtures import REPO, SAMPLES

spec = importlib.util.spec_from_file_location("benchmark_tool", REPO / "benchmarks" / "pages.py")
benchmark = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmark)


def test_timed_adds_each_call_to_its_stage():
    clock = {"detect": 0.0, "recognize": 0.0}
    slow = benchmark._timed(lambda x: (sum(range(200_000)), x)[1], clock, "recognize")
    assert slow(3) == 3 and slow(4) == 4
    assert clock["recognize"] > 0 and clock["detect"] == 0.0
    failing = benchmark._timed(lambda: 1 / 0, clock, "detect")
    with pytest.raises(ZeroDivisionError):
        failing()
    assert clock["detect"] > 0  # a failing call still counts its time


def test_stage_medians_per_page(tmp_path):
    assert benchmark.stage_medians(tmp_path) == {}  # a peer's folder has no stage file
    stages = {
        "a": {"detect": 0.1, "recognize": 0.3},
        "b": {"detect": 0.2, "recognize": 0.1},
        "c": {"detect": 0.4, "recognize": 0.2},
    }
    (tmp_path / benchmark.STAGES_FILE).write_text(json.dumps(stages))
    assert benchmark.stage_medians(tmp_path) == {"detect_s": 0.2, "recognize_s": 0.2}


def test_pages_table_splits_detection_and_recognition(tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "receipt.jpg").write_bytes((SAMPLES / "synthetic_receipt.jpg").read_bytes())
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "pages.py"),
            str(pages),
            "--engines",
            "ocrkit-torch",
            "--threads",
            "1",
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert "detect_s" in run.stdout and "recognize_s" in run.stdout
    (row,) = json.loads((tmp_path / "work" / "results.json").read_text())
    assert 0 < row["orient_s"] and 0 < row["detect_s"] and 0 < row["recognize_s"]
    # the page holds every stage (medians of the parts need not add up to the median of the whole)
    assert max(row["orient_s"], row["detect_s"], row["recognize_s"]) <= row["s_per_page"]
    assert row["orient_s"] + row["detect_s"] + row["recognize_s"] <= 1.2 * row["s_per_page"]
    page = json.loads((tmp_path / "work" / "ocrkit-torch" / "receipt.json").read_text())
    assert any("SUBTOTAL" in line["text"] for line in page["lines"])
