"""`ocrkit` commands end to end with tiny models, including a corpus of bad inputs."""

import io
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from fixtures import page_image, run_cli, without_loading_line
from PIL import Image

from ocrkit.images.preprocess import PageSizing
from ocrkit.pages.overlay import GAP


@pytest.mark.slow
def test_console_script_help():
    exe = Path(sys.executable).with_name("ocrkit")
    res = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "infer" in res.stdout and "synth" in res.stdout


def test_infer_one_file_prints_text(tmp_path, models, capsys):
    Image.fromarray(page_image()).save(tmp_path / "p.png")
    code, out, err = run_cli(["infer", tmp_path / "p.png", *models], capsys)
    assert code == 0, err
    assert out.strip() and "Traceback" not in err


@pytest.mark.slow
def test_infer_all_formats(tmp_path, models, capsys):
    Image.fromarray(page_image()).save(tmp_path / "a.png")
    Image.fromarray(page_image(seed=1)).save(tmp_path / "b.jpg")
    code, _, err = run_cli(
        [
            "infer",
            tmp_path,
            "--out",
            tmp_path / "out",
            "--format",
            "txt,json,hocr,alto,page,overlay",
            *models,
        ],
        capsys,
    )
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    extensions = ("txt", "json", "hocr", "alto.xml", "page.xml", "overlay.png")
    assert names == sorted(f"{s}.{e}" for s in ("a.png", "b.jpg") for e in extensions)
    data = json.loads((tmp_path / "out" / "a.png.json").read_text())
    assert set(data) >= {"image", "page", "width", "height", "seconds", "lines"}
    assert (data["width"], data["height"]) == (260, 180)
    for line in data["lines"]:
        x0, y0, x1, y1 = line["bbox"]
        assert 0 <= x0 <= x1 <= 260 and 0 <= y0 <= y1 <= 180
        assert set(line) >= {"bbox", "text", "score", "det_score", "rec_score"}
    ET.parse(tmp_path / "out" / "a.png.alto.xml")
    ET.parse(tmp_path / "out" / "a.png.page.xml")
    assert Image.open(tmp_path / "out" / "a.png.overlay.png").size == (2 * 260 + GAP, 180)  # page + panel


def bad_corpus(root: Path) -> dict[str, str]:
    """Write the bad inputs; returns {file name: words expected in its error line}."""
    good = page_image()
    (root / "zero.png").write_bytes(b"")
    buf = io.BytesIO()
    Image.fromarray(good).save(buf, "PNG")
    (root / "truncated.png").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 3])
    buf = io.BytesIO()
    Image.fromarray(good).save(buf, "JPEG")
    (root / "truncated.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 3])
    (root / "notes.png").write_text("this is a text file\n")
    Image.new("1", (20000, 20000), 1).save(root / "huge.png")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage\n")
    return {
        "zero.png": "empty",
        "truncated.png": "truncated",
        "truncated.jpg": "truncated",
        "notes.png": "not a recognised image",
        "huge.png": "too large",
        "broken.pdf": "PDF",
    }


def good_corpus(root: Path) -> list[str]:
    Image.new("RGB", (1, 1), "white").save(root / "one_pixel.png")
    Image.fromarray(page_image()[..., 0].astype(np.uint16) * 257).save(root / "gray16.tif")
    rgba = np.dstack([page_image(), np.full((180, 260), 128, np.uint8)])
    Image.fromarray(rgba, "RGBA").save(root / "rgba.png")
    Image.fromarray(page_image()).convert("CMYK").save(root / "cmyk.jpg")
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(page_image()).save(root / "rotated.jpg", exif=exif.tobytes())
    Image.new("RGB", (300, 200), "white").save(root / "blank.png")
    Image.fromarray(page_image()).save(
        root / "doc.pdf", save_all=True, append_images=[Image.new("RGB", (80, 60))]
    )
    return [
        "one_pixel.png",
        "gray16.tif",
        "rgba.png",
        "cmyk.jpg",
        "rotated.jpg",
        "blank.png",
        "doc.pdf-p1",
        "doc.pdf-p2",
    ]


@pytest.mark.slow
def test_bad_inputs_are_reported_and_the_rest_processed(tmp_path, models, capsys):
    data = tmp_path / "in"
    data.mkdir()
    (tmp_path / "empty_dir").mkdir()
    expected_errors = bad_corpus(data)
    good = good_corpus(data)
    code, _, err = run_cli(
        ["infer", data, tmp_path / "empty_dir", "--out", tmp_path / "out", "--format", "json", *models],
        capsys,
    )
    assert code == 1
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("ocrkit: error:")]
    for name, words in expected_errors.items():
        hits = [ln for ln in lines if name in ln]
        assert len(hits) == 1 and words.lower() in hits[0].lower(), (name, hits)
    assert any("empty_dir" in ln and "no images" in ln for ln in lines)
    assert f"{len(expected_errors) + 1} of" in err.splitlines()[-1]
    assert sorted(p.stem for p in (tmp_path / "out").glob("*.json")) == sorted(good)
    rotated = json.loads((tmp_path / "out" / "rotated.jpg.json").read_text())
    assert (rotated["width"], rotated["height"]) == (180, 260)  # EXIF orientation applied
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.startswith(".")]  # no temp files left


def test_missing_and_corrupt_models_give_one_line(tmp_path, tiny_detector_dir, tiny_recognizer_dir, capsys):
    Image.fromarray(page_image()).save(tmp_path / "p.png")
    code, _, err = run_cli(
        ["infer", tmp_path / "p.png", "--det-model", tmp_path / "nope", "--rec-model", tiny_recognizer_dir],
        capsys,
    )
    assert code == 2 and err.count("\n") == 1 and "nope" in err  # refused before the loading line
    broken = tmp_path / "broken_det"
    shutil.copytree(tiny_detector_dir, broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    code, _, err = run_cli(
        ["infer", tmp_path / "p.png", "--det-model", broken, "--rec-model", tiny_recognizer_dir], capsys
    )
    loading, error = err.splitlines()  # what was loading, then the one error line
    assert code == 2 and loading.startswith("ocrkit: loading") and "broken_det" in error
    assert "Traceback" not in err


def test_default_model_message_or_run(tmp_path, capsys, monkeypatch):
    from ocrkit.hub import zoo

    monkeypatch.setattr(zoo, "MODELS_DIR", tmp_path / "not_installed")
    Image.fromarray(page_image()).save(tmp_path / "p.png")
    code, _, err = run_cli(["infer", tmp_path / "p.png"], capsys)
    assert code == 2 and "no default detector model installed" in err


def test_detect_crops_then_recognize(tmp_path, tiny_detector_dir, tiny_recognizer_dir, capsys):
    import torch

    Image.fromarray(page_image()).save(tmp_path / "p.png")
    threads = torch.get_num_threads()
    try:
        code, _, err = run_cli(
            [
                "detect",
                tmp_path / "p.png",
                "--out",
                tmp_path / "det",
                "--crops",
                "--det-model",
                tiny_detector_dir,
                "--threads",
                threads + 1,
            ],
            capsys,
        )
        assert torch.get_num_threads() == threads + 1  # --threads reached torch
    finally:
        torch.set_num_threads(threads)
    assert code == 0, err
    page = json.loads((tmp_path / "det" / "p.png.json").read_text())
    manifest = (tmp_path / "det" / "lines.jsonl").read_text().splitlines()
    assert len(manifest) == len(page["lines"]) > 0
    code, _, err = run_cli(
        [
            "recognize",
            tmp_path / "det" / "lines.jsonl",
            "--out",
            tmp_path / "preds.jsonl",
            "--rec-model",
            tiny_recognizer_dir,
        ],
        capsys,
    )
    assert code == 0, err
    preds = [json.loads(x) for x in (tmp_path / "preds.jsonl").read_text().splitlines()]
    assert [p["image"] for p in preds] == [json.loads(m)["image"] for m in manifest]
    assert all(isinstance(p["text"], str) and 0 <= p["score"] <= 1 for p in preds)


def test_synth_lines_bad_page_scale_is_a_one_line_error(tmp_path, capsys):
    for spec in ("2.6,1", "big,2"):
        code, _, err = run_cli(["synth", "lines", "--n", 1, "--out", tmp_path, "--page-scale", spec], capsys)
        assert code != 0 and "--page-scale" in err and "Traceback" not in err
    assert not (tmp_path / "lines.jsonl").exists()


def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly():
    """`ocrkit … | head -1`: no BrokenPipeError traceback, the exit status of a tool the pipe stopped."""
    import subprocess
    import sys

    script = (
        "import sys, ocrkit.cli as cli\n"
        "class Args:\n"
        "    debug = False\n"
        "    command = 'x'\n"
        "    @staticmethod\n"
        "    def func(args):\n"
        "        for n in range(200000):\n"
        "            print('line', n)\n"
        "class P:\n"
        "    def parse_args(self, argv): return Args()\n"
        "cli.build_parser = lambda: P()\n"
        "sys.exit(cli.main([]))\n"
    )
    done = subprocess.run(
        f'{sys.executable} -c "{script}" | head -1',
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        executable="/bin/bash",
    )
    assert done.stdout == "line 0\n"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_page_without_lines_is_said_in_one_line(tmp_path, models, capsys, monkeypatch):
    from ocrkit.pages.document import Page
    from ocrkit.pipeline import OCR

    monkeypatch.setattr(
        OCR, "detect", lambda self, image, name="<array>", page=1: Page(name, 10, 10, page=page)
    )
    Image.new("RGB", (300, 200), "white").save(tmp_path / "blank.png")
    code, out, err = run_cli(["infer", tmp_path / "blank.png", *models], capsys)
    assert code == 0
    assert "blank.png: no text lines found" in err and "ocrkit recognize" in err
    assert without_loading_line(err).count("\n") == 1 and "Traceback" not in err


def test_infer_writes_the_chosen_format_on_standard_output(tmp_path, models, capsys):
    """Without --out: json as one JSON object per line, txt pages split by a form feed, XML for a page."""
    Image.fromarray(page_image()).save(tmp_path / "a.png")
    Image.fromarray(page_image(seed=1)).save(tmp_path / "b.png")
    pages = [tmp_path / "a.png", tmp_path / "b.png"]
    code, out, err = run_cli(["infer", *pages, "--format", "json", *models], capsys)
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert [Path(r["image"]).name for r in records] == ["a.png", "b.png"]
    assert all(r["lines"] and {"bbox", "text", "score"} <= set(r["lines"][0]) for r in records)
    code, text, err = run_cli(["infer", *pages, *models], capsys)
    assert code == 0, err
    texts = text.split("\f")  # tesseract's layout: a form feed before each page but the first
    assert len(texts) == 2 and all(page.strip() and page.endswith("\n") for page in texts)
    code, out, err = run_cli(["infer", pages[0], "--format", "alto", *models], capsys)
    assert code == 0, err
    root = ET.fromstring(out.encode())
    assert root.tag.endswith("alto") and out.count("<?xml") == 1


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--format", "overlay"], "--format overlay writes pictures: give --out DIR"),
        (["--format", "txt,json"], "standard output takes one format"),
        (["--format", "hocr"], "the inputs hold 2 pages: give --out DIR"),
    ],
)
def test_infer_refuses_what_standard_output_cannot_hold_before_loading(tmp_path, capsys, option, words):
    for name in ("a.png", "b.png"):
        Image.fromarray(page_image()).save(tmp_path / name)
    missing = ["--det-model", tmp_path / "no_det", "--rec-model", tmp_path / "no_rec"]  # never reached
    code, out, err = run_cli(["infer", tmp_path / "a.png", tmp_path / "b.png", *option, *missing], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("ocrkit: error: ") and words in err and "no_det" not in err


def test_an_onnx_export_given_to_torch_is_one_line_naming_the_backend(tmp_path, tiny_recognizer_dir, capsys):
    from ocrkit.hub.model_folder import DetectorSpec, write_spec

    Image.fromarray(page_image()).save(tmp_path / "p.png")
    det_export = tmp_path / "det_onnx"  # what ocrkit export writes for a detector: graph + settings
    det_export.mkdir()
    write_spec(det_export, DetectorSpec(PageSizing(128), "d_fine", onnx="detector.onnx"))
    (det_export / "detector.onnx").write_bytes(b"graph")
    rec_export = tmp_path / "rec_onnx"  # a recognizer export: graphs, config and tokenizer, no weights
    shutil.copytree(tiny_recognizer_dir, rec_export)
    (rec_export / "model.safetensors").unlink()
    (rec_export / "encoder_model.onnx").write_bytes(b"graph")
    p = tmp_path / "p.png"
    runs = [
        (
            ["infer", p, "--backend", "torch", "--det-model", det_export, "--rec-model", tiny_recognizer_dir],
            det_export,
            "add --backend onnx",
        ),
        (["infer", p, "--backend", "torch", "--rec-model", rec_export], rec_export, "add --backend onnx"),
        (
            ["detect", p, "--out", tmp_path / "det", "--det-model", det_export],
            det_export,
            "ocrkit detect runs torch",
        ),
    ]
    for argv, export, remedy in runs:
        code, _, err = run_cli(argv, capsys)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert f"{export}: holds an ONNX export: {remedy}" in err


def test_a_mistyped_shipped_model_name_gets_a_suggestion(tmp_path, capsys):
    Image.fromarray(page_image()).save(tmp_path / "p.png")
    code, _, err = run_cli(["infer", tmp_path / "p.png", "--rec-model", "recogniser"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "recogniser: " in err and "did you mean 'recognizer'?" in err


def test_recognize_cuts_loose_margins_but_reads_detected_crops_as_cut(
    tmp_path, capsys, monkeypatch, tiny_recognizer_dir
):
    """Crops given to `recognize` come from anywhere: they are cut to their line's rows by default,
    whatever the folder says; crops `ocrkit detect --crops` cut from detected boxes (its manifest says
    so) are read as cut, like the pipeline reads them; --keep-margins reads every crop whole."""
    from ocrkit.recognition.predictor import Recognizer

    real, seen = Recognizer.recognize, []

    def recording(self, crops, batch_size=16, trim_margins=None):
        seen.append((len(crops), trim_margins))
        return real(self, crops, batch_size, trim_margins)

    monkeypatch.setattr(Recognizer, "recognize", recording)
    crop = np.full((60, 200, 3), 255, np.uint8)
    crop[25:38, 20:180] = 0  # one line, a blank margin above and below
    for name in ("loose.png", "detected.png"):
        Image.fromarray(crop).save(tmp_path / name)
    records = [
        {"image": "loose.png"},
        {"image": "detected.png", "framing": "detected"},
        {"image": "loose.png"},
    ]
    (tmp_path / "lines.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for extra, calls in (([], [(2, True), (1, False)]), (["--keep-margins"], [(3, False)])):
        seen.clear()
        code, out, err = run_cli(
            ["recognize", tmp_path / "lines.jsonl", "--rec-model", tiny_recognizer_dir, *extra], capsys
        )
        assert code == 0, err
        assert [json.loads(x)["image"] for x in out.splitlines()] == [
            "loose.png",
            "detected.png",
            "loose.png",
        ]
        assert seen == calls
