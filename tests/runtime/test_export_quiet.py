"""Exports say nothing users cannot act on, and carry the model card with the weights."""

import logging
import shutil
import warnings

from ocrkit.export.detector import export_detector
from ocrkit.export.quiet import quiet_export
from ocrkit.hub.model_info import CARD_NAME


def test_a_detector_export_carries_its_card_and_prints_no_tracer_warnings(tiny_detector_dir, tmp_path, capfd):
    model = tmp_path / "det"
    shutil.copytree(tiny_detector_dir, model)
    (model / CARD_NAME).write_text("---\nlicense: apache-2.0\n---\n# a detector\n")
    capfd.readouterr()
    export_detector(model, tmp_path / "onnx")
    out, err = capfd.readouterr()
    assert (tmp_path / "onnx" / CARD_NAME).read_text() == (model / CARD_NAME).read_text()
    assert out == "" and err == ""  # the tracer's warnings about Python control flow stay inside


def test_the_exporters_own_check_becomes_one_line_and_loggers_are_restored(capfd):
    checker = logging.getLogger("optimum.exporters.onnx.convert")
    before = logging.getLogger("optimum").handlers[:], logging.getLogger("optimum").level
    with quiet_export("recognizer"):
        checker.error("\t\t-[x] values not close enough, max diff: 4.363059997558594e-05 (atol: 1e-05)")
        checker.warning("- last_hidden_state: max diff = 3.17692756652832e-05.")
        warnings.warn("Converting a tensor to a Python boolean might cause the trace", stacklevel=1)
    assert capfd.readouterr().err == "ocrkit: recognizer: ONNX outputs within 4.4e-05 of torch's\n"
    assert (logging.getLogger("optimum").handlers, logging.getLogger("optimum").level) == before
    with quiet_export("detector"):
        pass
    assert capfd.readouterr().err == ""
