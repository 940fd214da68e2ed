"""tools/check_transformers.py: every detector builds, trains, saves, loads and exports to ONNX, and the
shipped models read the samples as stored, with the installed transformers and with another one.

The other one is a folder named by OCRKIT_OTHER_TRANSFORMERS, e.g. transformers 5 beside CI's 4.57:
`pip install --no-deps --target DIR "transformers==5.*" "huggingface-hub>=1.3,<2" "tokenizers>=0.23,<0.24"`
(plus `typer`, which transformers 5 imports).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import transformers
from fixtures import REPO

pytestmark = pytest.mark.slow  # three detectors trained and exported in a subprocess

OTHER = os.environ.get("OCRKIT_OTHER_TRANSFORMERS", "")


def check(pythonpath: list[str], *args: str) -> list[dict]:
    """tools/check_transformers.py's results with `pythonpath` in front of this process's PYTHONPATH."""
    paths = [*pythonpath, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(REPO / "tools" / "check_transformers.py"), "--device", "cpu", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, (results, done.stderr[-3000:])
    return results


def test_detectors_work_with_the_installed_transformers():
    results = check([str(REPO)])
    assert {r["transformers"] for r in results} == {transformers.__version__}
    assert {r["arch"] for r in results if r["check"] == "detector"} == {"dfine", "rtdetr", "rtdetr_v2"}
    assert all(len(r["losses"]) == 2 and min(r["onnx_lines"]) > 0 for r in results)


@pytest.mark.skipif(
    not OTHER, reason="OCRKIT_OTHER_TRANSFORMERS names no folder with another transformers install"
)
def test_detectors_and_shipped_models_work_with_the_other_transformers():
    installs = [
        p.name.removesuffix(".dist-info").split("-")[1] for p in Path(OTHER).glob("transformers-*.dist-info")
    ]
    assert installs, f"{OTHER}: no transformers installed in this folder"
    if installs[0] == transformers.__version__:
        pytest.skip(f"{OTHER} holds the transformers this process runs ({installs[0]})")
    results = check([OTHER, str(REPO)], "--shipped")
    assert {r["transformers"] for r in results} == {installs[0]}  # the subprocess really ran the other one
    assert {r["arch"] for r in results if r["check"] == "detector"} == {"dfine", "rtdetr", "rtdetr_v2"}
    (shipped,) = (r for r in results if r["check"] == "shipped")
    assert shipped["same_text"] == shipped["lines"] > 50
    (onnx,) = (r for r in results if r["check"] == "shipped_onnx")
    assert onnx["lines"] > 50 and onnx["max_box_diff_px"] < 0.05
