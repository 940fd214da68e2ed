"""The default models in ocrkit/models/: complete, fp16 within the size budget, and they run."""

import json

import numpy as np
import pytest
from safetensors import safe_open

from ocrkit import pipeline
from ocrkit.io import load_image

SAMPLE = pipeline.MODELS_DIR.parent.parent / "samples" / "synthetic_receipt.jpg"
BUDGET_MB = {"detector": 20, "recognizer": 40}


@pytest.mark.parametrize("kind", ["detector", "recognizer"])
def test_shipped_folder_is_complete_fp16_and_small(kind):
    folder = pipeline.MODELS_DIR / kind
    for name in ("config.json", "ocrkit.json", "model.safetensors", "MODEL_CARD.md"):
        assert (folder / name).is_file(), f"{folder / name} missing"
    settings = json.loads((folder / "ocrkit.json").read_text())
    assert settings["task"] in {"detection", "recognition"}
    if settings.get("decoding") in ("ctc", "joint"):  # both read the CTC head
        assert (folder / "ctc_head.safetensors").is_file()
    weights = sorted(folder.glob("*.safetensors"))
    assert sum(w.stat().st_size for w in weights) / 1e6 <= BUDGET_MB[kind]
    for path in weights:
        with safe_open(str(path), "np") as f:
            dtypes = {str(f.get_slice(k).get_dtype()) for k in f.keys()}
        assert "F16" in dtypes and "F32" not in dtypes, path


def test_shipped_models_read_the_sample_receipt():
    page = pipeline.OCR(threads=1).read_array(load_image(SAMPLE), name=str(SAMPLE))
    assert len(page.lines) >= 5  # the receipt has ~33 lines
    boxes = np.array([line.bbox for line in page.lines])
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
    assert boxes[:, 2].max() <= page.width and boxes[:, 3].max() <= page.height
    assert sum(len(line.text) for line in page.lines) > 50
