"""`ocrkit finetune` end to end on tiny models: one-minute budget, report, loadable model folders, reserved
copies refused; and the pieces it is made of (split, recipes, output folder, options)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import pytest
from fixtures import REPO, run_cli, text_pages, tiny_start_models

from ocrkit.cli import main
from ocrkit.commands.finetune import split_overrides
from ocrkit.data.ground_truth.importer import Importer, find_annotations, sha256_file
from ocrkit.finetune.data import Provenance, import_user_data, split_files
from ocrkit.finetune.recipe import detector_config, load_recipe, recognizer_config
from ocrkit.finetune.run import SYNTH_SEED, Job, check_out_dir, render_synthetic, synthetic_cache
from ocrkit.finetune.scoring import CONFIDENCE_CUTS, DETECTOR_CUTS
from ocrkit.hub.model_folder import read_spec
from ocrkit.util.errors import OcrkitError


@pytest.fixture(autouse=True)
def no_reserved_env(monkeypatch):
    monkeypatch.delenv("OCRKIT_RESERVED", raising=False)


def test_split_keeps_a_share_for_validation_at_least_one_never_all():
    files = [(Path(f"doc{i}.xml"), "page") for i in range(5)]
    train, val = split_files(files, 0.1)
    assert len(val) == 1 and len(train) == 4 and split_files(files, 0.1) == (train, val)
    assert len(split_files(files, 0.9)[0]) == 1  # one document always trains
    assert len(split_files(files[:2], 0.1)[1]) == 1
    with pytest.raises(OcrkitError, match="at least 2"):
        split_files(files[:1], 0.1)


def test_recipes_keep_the_start_models_geometry_and_decoding(tmp_path):
    recipe, mixing = load_recipe("detector", ["train.lr=1e-5", "finetune.synth_weight=0.3"])
    assert mixing.synth_weight == 0.3 and mixing.count(1.0) == 2 and mixing.count(60) == mixing.synth
    cfg = detector_config(
        recipe, REPO / "ocrkit/models/detector", "t.json", "v.json", "s.json", 0.3, tmp_path
    )
    shipped = json.loads((REPO / "ocrkit/models/detector/ocrkit.json").read_text())
    assert (cfg.data.longest, cfg.data.square, cfg.post.score_threshold) == (
        shipped["longest"],
        shipped["square"],
        shipped["score_threshold"],
    )
    assert cfg.model.num_queries == 300
    assert cfg.train.lr == 1e-5 and cfg.data.train[1] == {"path": "s.json", "weight": 0.3}
    recipe, _ = load_recipe("recognizer")
    cfg = recognizer_config(
        recipe, REPO / "ocrkit/models/recognizer", "t.jsonl", "v.jsonl", None, 0.2, tmp_path
    )
    shipped = json.loads((REPO / "ocrkit/models/recognizer/ocrkit.json").read_text())
    assert (cfg.model.decoding, cfg.model.joint_gate, cfg.model.decoder_max_chars, cfg.data.max_height) == (
        shipped["decoding"],
        shipped["joint_gate"],
        shipped["decoder_max_chars"],
        shipped["max_height"],
    )
    assert cfg.model.ctc_weight > 0 and cfg.data.train == "t.jsonl" and cfg.train.validate_first


def test_output_folder_and_options_are_checked(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(OcrkitError, match="not empty"):
        check_out_dir(tmp_path / "used")
    with pytest.raises(OcrkitError, match="inside the ocrkit package"):
        check_out_dir(REPO / "ocrkit" / "runs")
    assert split_overrides(["det.train.lr=1", "rec.data.val_limit=5"]) == {
        "detector": ["train.lr=1"],
        "recognizer": ["data.val_limit=5"],
    }
    with pytest.raises(OcrkitError, match="det.KEY=VALUE"):
        split_overrides(["train.lr=1"])


def test_a_refused_validation_document_is_replaced_by_another(tmp_path):
    """The split picks validation documents before the reserved list is consulted: when every one it
    picked is refused, another document is kept for validation, so the run still has both sets."""
    gt = tmp_path / "gt"
    text_pages(gt, 4)
    files, _ = find_annotations([gt], "auto")
    _, (picked, *_) = split_files(files, 0.1)
    reserved = {sha256_file(picked[0].with_suffix(".png"))}
    importer = Importer(tmp_path / "data", reserved, warn=lambda msg: None)
    data = import_user_data([gt], [], tmp_path / "data", importer, Provenance("mine"), 0.1, "list")
    assert importer.summary.refused == 1
    assert data.val_lines is not None and data.train_lines is not None
    val = (tmp_path / "data" / "lines" / "val.jsonl").read_text().splitlines()
    train = (tmp_path / "data" / "lines" / "train.jsonl").read_text().splitlines()
    assert len(val) == 3 and len(train) == 6  # 3 lines a page: one page kept for validation, two for training


@pytest.mark.slow
def test_train_end_to_end_in_one_minute(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("OCRKIT_CACHE", str(tmp_path / "cache"))  # the synthetic sets are kept there
    gt = tmp_path / "gt"
    text_pages(gt, 8)
    # an evaluation page: reserved, and a resized copy of it hides among the training pages
    (evaluation,) = text_pages(tmp_path / "eval", 1, seed=9)
    assert main(["data", "reserve", str(evaluation), "--out", str(tmp_path / "reserved.tsv")]) == 0
    small = cv2.resize(cv2.imread(str(evaluation)), (180, 120), interpolation=cv2.INTER_AREA)
    cv2.imwrite(str(gt / "copy.jpg"), small)
    xml = evaluation.with_suffix(".xml").read_text().replace(evaluation.name, "copy.jpg")
    (gt / "copy.xml").write_text(xml.replace('imageWidth="240" imageHeight="160"', ""))
    det, rec = tiny_start_models(tmp_path / "start")
    out = tmp_path / "out"
    capfd.readouterr()
    args = ["finetune", gt, "--out", out, "--minutes", "1", "--det-model", det, "--rec-model", rec]
    tests = text_pages(tmp_path / "test", 2, seed=5)
    run_args = [*args, "--reserved", tmp_path / "reserved.tsv", "--test", tmp_path / "test"]
    assert main([str(a) for a in run_args]) == 0
    printed = capfd.readouterr()
    assert (
        "\r" not in printed.out and "detector: step 0:" in printed.out and "recognizer: done:" in printed.out
    )
    assert "a copy of a page reserved for evaluation" in printed.err

    report = json.loads((out / "report.json").read_text())
    assert report["elapsed_minutes"] < 1.5 and report["data"]["refused_reserved"] == 1
    for side in ("before", "after"):
        assert report[side]["pages"] >= 1
        assert {"f1", "cer", "bow_f1", "box_cer", "s_per_page"} <= set(report[side])
    for kind, metric in (("detector", "f1"), ("recognizer", "cer")):
        model = report["models"][kind]
        assert model["before"]["step"] == 0 and metric in model["after"] and model["steps"] >= 2
    cut = report["models"]["recognizer"]["min_confidence"]
    threshold = report["models"]["detector"]["score_threshold"]
    own_threshold = read_spec(det, "detector").post.score_threshold  # a candidate beside DETECTOR_CUTS
    assert cut in CONFIDENCE_CUTS and threshold in {*DETECTOR_CUTS, own_threshold}
    for folder in (out / "recognizer", out / "onnx" / "recognizer"):  # chosen before the export
        assert read_spec(folder, "recognizer").min_confidence == (cut or None)
    for folder in (out / "detector", out / "onnx" / "detector"):
        assert read_spec(folder, "detector").post.score_threshold == threshold
    # every other setting of the start folders is kept: only the fitted ones may differ
    fitted = {"detector": {"score_threshold"}, "recognizer": {"min_confidence", "decoding"}}
    for kind, start in (("detector", det), ("recognizer", rec)):
        before_spec, after_spec = (json.loads((f / "ocrkit.json").read_text()) for f in (start, out / kind))
        changed = {
            k for k in before_spec.keys() | after_spec.keys() if before_spec.get(k) != after_spec.get(k)
        }
        assert changed <= fitted[kind], (kind, changed)
    timing = report["timed_side_by_side"]
    assert timing["before"] > 0 and timing["after"] > 0 and timing["pages"] >= 1
    assert report["peak_memory_gb"]["main"] > 0.1
    phases = report["phases_seconds"]
    assert {"import", "training (synthetic data included)", "ONNX export"} <= set(phases)
    assert sum(phases.values()) <= report["elapsed_minutes"] * 60 + 1
    assert len(list((tmp_path / "cache" / "synthetic").glob("*/COMPLETE"))) == 2
    log = (out / "train.log").read_text()
    assert re.search(r"^\d\d:\d\d:\d\d detector: keeps boxes scored", log, re.M)
    assert re.search(r"^\d\d:\d\d:\d\d recognizer: step 0:", log, re.M)  # a worker's lines too
    md = (out / "REPORT.md").read_text()
    assert "| before (start models) |" in md and "| after (fine-tuned) |" in md and "| gt | gt |" in md
    assert "flatters it" in md and "in turns" in md and "## The pair on 2 test pages" in md
    assert report["test"]["before"]["pages"] == report["test"]["after"]["pages"] == 2
    trained_on = (out / "data" / "pages" / "coco_train.json").read_text()
    trained_on += (out / "data" / "pages" / "coco_val.json").read_text()
    tested_on = (out / "data" / "pages" / "coco_test.json").read_text()
    digests = [sha256_file(p)[:8] for p in tests]  # imported page names end with their image's digest
    assert all(d in tested_on and d not in trained_on for d in digests)
    assert (out / "learning_curves.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "data" / "DATA_CARD.md").is_file()

    page = gt / "page00.png"
    for backend, d, r in (
        ("torch", out / "detector", out / "recognizer"),
        ("onnx", out / "onnx" / "detector", out / "onnx" / "recognizer"),
    ):
        code = main(["infer", str(page), "--backend", backend, "--det-model", str(d), "--rec-model", str(r)])
        assert code == 0, backend
    # a second run into the same folder is refused before any work
    code, _, err = run_cli([*args, "--no-reserved"], capfd)
    assert code == 2 and "not empty" in err


@pytest.mark.parametrize("kind", ["detector", "recognizer"])
def test_step_by_step_configs_use_the_recipes_training_choices(kind):
    from ocrkit.util.config import read_yaml

    recipe, _ = load_recipe(kind)
    config = read_yaml(REPO / "configs" / kind / "finetune.yaml")
    keys = [k for k in recipe["train"] if k not in ("steps", "log_every", "fit_probe_steps", "fit_evals")]
    assert {k: config["train"][k] for k in keys} == {k: recipe["train"][k] for k in keys}
    assert config["data"]["val_limit"] == recipe["data"]["val_limit"]


@pytest.mark.slow
def test_sigterm_ends_the_side_by_side_workers(tmp_path):
    """A supervisor stopping `ocrkit finetune` signals only the main process: its training workers must end
    with it instead of training on, orphaned."""
    import signal
    import subprocess
    import sys
    import time

    import psutil

    script = "import time\nfrom ocrkit.finetune.run import side_by_side\nside_by_side(time.sleep, [300] * 2)"
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        workers: list[psutil.Process] = []
        while len(workers) < 2:  # the two workers (the resource tracker is a child too)
            assert time.monotonic() < deadline and proc.poll() is None, "the workers did not start"
            children = psutil.Process(proc.pid).children(recursive=True)
            workers = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
            time.sleep(0.2)
        children = psutil.Process(proc.pid).children(recursive=True)
        time.sleep(1)  # let them reach fn
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) != 0
        _, alive = psutil.wait_procs(children, timeout=30)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--set", "rec.train.lrr=1"], "recognizer recipe: unknown config key 'train.lrr'"),
        (["--set", "det.train.lr=abc"], "detector recipe: "),
        (["--minutes", "0.1"], "--minutes 0.1: the export and the shortest training need"),
        (["--minutes", "1e300"], "--minutes 1e+300: at most 10080 (a week)"),
        (["--minutes", "inf"], "--minutes: must be a finite number above 0"),
    ],
)
def test_recipe_values_and_budget_are_checked_before_the_import(tmp_path, capsys, options, message):
    """A bad --set or --minutes is one line before anything is read or written, so the corrected
    command can use the same --out."""
    text_pages(tmp_path / "gt", 2)
    args = [
        "finetune",
        tmp_path / "gt",
        "--out",
        tmp_path / "out",
        "--no-reserved",
        "--minutes",
        "3",
        *options,
    ]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "import:" not in out
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_synthetic_sets_are_rendered_once_then_read_from_the_cache(tmp_path, monkeypatch, capsys):
    """Seeded renders come out the same, so a later run with the same set reads it instead of paying
    for it again out of its budget."""
    monkeypatch.setenv("OCRKIT_CACHE", str(tmp_path / "cache"))
    folder = synthetic_cache("recognizer", 6, SYNTH_SEED)
    assert folder.parent == tmp_path / "cache" / "synthetic"
    assert (
        folder != synthetic_cache("recognizer", 7, SYNTH_SEED) != synthetic_cache("detector", 6, SYNTH_SEED)
    )
    job = Job("recognizer", None, 1, 0.0, 6, folder, tmp_path / "train.log")
    render_synthetic(job)
    assert "rendered in" in capsys.readouterr().out
    manifest = folder / "lines.jsonl"
    written, lines = manifest.stat().st_mtime_ns, manifest.read_text().splitlines()
    assert len(lines) >= 6 and (folder / "COMPLETE").is_file()
    render_synthetic(job)
    assert "from the cache" in capsys.readouterr().out and manifest.stat().st_mtime_ns == written
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no half-rendered copy left
