"""`ocrkit infer` JSON on the samples with the shipped models: the same lines as the stored expectation.

Refactors must not change what the toolkit reads. The expectation lives in tests/golden/infer/; after a
deliberate change (a new shipped model) rewrite it with
`OCRKIT_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py`.
Text must match exactly; boxes within half a pixel and scores within 1e-3 allow for BLAS rounding across CPUs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from fixtures import REPO, SAMPLES

pytestmark = pytest.mark.slow  # `ocrkit infer` with the shipped models in a subprocess

SAMPLE_PAGES = sorted(SAMPLES.glob("*.jpg"))
GOLDEN = REPO / "tests" / "golden" / "infer"


def _essentials(result: dict) -> list[dict]:
    return [
        {key: line[key] for key in ("bbox", "text", "det_score", "rec_score")} for line in result["lines"]
    ]


@pytest.fixture(scope="module")
def infer_outputs(tmp_path_factory) -> dict[str, list[dict]]:
    out = tmp_path_factory.mktemp("infer")
    cmd = [sys.executable, "-m", "ocrkit.cli", "infer", *map(str, SAMPLE_PAGES), "--out", str(out)]
    subprocess.run([*cmd, "--format", "json", "--threads", "1"], check=True, capture_output=True, timeout=600)
    return {p.name: _essentials(json.loads(p.read_text())) for p in sorted(out.glob("*.json"))}


def test_samples_are_read_as_stored(infer_outputs):
    assert len(infer_outputs) == len(SAMPLE_PAGES) >= 3
    if os.environ.get("OCRKIT_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, lines in infer_outputs.items():
            text = json.dumps(lines, indent=1, ensure_ascii=False) + "\n"
            (GOLDEN / name).write_text(text, encoding="utf-8")
    for name, lines in infer_outputs.items():
        expected = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
        assert [line["text"] for line in lines] == [line["text"] for line in expected], name
        for got, want in zip(lines, expected, strict=True):
            assert max(abs(a - b) for a, b in zip(got["bbox"], want["bbox"], strict=True)) <= 0.5, name
            assert abs(got["det_score"] - want["det_score"]) <= 1e-3, name
            assert abs(got["rec_score"] - want["rec_score"]) <= 1e-3, name
