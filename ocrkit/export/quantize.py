"""Dynamic int8 quantization of exported ONNX folders (weights int8, activations quantized on the fly)."""

from __future__ import annotations

import shutil
from pathlib import Path

from onnxruntime.quantization import QuantType, quantize_dynamic


def quantize_folder(src: Path, dst: Path) -> Path:
    """Copy `src` to `dst`, replacing every .onnx graph with its dynamically int8-quantized version."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if f.suffix == ".onnx":
            # MatMul/Gemm only: quantizing convolutions costs D-FINE accuracy for little speed on CPU
            quantize_dynamic(
                str(f),
                str(dst / f.name),
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul", "Gemm"],
            )
        elif f.is_file():
            shutil.copy2(f, dst / f.name)
    return dst
