"""Batches lose nothing: one output per page, one line per bad input, a true "N of M", no debris."""

import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from fixtures import dds_header, page_image, run_cli, thin_png, without_loading_line
from PIL import Image

from ocrkit.images.inputs import collect_inputs
from ocrkit.images.io import load_image
from ocrkit.pages.document import Line, Page
from ocrkit.pages.outputs import prepare_out_dir, write_atomic
from ocrkit.pages.overlay import GAP, overlay_png
from ocrkit.util.errors import InputError

NO_MODEL = ["--det-model", "/nonexistent/det", "--rec-model", "/nonexistent/rec"]


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("ocrkit: error:")]


def save_tiff(path: Path, pages: int) -> Path:
    images = [Image.fromarray(page_image(seed=s)) for s in range(pages)]
    images[0].save(path, save_all=True, append_images=images[1:])
    return path


def mixed_folder(root: Path) -> tuple[list[str], list[str]]:
    """Good, bad, same-named and multi-page inputs; returns (expected output names, bad file names)."""
    for sub, seed in (("2023", 0), ("2024", 1)):
        (root / sub).mkdir(parents=True)
        Image.fromarray(page_image(seed=seed)).save(root / sub / "page_001.jpg")
    Image.fromarray(page_image(seed=2)).save(root / "x.jpg")
    Image.fromarray(page_image(seed=3)).save(root / "x.png")
    save_tiff(root / "scan.tif", 3)
    (root / "empty.png").write_bytes(b"")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage\n")
    good = [
        "2023/page_001.jpg",
        "2024/page_001.jpg",
        "x.jpg",
        "x.png",
        *(f"scan.tif-p{n}" for n in (1, 2, 3)),
    ]
    return good, ["empty.png", "broken.pdf"]


# 1, 2, 3: distinct outputs for same-named pages, every TIFF page, failures counted
@pytest.mark.slow
def test_mixed_folder_gives_one_output_per_page_and_a_true_count(tmp_path, models, capsys):
    good, bad = mixed_folder(tmp_path / "in")
    out = tmp_path / "out"
    code, _, err = run_cli(["infer", tmp_path / "in", "--out", out, "--format", "json", *models], capsys)
    assert code == 1 and "Traceback" not in err
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json"))
    assert written == sorted(f"{name}.json" for name in good)
    assert [json.loads((out / "scan.tif-p2.json").read_text())[k] for k in ("page", "width")] == [2, 260]
    lines = error_lines(err)
    assert len(lines) == len(bad) and all(any(name in ln for ln in lines) for name in bad)
    assert err.splitlines()[-1] == f"ocrkit: {len(bad)} of {len(good) + len(bad)} inputs failed"


def test_one_good_and_two_bad_files_say_two_of_three(tmp_path, models, capsys):
    Image.fromarray(page_image()).save(tmp_path / "good.png")
    (tmp_path / "bad.png").write_text("not an image")
    code, _, err = run_cli(
        ["infer", tmp_path / "good.png", tmp_path / "bad.png", tmp_path / "gone.png", *models], capsys
    )
    assert code == 1 and err.splitlines()[-1] == "ocrkit: 2 of 3 inputs failed"


def test_detect_crops_of_same_named_pages_stay_apart(tmp_path, tiny_detector_dir, capsys):
    for sub, seed in (("2023", 0), ("2024", 1)):
        (tmp_path / "in" / sub).mkdir(parents=True)
        Image.fromarray(page_image(seed=seed)).save(tmp_path / "in" / sub / "page_001.jpg")
    out = tmp_path / "det"
    code, _, err = run_cli(
        ["detect", tmp_path / "in", "--out", out, "--crops", "--det-model", tiny_detector_dir], capsys
    )
    assert code == 0, err
    records = [json.loads(x) for x in (out / "lines.jsonl").read_text().splitlines()]
    assert {r["page_image"] for r in records} == {
        str(tmp_path / "in" / s / "page_001.jpg") for s in ("2023", "2024")
    }
    for r in records:  # each crop sits under its own page's folder
        assert r["image"].startswith(f"crops/{Path(r['page_image']).parent.name}/page_001.jpg/")
        assert (out / r["image"]).is_file()
    assert len({r["image"] for r in records}) == len(records)


def test_a_file_the_decoder_chokes_on_is_one_line_and_the_batch_goes_on(tmp_path, tiny_detector_dir, capsys):
    """Pages on both sides of files whose decoding fails in ways other than OSError (a DDS variant
    Pillow does not implement, named .png; a thin row that runs the decoder out of memory) are read."""
    (tmp_path / "in").mkdir()
    for name, seed in (("b.jpg", 0), ("c.png", 1)):
        Image.fromarray(page_image(seed=seed)).save(tmp_path / "in" / name)
    (tmp_path / "in" / "a_scan.png").write_bytes(dds_header())
    (tmp_path / "in" / "row.png").write_bytes(thin_png(100_000_000))
    out = tmp_path / "det"
    code, _, err = run_cli(
        ["detect", tmp_path / "in", "--out", out, "--det-model", tiny_detector_dir], capsys
    )
    assert code == 1 and "Traceback" not in err
    assert sorted(p.name for p in out.glob("*.json")) == ["b.jpg.json", "c.png.json"]
    lines = error_lines(err)
    assert len(lines) == 2 and "a_scan.png: corrupt or unsupported image" in lines[0]
    assert "row.png: image too thin" in lines[1]
    assert err.splitlines()[-1] == "ocrkit: 2 of 4 inputs failed"


def test_files_given_directly_with_the_same_name_are_reported_not_overwritten(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        Image.new("RGB", (8, 8)).save(tmp_path / sub / "x.png")
    inputs = collect_inputs([tmp_path / "a" / "x.png", tmp_path / "b" / "x.png"])
    assert [s.stem for s in inputs.sources] == ["x.png"] and inputs.total == 2
    (err,) = inputs.errors
    assert "b/x.png" in str(err) and "same output name" in str(err)


@pytest.mark.slow
def test_every_tiff_page_is_read(tmp_path, tiny_detector_dir, tiny_recognizer_dir):
    from ocrkit.pipeline import OCR

    tiff = save_tiff(tmp_path / "book.tiff", 3)
    assert load_image(tiff, page=3).shape == (180, 260, 3)
    results = list(OCR(tiny_detector_dir, tiny_recognizer_dir).read_many([tiff]))
    assert [(Path(p.image).name, p.page) for p in results] == [("book.tiff", n) for n in (1, 2, 3)]


# 4: a broken or missing tokenizer is one line and exit code 2
@pytest.mark.parametrize("damage", ["broken", "missing"])
def test_broken_tokenizer_is_one_line(tmp_path, tiny_recognizer_dir, capsys, damage):
    rec = tmp_path / "rec"
    shutil.copytree(tiny_recognizer_dir, rec)
    if damage == "broken":
        (rec / "tokenizer.json").write_text("{broken")
    else:
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (rec / name).unlink(missing_ok=True)  # transformers 5 writes no special_tokens_map.json
    Image.new("L", (60, 16), 255).save(tmp_path / "line.png")
    code, _, err = run_cli(["recognize", tmp_path / "line.png", "--rec-model", rec], capsys)
    error = without_loading_line(err)
    assert code == 2 and error.count("\n") == 1 and "tokenizer" in error and "Traceback" not in err


# 5: bad manifests, and --out a folder, never crash
def test_recognize_reports_bad_manifest_lines_and_reads_the_rest(tmp_path, tiny_recognizer_dir, capsys):
    Image.new("L", (60, 16), 255).save(tmp_path / "ok.png")
    lines = [{"image": "ok.png"}, {"image": 5}, {"image": None}, {"text": "no image"}]
    (tmp_path / "lines.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "latin1.jsonl").write_bytes('{"image": "caf\xe9.png"}\n'.encode("latin-1"))
    out = tmp_path / "preds.jsonl"
    args = ["recognize", tmp_path / "lines.jsonl", tmp_path / "latin1.jsonl", "--out", out]
    code, _, err = run_cli([*args, "--rec-model", tiny_recognizer_dir], capsys)
    assert code == 1 and "Traceback" not in err
    assert [json.loads(x)["image"] for x in out.read_text().splitlines()] == ["ok.png"]
    assert len(error_lines(err)) == 4 and "not UTF-8" in err
    assert err.splitlines()[-1] == "ocrkit: 4 of 5 inputs failed"


def test_recognize_out_folder_is_refused_before_any_work(tmp_path, capsys):
    Image.new("L", (60, 16), 255).save(tmp_path / "ok.png")
    (tmp_path / "preds").mkdir()
    code, _, err = run_cli(
        ["recognize", tmp_path / "ok.png", "--out", tmp_path / "preds", *NO_MODEL[2:]], capsys
    )
    assert code == 2 and err.count("\n") == 1 and "--out must be a file" in err


# 6: 12-bit data in a 16-bit PNG
def test_twelve_bit_data_in_a_sixteen_bit_png_keeps_its_contrast(tmp_path):
    gray = np.where(page_image()[..., 0] > 100, 4095, 200).astype(np.uint16)  # paper 4095, ink 200
    Image.fromarray(gray).save(tmp_path / "g12.png")
    arr = load_image(tmp_path / "g12.png")
    assert arr.max() == 255 and arr.min() == round(200 * 255 / 4095)


# 7: a 0-page PDF, also right after an encrypted one
def test_zero_page_pdf_message_is_its_own(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    with (tmp_path / "zero.pdf").open("wb") as f:
        writer.write(f)
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=300)
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    with (tmp_path / "locked.pdf").open("wb") as f:
        writer.write(f)
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\n garbage")
    order = ["zero.pdf", "locked.pdf", "zero.pdf", "bad.pdf", "zero.pdf"]
    errors = collect_inputs([tmp_path / n for n in order], unique_names=False).errors
    problems = [e.problem for e in errors]
    assert [("no pages" in p, "encrypted" in p) for p in problems] == [
        (True, False),
        (False, True),
        (True, False),
        (False, False),
        (True, False),
    ]
    assert "Success" not in " ".join(problems)


# 8: file names that are not UTF-8; the writer never leaves a temp file
@pytest.mark.skipif(os.name == "nt", reason="byte file names are a POSIX matter")
def test_non_utf8_file_name_is_read_and_written(tmp_path, models, capsys):
    (tmp_path / "in").mkdir()
    name = os.fsdecode(b"caf\xe9.png")
    Image.fromarray(page_image()).save(tmp_path / "in" / name)
    out = tmp_path / "out"
    code, _, err = run_cli(["infer", tmp_path / "in", "--out", out, "--format", "json,alto", *models], capsys)
    assert code == 0, err
    assert sorted(os.listdir(out)) == sorted([f"{name}.json", f"{name}.alto.xml"])
    assert json.loads((out / f"{name}.json").read_text(encoding="utf-8"))["image"].endswith("caf\ufffd.png")


def test_write_atomic_cleans_up_on_any_error(tmp_path, monkeypatch):
    with pytest.raises(UnicodeEncodeError):
        write_atomic(tmp_path / "a.json", "caf\udce9")
    assert list(tmp_path.iterdir()) == []

    def disk_full(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_atomic(tmp_path / "b.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_temp_files_of_a_killed_run_are_swept(tmp_path):
    dead = 2**22 + 12345  # above Linux's pid_max default: no such process
    stale = tmp_path / "sub" / f".a.json.{dead}.tmp"
    stale.parent.mkdir()
    stale.write_text("")
    live = tmp_path / f".b.json.{os.getpid()}.tmp"
    live.write_text("")
    prepare_out_dir(tmp_path)
    assert not stale.exists() and live.exists()


# 9: --out checked before models load and pages are read
@pytest.mark.parametrize("command", ["infer", "detect"])
def test_bad_out_is_refused_before_the_models_load(tmp_path, capsys, command):
    Image.fromarray(page_image()).save(tmp_path / "p.png")
    (tmp_path / "file").write_text("")
    for out, words in ((tmp_path / "file", "must be a folder"), (tmp_path / "file" / "sub", "cannot create")):
        code, _, err = run_cli(
            [command, tmp_path / "p.png", "--out", out, *NO_MODEL[: 2 if command == "detect" else 4]], capsys
        )
        assert code == 2 and err.count("\n") == 1 and words in err and "nonexistent" not in err


# 10: permission problems are named as such
def test_unreadable_folders_and_files_are_named(tmp_path, monkeypatch):
    root = tmp_path / "in"
    (root / "locked").mkdir(parents=True)
    Image.new("RGB", (8, 8)).save(root / "locked" / "hidden.png")
    Image.new("RGB", (8, 8)).save(root / "open.png")
    (tmp_path / "alone").mkdir()
    scandir = os.scandir

    def deny(path="."):
        if Path(path).name in ("locked", "alone"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", deny)
    inputs = collect_inputs([root, tmp_path / "alone"])
    assert [s.stem for s in inputs.sources] == ["open.png"]
    problems = {Path(e.path).name: e.problem for e in inputs.errors}
    assert set(problems) == {"locked", "alone"} and all("permission denied" in p for p in problems.values())

    def unreadable(*_, **__):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Image, "open", unreadable)
    with pytest.raises(InputError, match="permission denied"):
        load_image(root / "open.png")


# 11: overlays of extreme shapes
@pytest.mark.parametrize("shape", [(5000, 1), (1, 5000)])
def test_overlay_of_a_one_pixel_wide_page(shape):
    image = np.full((*shape, 3), 255, np.uint8)
    page = Page("thin.png", shape[1], shape[0], lines=[Line(bbox=[0, 0, shape[1], shape[0]], text="a")])
    width, height = Image.open(io.BytesIO(overlay_png(image, page))).size
    assert max((width - GAP) // 2, height) == 2000  # the page half, and the panel beside it, capped


# 12: option values are validated in one line, before anything runs
@pytest.mark.parametrize(
    "option", [["--batch-size", "0"], ["--threads", "-1"], ["--format", ""], ["--pages-per-batch", "0"]]
)
def test_bad_option_values_are_one_line_and_exit_2(tmp_path, capsys, option):
    code, out, err = run_cli(["infer", tmp_path, "--out", tmp_path / "out", *option], capsys)
    assert code == 2 and err.count("\n") == 1 and option[0] in err and not (tmp_path / "out").exists()


# 13: the documented limit, a bomb message with the size, bad paths before the model load
def test_pixel_limit_is_ours_and_the_bomb_message_names_the_size(tmp_path, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # Pillow warns above 1000, refuses above 2000
    Image.new("L", (50, 30)).save(tmp_path / "between.png")  # 1500 px: over Pillow's warning, under ours
    assert load_image(tmp_path / "between.png", max_pixels=2000).shape == (30, 50, 3)
    with pytest.raises(InputError, match=r"50×30 = 0.0015 M px; the limit is 0.001 M px"):
        load_image(tmp_path / "between.png", max_pixels=1000)
    Image.new("L", (100, 30)).save(tmp_path / "bomb.png")  # 3000 px: Pillow's bomb error
    with pytest.raises(InputError, match=r"too large \(0.003 M px"):
        load_image(tmp_path / "bomb.png", max_pixels=2000)


def test_bad_paths_are_reported_before_the_models_load(tmp_path, capsys):
    code, _, err = run_cli(["infer", tmp_path / "gone.png", *NO_MODEL], capsys)
    assert code == 1 and "gone.png: no such file" in err and "nonexistent" not in err
    assert err.splitlines()[-1] == "ocrkit: 1 of 1 inputs failed"
