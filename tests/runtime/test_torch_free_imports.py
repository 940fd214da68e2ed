"""The torch-free runtime and the shared decoding stay torch-free by their imports, not only by luck; and
what `ocrkit --help` and the model-folder contract import stays light with every extra installed.

For the runtime, torch is blocked (tests/scripts/block_torch.py): it must work where torch is absent. For
`--help`, torch is installed and must not be imported: albumentations imports torch whenever it can, so
ocrkit.images.preprocess imports albumentations only when it resizes an image."""

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


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`, with every installed extra available."""
    code += "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return set(json.loads(run.stdout.splitlines()[-1]))


HEAVY = {"torch", "albumentations", "transformers"}


def test_model_folder_imports_neither_torch_nor_albumentations():
    loaded = _modules_after("import ocrkit.hub.model_folder")
    assert "ocrkit.hub.model_folder" in loaded and "ocrkit.images.preprocess" in loaded and not HEAVY & loaded


def test_command_line_help_imports_neither_torch_nor_albumentations():
    loaded = _modules_after("from ocrkit.cli import build_parser\nbuild_parser().format_help()")
    assert {"ocrkit.commands.infer", "ocrkit.commands.serve"} <= loaded and not HEAVY & loaded


def test_resizing_before_torch_leaves_torch_unloaded_and_its_bridge_importable():
    """The ONNX runtime resizes with albumentations; in a full install that import used to load torch."""
    loaded = _modules_after(
        "import sys\nimport numpy as np\nfrom ocrkit.images.preprocess import letterbox\n"
        "out, _ = letterbox(np.zeros((40, 30, 3), np.uint8), 64)\n"
        "assert out.shape == (64, 48, 3)\n"
        "assert 'albumentations' in sys.modules and 'torch' not in sys.modules, 'torch was loaded'\n"
        "from albumentations.pytorch import ToTensorV2\n"
    )
    assert {"torch", "albumentations.pytorch"} <= loaded
