"""`ocrkit export`: model folders to ONNX folders that the ONNX backend loads; bad folders are one line."""

from __future__ import annotations

import json

import numpy as np
from fixtures import run_cli

from ocrkit.hub.model_folder import read_spec
from ocrkit.runtime.detector import OnnxDetector


def test_export_needs_a_folder_and_names_a_missing_one(tmp_path, capsys):
    code, _, err = run_cli(["export", "--out", tmp_path / "onnx"], capsys)
    assert code == 2 and "give --det, --rec and/or --orientation" in err
    code, _, err = run_cli(["export", "--det", tmp_path / "nope", "--out", tmp_path / "onnx"], capsys)
    assert code == 2 and "nope: not a model folder (--det)" in err and "Traceback" not in err
    assert not (tmp_path / "onnx").exists()


def test_export_writes_a_detector_folder_the_onnx_backend_reads(tmp_path, capsys, tiny_detector_dir):
    code, out, err = run_cli(["export", "--det", tiny_detector_dir, "--out", tmp_path / "onnx"], capsys)
    assert code == 0, err
    folder = tmp_path / "onnx" / "detector"
    spec = read_spec(folder, "detector")
    assert spec.onnx and (folder / spec.onnx).is_file() and str(folder) in out
    boxes, scores = OnnxDetector(folder, threads=1).predict([np.full((120, 200, 3), 255, np.uint8)])[0]
    assert boxes.shape == (len(scores), 4)  # the folder loads and reads a page
    assert json.loads((folder / "ocrkit.json").read_text())["score_threshold"] == spec.post.score_threshold


def test_calibration_needs_quantize_and_a_readable_page(tmp_path, capsys, tiny_detector_dir):
    base = ["export", "--det", tiny_detector_dir, "--out", tmp_path / "onnx"]
    code, _, err = run_cli([*base, "--calibration", tmp_path], capsys)
    assert code == 2 and "--calibration calibrates --quantize int8" in err
    (tmp_path / "broken.png").write_bytes(b"not a png")
    code, _, err = run_cli([*base, "--quantize", "int8", "--calibration", tmp_path / "broken.png"], capsys)
    assert code == 2 and "broken.png" in err and "no readable page" in err and "Traceback" not in err
