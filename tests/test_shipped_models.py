"""The default models in ocrkit/models/: complete, fp16 within the size budget, and they run."""

import subprocess
import sys

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from ocrkit import pipeline
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import SETTINGS_NAME, RecognizerSpec, read_spec, write_spec
from ocrkit.images.io import load_image

SAMPLE = zoo.MODELS_DIR.parent.parent / "samples" / "synthetic_receipt.jpg"
BUDGET_MB = {"detector": 20, "recognizer": 40}


@pytest.mark.parametrize("kind", ["detector", "recognizer"])
def test_shipped_folder_is_complete_fp16_and_small(kind):
    folder = zoo.MODELS_DIR / kind
    for name in ("config.json", SETTINGS_NAME, "model.safetensors", "MODEL_CARD.md"):
        assert (folder / name).is_file(), f"{folder / name} missing"
    spec = read_spec(folder, kind)
    if getattr(spec, "decoding", None) in ("ctc", "joint"):  # both read the CTC head
        assert (folder / "ctc_head.safetensors").is_file()
    weights = sorted(folder.glob("*.safetensors"))
    assert sum(w.stat().st_size for w in weights) / 1e6 <= BUDGET_MB[kind]
    for path in weights:
        with safe_open(str(path), "np") as f:
            dtypes = {str(f.get_slice(k).get_dtype()) for k in f.keys()}
        assert "F16" in dtypes and "F32" not in dtypes, path


def test_shipped_models_read_the_sample_receipt():
    page = pipeline.OCR(threads=1).read(load_image(SAMPLE), name=str(SAMPLE))
    assert len(page.lines) >= 5  # the receipt has ~33 lines
    boxes = np.array([line.bbox for line in page.lines])
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
    assert boxes[:, 2].max() <= page.width and boxes[:, 3].max() <= page.height
    assert sum(len(line.text) for line in page.lines) > 50
    # its words: the line's text split at spaces, left to right, each inside its line's box
    for line in page.lines:
        assert [w.text for w in line.words] == line.text.split()
        starts = [w.bbox[0] for w in line.words]
        assert starts == sorted(starts)
        for word in line.words:
            x0, y0, x1, y1 = word.bbox
            assert line.bbox[0] <= x0 < x1 <= line.bbox[2] and line.bbox[1] <= y0 < y1 <= line.bbox[3]


@pytest.mark.slow
def test_shipped_recognizer_places_rendered_words(tmp_path):
    """Lines rendered in four faces, read in their own boxes: at least 95 % of the words get a box
    covering the rendered word with IoU >= 0.5 (benchmarks/words.py measures every face)."""
    import importlib.util

    path = SAMPLE.parent.parent / "benchmarks" / "words.py"
    spec = importlib.util.spec_from_file_location("words_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ocr = pipeline.OCR(threads=1)
    words = hits = 0.0
    for k, style in enumerate(("serif", "sans", "typewriter", "fraktur")):
        image, rendered, lines = bench.render_page(77 + k, style)
        page = ocr.read_boxes(image, np.array(lines))
        words += len(rendered)
        hits += bench.matched_share(page, rendered) * len(rendered)
    assert words > 150 and hits / words >= 0.95


@pytest.mark.slow
def test_ship_model_casts_to_fp16_and_overrides_inference_settings(tmp_path):
    src, dst = tmp_path / "run", tmp_path / "shipped"
    src.mkdir()
    save_file({"w": torch.full((3,), 1 / 3), "step": torch.tensor([7])}, str(src / "model.safetensors"))
    write_spec(src, RecognizerSpec(decoding="joint", extra={"note": "kept"}))
    cmd = [sys.executable, "-m", "ocrkit", "models", "ship", str(src), str(dst), "--set", "joint_gate=0.9"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    weights = load_file(str(dst / "model.safetensors"))
    assert weights["w"].dtype == torch.float16 and weights["step"].dtype == torch.int64
    shipped = read_spec(dst, "recognizer")
    assert shipped == RecognizerSpec(decoding="joint", joint_gate=0.9, extra={"note": "kept"})
    bad = subprocess.run(cmd[:-1] + ["joint_gate=high"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--set:" in bad.stderr and "joint_gate must be float" in bad.stderr
    typo = subprocess.run(cmd[:-1] + ["joint_gat=0.9"], capture_output=True, text=True, timeout=120)
    assert typo.returncode == 2 and "joint_gat: not a recognizer setting" in typo.stderr
