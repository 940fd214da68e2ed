"""ONNX export of the page-orientation classifier: one graph, windows in, logits out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import torch

from ocrkit.export.quiet import carry_card, quiet_export
from ocrkit.hub.model_folder import write_spec
from ocrkit.orientation.model import OrientationClassifier

ONNX_NAME = "orientation.onnx"
OPSET = 17


def export_orientation(model_dir: str | Path, out_dir: str | Path) -> Path:
    """Write out_dir/orientation.onnx (+ the folder's settings, naming the graph)."""
    classifier = OrientationClassifier.load(model_dir)
    spec = classifier.spec
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / ONNX_NAME
    dummy = torch.zeros(2, 1, spec.window, spec.window)
    with torch.no_grad(), quiet_export("orientation"):
        torch.onnx.export(
            classifier.model,
            (dummy,),
            str(target),
            opset_version=OPSET,
            dynamo=False,
            input_names=["windows"],
            output_names=["logits"],
            dynamic_axes={"windows": {0: "n"}, "logits": {0: "n"}},
        )
    classifier.model.eval()
    write_spec(out_dir, replace(spec, onnx=ONNX_NAME))
    carry_card(Path(model_dir), out_dir)
    return target
