"""The torch-free runtime and the shared decoding stay torch-free by their imports, not only by luck.

torch is blocked (tests/scripts/block_torch.py) rather than looked for in sys.modules: albumentations, which
ocrkit.preprocess uses, imports torch itself whenever torch happens to be installed."""

import json
import subprocess
import sys

from fixtures import SCRIPTS

TRAINING_PACKAGES = ("ocrkit.recognition", "ocrkit.detection", "ocrkit.data")


def test_runtime_and_decode_import_without_torch_and_without_the_training_packages():
    code = (
        "import importlib, json, pkgutil, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import block_torch\n"
        "import ocrkit.decode, ocrkit.runtime\n"
        "for pkg in (ocrkit.decode, ocrkit.runtime):\n"
        "    for m in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, str(SCRIPTS)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = json.loads(run.stdout)
    assert "ocrkit.decode.read" in loaded and "ocrkit.runtime.recognizer" in loaded
    assert not {"torch", "transformers"} & set(loaded)
    assert [m for m in loaded if ".".join(m.split(".")[:2]) in TRAINING_PACKAGES] == []
