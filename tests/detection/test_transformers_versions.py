"""tools/check_transformers.py: every detector builds, trains, saves, loads and exports to ONNX, and the
shipped models read the samples as stored, with the installed transformers and with another one.

The other one is a folder named by OCRKIT_OTHER_TRANSFORMERS, e.g. transformers 5 beside CI's 4.57:
`pip install --no-deps --target DIR "transformers==5.*" "huggingface-hub>=1.31,<2" "tokenizers>=0.23.1,<0.24"`
(plus `typer`, which transformers 5 imports).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
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


PAGE_SHAPED = textwrap.dedent(
    """
    import sys, numpy as np, torch
    from ocrkit.detection import load_detector
    model = load_detector("ocrkit/models/detector").model  # trained: its encoder attends by position
    pixels = torch.rand(1, 3, 640, 384, generator=torch.Generator().manual_seed(1))  # page-shaped
    with torch.no_grad():
        out = model(pixel_values=pixels)
    np.save(sys.argv[1], torch.cat([out.logits, out.pred_boxes], -1)[0].numpy())
    """
)


@pytest.mark.skipif(
    not OTHER, reason="OCRKIT_OTHER_TRANSFORMERS names no folder with another transformers install"
)
def test_a_page_shaped_input_reads_the_same_in_both_versions(tmp_path):
    """transformers 5 lays the encoder's position embedding out otherwise than 4.57 on non-square maps;
    ocrkit.detection.compat gives 5.x the 4.57 layout."""
    import numpy as np

    for who, front in (("installed", []), ("other", [OTHER])):
        paths = os.pathsep.join([*front, str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = {**os.environ, "PYTHONPATH": paths, "OMP_NUM_THREADS": "1"}
        cmd = [sys.executable, "-c", PAGE_SHAPED, str(tmp_path / f"{who}.npy")]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
        assert done.returncode == 0, done.stderr[-3000:]
    installed, other = np.load(tmp_path / "installed.npy"), np.load(tmp_path / "other.npy")
    assert installed.shape == (300, 5)
    np.testing.assert_allclose(other, installed, atol=1e-4)  # logits and boxes of every query
