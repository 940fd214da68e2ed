"""Parquet shards, weighted mixtures, case-free targets, the time budget and the GPU burst's dry run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import cv2
import numpy as np
import pytest
import torch
from fixtures import REPO, ToyTask, make_coco, toy_settings, write_manifest

from ocrkit.config import ConfigError, load_config
from ocrkit.data.lines_dataset import read_line_sources
from ocrkit.data.manifest import read_manifest
from ocrkit.data.mixing import MixtureDataset, mixture, parse_sources
from ocrkit.data.packed import decode_image, pack, read_packed_lines, read_packed_pages
from ocrkit.engine.checkpoint import latest_checkpoint
from ocrkit.engine.trainer import Trainer, choose_device
from ocrkit.errors import OcrkitError
from ocrkit.model_folder import read_spec
from ocrkit.recognition.case_folding import case_partners, fold_cases
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.tokenizer import build_tokenizer

TEXTS = ["Total 12.50", "CASH", "Kaffee und Kuchen", "no. 7", "Anzahl", "x"]


def test_packed_lines_round_trip_the_manifest_bytes_and_fields(tmp_path):
    manifest = write_manifest(tmp_path / "lines", TEXTS, sizes=True)
    shards = pack(manifest, tmp_path / "packed", shard_mb=0.001)  # tiny shards: one per line or so
    assert len(shards) > 1
    packed = read_packed_lines(str(tmp_path / "packed" / "*.parquet"))
    originals = read_manifest(manifest)
    assert [r["text"] for r in packed] == TEXTS
    for rec, orig in zip(packed, originals, strict=True):
        expected = cv2.cvtColor(cv2.imread(orig["image"]), cv2.COLOR_BGR2RGB)
        assert np.array_equal(decode_image(rec["image_bytes"], rec["image"]), expected)
        assert (rec["width"], rec["height"]) == (orig["width"], orig["height"])


def test_pack_can_shrink_lines_to_a_height_and_sample(tmp_path):
    manifest = write_manifest(tmp_path / "lines", TEXTS)
    pack(manifest, tmp_path / "packed", line_height=12, limit=4, codec=".webp")
    packed = read_packed_lines(str(tmp_path / "packed" / "*.parquet"))
    assert len(packed) == 4 and all(r["height"] == 12 for r in packed)
    assert all(decode_image(r["image_bytes"], "x").shape[0] == 12 for r in packed)


def test_packed_pages_keep_boxes_scaled_with_the_image(tmp_path):
    img = np.full((200, 400, 3), 255, np.uint8)
    cv2.imwrite(str(tmp_path / "p.jpg"), img)
    coco = {
        "images": [{"id": 1, "file_name": "p.jpg", "width": 400, "height": 200}],
        "annotations": [{"id": 1, "image_id": 1, "bbox": [40, 20, 100, 10], "area": 1000, "text": "a"}],
        "categories": [{"id": 1, "name": "text_line"}],
    }
    (tmp_path / "coco.json").write_text(json.dumps(coco))
    pack(tmp_path / "coco.json", tmp_path / "packed", page_side=200)
    (page,) = read_packed_pages(str(tmp_path / "packed" / "*.parquet"))
    assert (page["width"], page["height"]) == (200, 100)
    assert page["annotations"][0]["bbox"] == [20, 10, 50, 5]
    assert decode_image(page["image"], "p").shape == (100, 200, 3)


def test_packed_shards_load_in_hugging_face_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    pack(write_manifest(tmp_path / "lines", TEXTS), tmp_path / "packed")
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "packed" / "*.parquet"), split="train")
    assert ds["text"] == TEXTS


def test_mixture_follows_the_weights_and_repeats_small_sources():
    big, small = list(range(1000)), list(range(1000, 1010))
    mixed = mixture([(big, 0.5), (small, 0.5)], total=200, seed=1)
    assert len(mixed) == 200 and sum(x >= 1000 for x in mixed) == 100
    assert Counter(x for x in mixed if x >= 1000) == Counter({x: 10 for x in small})
    assert mixture([(big, 1), (small, 1)], total=200, seed=1) == mixed  # seeded
    ds = MixtureDataset([(big, 3.0), (small, 1.0)], total=40)
    assert len(ds) == 40 and sum(ds[i] >= 1000 for i in range(40)) == 10
    with pytest.raises(ConfigError, match="weight"):
        parse_sources([{"path": "a", "weight": -1}], "data.train")


def test_recognizer_reads_a_weighted_mixture_of_manifests_and_shards(tmp_path):
    a = write_manifest(tmp_path / "a", ["A"] * 4)
    b = write_manifest(tmp_path / "b", ["B"] * 8)
    pack(b, tmp_path / "b_packed")
    spec = [{"path": str(a), "weight": 3}, {"path": str(tmp_path / "b_packed" / "*.parquet"), "weight": 1}]
    records = read_line_sources(spec, total=40)
    assert Counter(r["text"] for r in records) == {"A": 30, "B": 10}
    config = load_config(RecognizerConfig, None, [f"data.train={json.dumps(spec)}"])
    assert config.data.train == spec


def test_case_free_rows_score_either_case_and_other_rows_are_untouched():
    tok = build_tokenizer()
    vocab = len(tok)
    partners = case_partners(tok, vocab)
    a, upper_a = tok.convert_tokens_to_ids(["a", "A"])
    digit = tok.convert_tokens_to_ids("7")
    assert partners[a] == upper_a and partners[upper_a] == a and partners[digit] == digit
    log_probs = torch.log_softmax(torch.randn(2, 3, vocab), -1)
    folded = fold_cases(log_probs, partners, torch.tensor([True, False]))
    expected = torch.logaddexp(log_probs[0, :, a], log_probs[0, :, upper_a])
    torch.testing.assert_close(folded[0, :, a], expected)
    torch.testing.assert_close(folded[0, :, upper_a], expected)
    torch.testing.assert_close(folded[0, :, digit], log_probs[0, :, digit])
    torch.testing.assert_close(folded[1], log_probs[1])


def test_case_free_training_loss_scores_each_cased_target_as_either_case(tiny_recognizer_dir):
    from transformers.models.vision_encoder_decoder.modeling_vision_encoder_decoder import shift_tokens_right

    from ocrkit.recognition.collate import pad_labels
    from ocrkit.recognition.task import RecognitionTask

    overrides = [f"model.pretrained={tiny_recognizer_dir}", "model.size=tiny", "data.longest=128"]
    task = RecognitionTask(load_config(RecognizerConfig, None, [*overrides, "model.ctc_weight=0"]))
    model = task.build_model().eval()
    pixels = torch.rand(1, 3, 32, 128)
    labels = pad_labels([task.tokenizer("TOTAL 7", add_special_tokens=False)["input_ids"] + [2]])

    def loss(case_free: bool) -> float:
        batch = {"pixel_values": pixels, "labels": labels, "case_free": torch.tensor([case_free])}
        with torch.no_grad():
            return float(task.loss(model, batch))

    cfg = model.config
    with torch.no_grad():
        inputs = shift_tokens_right(labels, cfg.pad_token_id, cfg.decoder_start_token_id)
        logits = model(pixel_values=pixels, decoder_input_ids=inputs, interpolate_pos_encoding=True).logits
    lp = torch.log_softmax(logits.float(), -1)[0]
    lower = task.tokenizer("total 7", add_special_tokens=False)["input_ids"] + [2]
    either = [
        torch.logaddexp(lp[i, u], lp[i, w]) if u != w else lp[i, u]
        for i, (u, w) in enumerate(zip(labels[0].tolist(), lower, strict=True))
    ]
    assert loss(True) == pytest.approx(-float(sum(either)), rel=1e-5)
    assert loss(False) == pytest.approx(-float(lp[torch.arange(len(lower)), labels[0]].sum()), rel=1e-5)
    assert loss(True) < loss(False)
    with_ctc = RecognitionTask(load_config(RecognizerConfig, None, [*overrides, "model.ctc_weight=0.5"]))
    ctc_model = with_ctc.build_model().eval()
    batch = {"pixel_values": pixels, "labels": labels}
    with torch.no_grad():
        free = float(with_ctc.loss(ctc_model, {**batch, "case_free": torch.tensor([True])}))
        strict = float(with_ctc.loss(ctc_model, {**batch, "case_free": torch.tensor([False])}))
    assert free < strict  # the CTC term folds cases too


def test_time_budget_stops_validated_and_checkpointed_and_resume_finishes_exactly(tmp_path):
    full = Trainer(ToyTask(), toy_settings(tmp_path / "full")).fit()
    task = ToyTask()
    cut = Trainer(task, toy_settings(tmp_path / "cut", max_minutes=1e-9)).fit()
    assert cut.step == 1 and task.evaluated == 1
    assert latest_checkpoint(tmp_path / "cut" / "checkpoints").name == "step-0000001"
    resumed = Trainer(ToyTask(), toy_settings(tmp_path / "cut"), resume=True).fit()
    assert resumed.step == full.step == 12
    from safetensors.torch import load_file

    a = load_file(str(tmp_path / "full" / "model" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "model" / "model.safetensors"))
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-7)


def test_device_choice():
    assert choose_device("auto", True) == "cuda" and choose_device("auto", False) == "cpu"
    assert choose_device("cpu", True) == "cpu" and choose_device("cuda", True) == "cuda"
    with pytest.raises(OcrkitError, match="no CUDA device"):
        choose_device("cuda", False)
    with pytest.raises(OcrkitError, match="expected auto, cpu or cuda"):
        choose_device("tpu", True)


def test_gpu_burst_dry_run_trains_and_returns_small_fp16_files(tmp_path, tiny_recognizer_dir):
    manifest = write_manifest(tmp_path / "lines", TEXTS, sizes=True)
    pack(manifest, tmp_path / "packed")
    cmd = [
        sys.executable,
        str(REPO / "tools" / "gpu_burst.py"),
        "--dry-run",
        "--out",
        str(tmp_path / "out"),
        "--set",
        f"model.pretrained={tiny_recognizer_dir}",
        "--set",
        "model.size=tiny",
        "--set",
        f"data.train={json.dumps([{'path': str(tmp_path / 'packed' / '*.parquet'), 'weight': 1}])}",
        "--set",
        f"data.val={manifest}",
        "--set",
        "data.longest=128",
        "--set",
        f"train.out_dir={tmp_path / 'run'}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["steps"] == 2 and summary["best_value"] is not None
    from safetensors.torch import load_file

    weights = load_file(str(tmp_path / "out" / "model.safetensors"))
    assert {v.dtype for v in weights.values() if v.is_floating_point()} == {torch.float16}
    assert read_spec(tmp_path / "out", "recognizer").preprocess.longest > 0
    assert (tmp_path / "out" / "metrics.jsonl").is_file()


def test_detector_trains_on_packed_pages_identical_to_the_coco_folder(tmp_path):
    from ocrkit.data.coco_dataset import CocoDetectionDataset
    from tools.train_detector import main

    coco = make_coco(tmp_path / "pages", 3)
    pack(coco, tmp_path / "packed")
    shards = str(tmp_path / "packed" / "*.parquet")
    folder, packed = (CocoDetectionDataset(x, longest=96, augment=None) for x in (coco, shards))
    assert len(folder) == len(packed) == 3
    for i in range(3):
        np.testing.assert_array_equal(folder[i]["pixels"], packed[i]["pixels"])
        np.testing.assert_array_equal(folder[i]["boxes"], packed[i]["boxes"])
    sets = [f"data.train={shards}", f"data.val={coco}", f"train.out_dir={tmp_path / 'run'}", "train.steps=2"]
    argv = ["-c", str(REPO / "configs/detector/tiny.yaml")] + [x for s in sets for x in ("--set", s)]
    assert main(argv) == 0 and (tmp_path / "run" / "model" / "model.safetensors").is_file()
