"""Recognizer → ONNX through Optimum (encoder, decoder, decoder-with-past), variable input size."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx

from ocrkit.errors import ModelError
from ocrkit.model_folder import read_spec, write_spec

OPSET = 17
ENCODER = "encoder_model.onnx"


def make_encoder_length_dynamic(path: Path) -> None:
    """Optimum records the encoder output's sequence length from the dummy input (e.g. 65); inputs of
    any other size then make onnxruntime warn on every run. Mark that dim symbolic."""
    model = onnx.load(str(path))
    dims = model.graph.output[0].type.tensor_type.shape.dim
    if len(dims) == 3 and dims[1].HasField("dim_value"):
        dims[1].Clear()
        dims[1].dim_param = "encoder_sequence_length"
        onnx.save(model, str(path))


def export_recognizer(model_dir: str | Path, out_dir: str | Path) -> Path:
    """Write Optimum's ONNX files + tokenizer + the folder's settings for a recognizer model folder."""
    import warnings

    model_dir, out_dir = Path(model_dir), Path(out_dir)
    try:
        from optimum.exporters.onnx import main_export
    except ImportError as exc:  # optimum-onnx 0.1 supports transformers < 4.58 only
        import transformers

        raise ModelError(
            model_dir,
            f"recognizer ONNX export needs optimum-onnx with transformers < 4.58; installed: transformers "
            f"{transformers.__version__} ({exc})",
        ) from None
    out_dir.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # without interpolate_pos_encoding the encoder graph bakes in the 384x384 position grid
        main_export(
            str(model_dir),
            str(out_dir),
            task="image-to-text-with-past",
            opset=OPSET,
            device="cpu",
            model_kwargs={"interpolate_pos_encoding": True},
        )
    make_encoder_length_dynamic(out_dir / ENCODER)
    (out_dir / "decoder_model_merged.onnx").unlink(missing_ok=True)  # the runtime uses the two decoders
    spec = read_spec(model_dir, "recognizer")
    write_spec(out_dir, spec)
    if (model_dir / spec.ctc_head).is_file():  # read in numpy by the runtime on the encoder's output
        shutil.copy2(model_dir / spec.ctc_head, out_dir / spec.ctc_head)
    return out_dir
