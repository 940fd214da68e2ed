"""The ONNX exports of the shipped models, made once per machine and kept in the cache folder
(ocrkit.hub.zoo.export_target: keyed by the weights and the export layout), so `--backend onnx` works
with the shipped torch folders."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from ocrkit.export.quiet import carry_card
from ocrkit.hub.model_folder import Kind, has_spec
from ocrkit.hub.model_info import CARD_NAME
from ocrkit.hub.zoo import export_target, is_shipped, require_exporter


def onnx_folder(folder: Path, kind: Kind) -> Path:
    """The folder the ONNX backend loads for `folder`: a shipped torch model's cached export (made once),
    any other folder as it is (it must be an export already: ocrkit export)."""
    return cached_onnx_export(folder, kind) if is_shipped(folder) else folder


def cached_onnx_export(model_dir: Path, kind: Kind) -> Path:
    """The ONNX export of `model_dir`, exporting it once if needed.

    The export is written to a temporary folder and renamed into place, so an interrupted export
    never leaves a half-written folder that would be mistaken for a finished one.
    """
    target = export_target(model_dir, kind)
    if has_spec(target):
        if not (target / CARD_NAME).is_file():  # made before exports carried their card
            carry_card(model_dir, target)
        return target
    require_exporter(kind)
    from ocrkit.export.detector import export_detector
    from ocrkit.export.orientation import export_orientation
    from ocrkit.export.recognizer import export_recognizer

    print(f"ocrkit: exporting the shipped {kind} to ONNX once, into {target}", file=sys.stderr)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=target.parent))
    try:
        exporters = {"detector": export_detector, "recognizer": export_recognizer}
        exporters.get(kind, export_orientation)(model_dir, scratch)  # quiet: ocrkit.export.quiet
        try:
            scratch.rename(target)
        except OSError:  # another process finished the same export first
            if not has_spec(target):
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target
