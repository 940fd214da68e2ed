"""What page commands say while they work: the loading line, finished pages, the closing summary, and
which backend "auto" settles on."""

import io
from pathlib import Path

import pytest
from fixtures import page_image, run_cli
from PIL import Image

from ocrkit.commands.progress import PageProgress, loading_line
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import DetectorSpec, write_spec
from ocrkit.images.preprocess import PageSizing
from ocrkit.pages.document import Line, Page


def page_with(lines: int) -> Page:
    page = Page("p.png", 10, 10, seconds=0.5)
    page.lines = [Line([0, 0, 5, 5], "a") for _ in range(lines)]
    return page


def test_off_a_terminal_each_finished_page_is_one_plain_line():
    stream = io.StringIO()  # not a terminal
    progress = PageProgress(3, stream)
    assert stream.getvalue() == ""  # nothing before a page is finished
    progress.finished("a.png", page_with(2))
    progress.finished("b.png", None)
    progress.finished("c.png", page_with(5))
    progress.close()
    assert stream.getvalue().splitlines() == [
        "ocrkit: [1/3] a.png: 2 lines in 0.5 s",
        "ocrkit: [2/3] b.png: failed",
        "ocrkit: [3/3] c.png: 5 lines in 0.5 s",
    ]
    summary = progress.summary(Path("out"))
    assert summary.startswith("2 of 3 pages read, 1 failed, 7 lines, in ") and summary.endswith(
        "; written to out"
    )


def test_a_single_page_shows_no_progress():
    stream = io.StringIO()
    progress = PageProgress(1, stream)
    progress.finished("a.png", page_with(1))
    assert stream.getvalue() == "" and progress.summary(Path("o")).startswith("1 of 1 pages read, 1 lines")


def test_the_loading_line_names_the_backend_and_the_other_one_when_chosen():
    line = loading_line(["ocrkit line detector 0.7.0", "r"], "onnx", chosen=True)
    assert line == "loading ocrkit line detector 0.7.0, r on onnxruntime (--backend torch for torch)"
    assert loading_line(["d"], "torch", chosen=False) == "loading d on torch"


def test_infer_says_what_loads_first_and_ends_with_a_summary(tmp_path, models, capsys):
    for name in ("a.png", "b.png"):
        Image.fromarray(page_image()).save(tmp_path / name)
    code, _, err = run_cli(
        ["infer", tmp_path / "a.png", tmp_path / "b.png", *models, "--out", tmp_path / "o"], capsys
    )
    lines = err.splitlines()
    assert code == 0 and lines[0].startswith("ocrkit: loading ")
    assert lines[0].endswith(" on torch (--backend onnx for onnxruntime)")
    assert [line.split(": ")[1] for line in lines[1:3]] == [
        "[1/2] " + str(tmp_path / "a.png"),
        "[2/2] " + str(tmp_path / "b.png"),
    ]
    assert lines[-1].startswith("ocrkit: 2 of 2 pages read, ") and lines[-1].endswith(
        f"written to {tmp_path / 'o'}"
    )


def test_auto_backend_goes_through_onnx_only_where_every_model_can(tmp_path, tiny_detector_dir, monkeypatch):
    export = tmp_path / "det_onnx"
    export.mkdir()
    write_spec(export, DetectorSpec(PageSizing(128), "d_fine", onnx="detector.onnx"))
    (export / "detector.onnx").write_bytes(b"graph")
    assert zoo.auto_backend({"detector": export}, "cpu") == "onnx"
    assert zoo.auto_backend({"detector": export, "recognizer": tiny_detector_dir}, "cpu") == "torch"
    assert zoo.auto_backend({"detector": export}, "cuda") == "torch"  # a GPU is torch's
    shipped = zoo.resolve(None, "detector")
    monkeypatch.setenv("OCRKIT_CACHE", str(tmp_path / "cache"))  # no cached export here
    assert zoo.auto_backend({"detector": shipped}, "cpu") == "onnx"  # the export extra can make it
    monkeypatch.setattr(zoo, "_importable", lambda module: module != "optimum.exporters.onnx")
    assert zoo.auto_backend({"detector": shipped}, "cpu") == "torch"  # nothing to export with


@pytest.mark.parametrize("module", ["onnxruntime", "a_module_nobody_has.sub"])
def test_importable_finds_without_importing(module):
    assert zoo._importable(module) == (module == "onnxruntime")
