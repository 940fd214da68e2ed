"""Data modules depend on no model package: datasets hand over raw targets, the tasks encode them."""

import json
import os
import subprocess
import sys

import pytest
from fixtures import REPO

pytestmark = pytest.mark.slow  # imports every data module in a fresh interpreter

IMPORT_ALL_DATA = """
import importlib, json, pkgutil, sys
import ocrkit.data
names = [m.name for m in pkgutil.walk_packages(ocrkit.data.__path__, "ocrkit.data.")]
for name in names:
    importlib.import_module(name)
print(json.dumps({"imported": names, "loaded": sorted(sys.modules)}))
"""


def test_data_modules_import_no_model_package():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL_DATA],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"ocrkit.data.lines_dataset", "ocrkit.data.coco_dataset", "ocrkit.data.synth.generate"} <= set(
        report["imported"]
    )
    model_side = [m for m in report["loaded"] if m.startswith(("ocrkit.recognition", "ocrkit.detection"))]
    assert model_side == []
