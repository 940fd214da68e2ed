"""`ocrkit infer --ray` on a local Ray (2 CPUs): the same texts as without --ray, a bad file reported
while the batch goes on, and a rerun that skips the pages already written. Tiny random models."""

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import ray
from fixtures import SAMPLES

from ocrkit.cli import main
from ocrkit.commands.common import Failures
from ocrkit.commands.infer_ray import _plan

pytestmark = pytest.mark.slow  # a local Ray cluster starts for these tests

SAMPLE_PAGES = sorted(SAMPLES.glob("*.jpg"))


def run(args: list) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, err.getvalue()


@pytest.fixture(scope="module")
def batch(tiny_detector_dir, tiny_recognizer_dir, tmp_path_factory):
    """The sample pages plus one broken file, read once without and once with --ray."""
    assert len(SAMPLE_PAGES) == 4
    root = tmp_path_factory.mktemp("ray_batch")
    for sample in SAMPLE_PAGES:
        shutil.copy(sample, root / sample.name)
    (root / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    models = ["--det-model", tiny_detector_dir, "--rec-model", tiny_recognizer_dir, "--backend", "torch"]
    args = ["infer", *(root / s.name for s in SAMPLE_PAGES), "--format", "txt,json", *models]
    args_and_bad = ["infer", root / "broken.png", *args[1:]]
    plain = run([*args_and_bad, "--out", root / "plain"])
    with_ray = run([*args_and_bad, "--out", root / "ray", "--ray", "--ray-actors", "2"])
    assert not ray.is_initialized()  # it started a local Ray of its own, and shut it down
    return root, args, plain, with_ray


def test_ray_reads_the_same_texts_as_without(batch):
    root, *_ = batch
    names = sorted(p.name for p in (root / "plain").iterdir())
    assert names == sorted(f"{s.name}.{ext}" for s in SAMPLE_PAGES for ext in ("txt", "json"))
    assert sorted(p.name for p in (root / "ray").iterdir()) == names
    for name in names:
        plain, with_ray = (root / "plain" / name).read_text(), (root / "ray" / name).read_text()
        if name.endswith(".json"):
            plain, with_ray = (json.loads(t)["lines"] for t in (plain, with_ray))
        assert with_ray == plain, name
    assert any((root / "ray" / f"{s.name}.txt").read_text().strip() for s in SAMPLE_PAGES)


def test_bad_file_is_reported_and_the_batch_goes_on(batch):
    *_, plain, (code, err) = batch
    assert plain[0] == code == 1
    assert "broken.png" in err and "Traceback" not in err
    assert "4 pages read on 2 Ray actors" in err and "1 failed" in err
    assert "1 of 5 inputs failed" in err


def test_rerun_skips_finished_pages(batch):
    root, args, *_ = batch
    written = {p.name: p.stat().st_mtime_ns for p in (root / "ray").iterdir()}
    code, err = run([*args, "--out", root / "ray", "--ray"])  # all written: Ray is not even started
    assert code == 0 and "0 pages read" in err and "4 skipped" in err
    assert {p.name: p.stat().st_mtime_ns for p in (root / "ray").iterdir()} == written
    (root / "ray" / f"{SAMPLE_PAGES[0].name}.json").unlink()  # a page left half done is read again
    todo, skipped, total = _plan(args[1:5], root / "ray", ["txt", "json"], Failures(debug=False))
    assert [Path(t["path"]).name for t in todo] == [SAMPLE_PAGES[0].name] and (skipped, total) == (3, 4)


def test_ray_needs_out(capsys):
    assert main(["infer", str(SAMPLE_PAGES[0]), "--ray"]) == 2
    assert "--ray needs --out" in capsys.readouterr().err


def test_ray_checks_out_before_starting_ray(tmp_path, capsys):
    (tmp_path / "f").write_text("a file", encoding="utf-8")
    assert main(["infer", str(SAMPLE_PAGES[0]), "--out", str(tmp_path / "f"), "--ray"]) == 2
    err = capsys.readouterr().err
    assert err == f"ocrkit: error: {tmp_path / 'f'}: --out must be a folder, and this is a file\n"
    assert not ray.is_initialized()


def test_ray_removes_the_temp_files_a_killed_run_left(tmp_path, capsys):
    dead = 2**22 + 12345  # above the default pid_max: no such process
    stale = tmp_path / "out" / f".p1.jpg.json.{dead}.tmp"
    stale.parent.mkdir()
    stale.write_text("{half", encoding="utf-8")
    assert main(["infer", str(tmp_path / "nope.jpg"), "--out", str(tmp_path / "out"), "--ray"]) == 1
    assert "no such file or folder" in capsys.readouterr().err and not stale.exists()
