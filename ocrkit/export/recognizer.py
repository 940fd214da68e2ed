"""Recognizer → ONNX through Optimum (encoder, decoder, decoder-with-past), variable input size; both
decoder graphs take a cross-attention mask, so lines of different widths decode in one batch."""

from __future__ import annotations

import shutil
from pathlib import Path

import onnx

from ocrkit.export.quiet import carry_card, quiet_export
from ocrkit.hub.model_folder import read_spec, write_spec
from ocrkit.runtime.recognizer import ENCODER_MASK
from ocrkit.util.errors import ModelError

OPSET = 17
ENCODER = "encoder_model.onnx"
DECODERS = ("decoder_model.onnx", "decoder_with_past_model.onnx")


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
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    try:
        from optimum.exporters.onnx import onnx_export_from_model

        from ocrkit.export.masked_decoder import masked_export_inputs
    except ImportError as exc:  # optimum-onnx 0.1 supports transformers < 4.58 only
        import transformers

        raise ModelError(
            model_dir,
            f"recognizer ONNX export needs optimum-onnx with transformers < 4.58; installed: transformers "
            f"{transformers.__version__} ({exc})",
        ) from None
    from transformers import VisionEncoderDecoderModel

    out_dir.mkdir(parents=True, exist_ok=True)
    with quiet_export("recognizer"):
        model = VisionEncoderDecoderModel.from_pretrained(model_dir).eval()
        # without interpolate_pos_encoding the encoder graph bakes in the 384x384 position grid
        onnx_export_from_model(
            model,
            str(out_dir),
            task="image-to-text-with-past",
            opset=OPSET,
            device="cpu",
            custom_onnx_configs=masked_export_inputs(model),
            model_kwargs={"interpolate_pos_encoding": True},
        )
    make_encoder_length_dynamic(out_dir / ENCODER)
    for name in DECODERS:  # the runtime batches lines of different widths only through this input
        if ENCODER_MASK not in {i.name for i in onnx.load(str(out_dir / name)).graph.input}:
            raise ModelError(out_dir / name, f"the export lacks the {ENCODER_MASK} input")
    (out_dir / "decoder_model_merged.onnx").unlink(missing_ok=True)  # the runtime uses the two decoders
    spec = read_spec(model_dir, "recognizer")
    write_spec(out_dir, spec)
    if (model_dir / spec.ctc_head).is_file():  # read in numpy by the runtime on the encoder's output
        shutil.copy2(model_dir / spec.ctc_head, out_dir / spec.ctc_head)
    carry_card(model_dir, out_dir)
    return out_dir
