"""int8 copies of exported ONNX folders.

Every graph's MatMul/Gemm weights are quantized dynamically (activations quantized on the fly). A
detector given calibration pages is quantized statically instead: the convolutions of its backbone and
hybrid encoder, which take most of its time on a CPU, run in int8 with activation ranges measured on
those pages (QDQ format, weights per channel); its decoder, box decoding and NMS stay in float, where
coordinates and scores need the precision. Dynamic quantization of the convolutions themselves
(ConvInteger) cost D-FINE accuracy for little speed.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import onnx
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)
from onnxruntime.quantization.shape_inference import quant_pre_process

from ocrkit.hub.model_folder import DetectorSpec, check_folder
from ocrkit.images.preprocess import detector_input

# node-name prefixes of the detector graph's image-sized stages (ocrkit.export.detector wraps the
# transformers model as `model`, whose own `model` holds backbone, encoder and their projections)
STATIC_PARTS = ("/model/model/backbone/", "/model/model/encoder/", "/model/model/encoder_input_proj")
MATMULS = ["MatMul", "Gemm"]  # quantized dynamically in every graph
STATIC_OPS = ["Conv", "Relu", "Concat", "MaxPool", "Add", "Mul", "Resize", "Sigmoid"]


def quantize_folder(src: Path, dst: Path, calibration: Sequence[np.ndarray] = ()) -> Path:
    """Copy `src` to `dst`, every .onnx graph replaced by its int8 version: a detector's statically
    (calibrated on the RGB `calibration` pages) when pages are given, every other graph dynamically."""
    dst.mkdir(parents=True, exist_ok=True)
    spec = check_folder(src, "detector") if calibration else None
    for f in src.iterdir():
        if f.suffix == ".onnx" and spec is not None and f.name == spec.onnx:
            quantize_detector(f, dst / f.name, spec, calibration)
        elif f.suffix == ".onnx":
            with _quiet_root_logger():  # onnxruntime advises its pre-processing on every graph, via root
                quantize_dynamic(
                    str(f), str(dst / f.name), weight_type=QuantType.QInt8, op_types_to_quantize=MATMULS
                )
        elif f.is_file():
            shutil.copy2(f, dst / f.name)
    return dst


def quantize_detector(src: Path, dst: Path, spec: DetectorSpec, pages: Sequence[np.ndarray]) -> None:
    """The detector graph with its backbone's and encoder's convolutions in int8, activation ranges
    (min-max) measured on `pages` letterboxed as at inference."""
    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(src), str(prepared), skip_symbolic_shape=True)
        nodes = [n.name for n in onnx.load(str(prepared)).graph.node if n.name.startswith(STATIC_PARTS)]
        quantize_static(
            str(prepared),
            str(dst),
            _Pages(spec, pages),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=STATIC_OPS,
            nodes_to_quantize=nodes,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax,
        )


@contextmanager
def _quiet_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


class _Pages(CalibrationDataReader):
    """The detector's inputs for the calibration pages, one page at a time."""

    def __init__(self, spec: DetectorSpec, pages: Sequence[np.ndarray]) -> None:
        self._inputs: Iterator[dict[str, np.ndarray]] = (
            {"pixel_values": detector_input(spec.sizing.letterbox(page)[0])[None]} for page in pages
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._inputs, None)
