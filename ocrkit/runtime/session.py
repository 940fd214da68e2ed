"""onnxruntime sessions with the options users tune (threads, graph optimisation level)."""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort

from ocrkit.util.errors import ModelError

OPT_LEVELS = {
    "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}


def create_session(path: Path, threads: int | None = None, opt_level: str = "all") -> ort.InferenceSession:
    if not path.is_file():
        raise ModelError(path, "ONNX file not found (make one with `ocrkit export`)")
    options = ort.SessionOptions()
    options.graph_optimization_level = OPT_LEVELS[opt_level]
    options.log_severity_level = 3  # errors only: shape-inference warnings are noise here
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for corrupt files
        raise ModelError(path, f"cannot load ONNX model ({exc.__class__.__name__})") from None
