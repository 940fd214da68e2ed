"""Manifest dataset, collate, bucketing, token-normalised accumulation, and a 2-step training run."""

import json

import numpy as np
import pytest
import torch
from fixtures import REPO, write_manifest

from ocrkit.cli import main as cli_main
from ocrkit.data.lines_dataset import scan_augment
from ocrkit.data.manifest import read_manifest
from ocrkit.data.sampler import AspectRatioBatchSampler, padding_fraction, random_batches
from ocrkit.engine.trainer import accumulate
from ocrkit.hub.model_folder import read_spec
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.recognition.collate import IGNORE
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.task import RecognitionTask
from ocrkit.util.config import ConfigError, from_dict, load_config
from ocrkit.util.errors import InputError

TEXTS = ["Total 12.50", "Grüße", "a longer line of receipt text 3x 4,99", "ID", "Brot 1,20 €", "x y z"]


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    return write_manifest(tmp_path_factory.mktemp("lines"), TEXTS)


def tiny_config(manifest, out_dir, **train):
    overrides = [f"data.train={manifest}", f"data.val={manifest}", f"train.out_dir={out_dir}"]
    overrides += [f"train.{k}={v}" for k, v in train.items()]
    return load_config(RecognizerConfig, "configs/recognizer/tiny.yaml", overrides)


def test_manifest_paths_and_errors(manifest, tmp_path):
    recs = read_manifest(manifest)
    assert recs[0]["image_ref"] == "images/000.png"
    assert recs[0]["image"] == str(manifest.parent / "images/000.png")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"image": "a.png", "text": "x"}\nnot json\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2"):
        read_manifest(bad)
    with pytest.raises(InputError, match="not found"):
        read_manifest(tmp_path / "missing.jsonl")


def test_dataset_items_and_collate(manifest, tmp_path):
    task = RecognitionTask(tiny_config(manifest, tmp_path))
    data = task.train_dataset()
    item = data[2]  # the crop and its text as they are: the task's collator letterboxes and tokenizes
    assert item["image"].dtype == np.uint8 and item["image"].shape[:2] == data.image_sizes()[2]
    assert item["text"] == TEXTS[2] and item["case_sensitive"] is True
    shapes = task.padded_shapes(data)
    assert [task.preprocess.apply(data[i]["image"]).shape[:2] for i in range(len(data))] == shapes
    assert all(h % 16 == 0 for h, _ in shapes) and shapes[2][1] == 128
    alone = task.collate([item])["labels"][0]
    assert alone[-1] == task.tokenizer.eos_token_id and len(alone) == len(TEXTS[2]) + 1
    batch = task.collate([data[0], data[2], data[3]])
    assert batch["pixel_values"].shape == (3, 3, max(shapes[i][0] for i in (0, 2, 3)), 128)
    assert batch["pixel_values"].min() >= -1.0 and batch["pixel_values"].max() <= 1.0
    assert batch["labels"].shape == (3, len(TEXTS[2]) + 1) and (batch["labels"][1] != IGNORE).all()
    assert task.units(batch) == sum(len(TEXTS[i]) + 1 for i in (0, 2, 3))
    # batch padding uses the letterbox pad value (normalised 0 → -1)
    assert (batch["pixel_values"][0, :, shapes[0][0] :, :] == -1.0).all()


def test_max_chars_skips_long_lines_instead_of_truncating(manifest, tmp_path):
    cfg = tiny_config(manifest, tmp_path)
    cfg.data.max_chars = 11
    data = RecognitionTask(cfg).train_dataset()
    assert sorted(r["text"] for r in data.records) == sorted(t for t in TEXTS if len(t) <= 11)
    cfg.data.max_chars = 1
    with pytest.raises(InputError, match="max_chars"):
        RecognitionTask(cfg).train_dataset()


def test_val_limit_samples_the_whole_manifest_reproducibly(tmp_path):
    texts = [f"line {i}" for i in range(40)]
    path = write_manifest(tmp_path, texts)
    cfg = tiny_config(path, tmp_path)
    cfg.data.val_limit = 8
    picked = [r["text"] for r in RecognitionTask(cfg).val_dataset().records]
    assert len(picked) == 8 and len(set(picked)) == 8
    assert picked != texts[:8] and max(texts.index(t) for t in picked) >= 20  # not the first lines
    assert picked == sorted(picked, key=texts.index)  # manifest order kept
    assert picked == [r["text"] for r in RecognitionTask(cfg).val_dataset().records]  # same sample each time
    cfg.data.val_limit = 0
    assert len(RecognitionTask(cfg).val_dataset()) == 40


def test_bucketing_reduces_padding_and_is_deterministic():
    rng = np.random.default_rng(0)
    pre = LinePreprocess(longest=512, max_height=64)
    # synthetic mix: 1-70 characters at ~0.55 x height per character, heights 20-60 px
    sizes = [
        (int(h), max(8, int(h * 0.55 * n)))
        for h, n in zip(rng.integers(20, 60, 2000), rng.integers(1, 70, 2000), strict=True)
    ]
    shapes = [pre.padded_shape(h, w) for h, w in sizes]
    before = padding_fraction(shapes, random_batches(len(shapes), 16, seed=0))
    sampler = AspectRatioBatchSampler(shapes, 16, seed=3)
    after = padding_fraction(shapes, sampler.batches())
    assert before > 0.3 and after < 0.05 and after < before / 5
    assert sampler.batches() == AspectRatioBatchSampler(shapes, 16, seed=3).batches()
    assert sampler.batches() != AspectRatioBatchSampler(shapes, 16, seed=4).batches()
    flat = sorted(i for b in sampler for i in b)
    assert flat == list(range(len(shapes))) and len(sampler) == 125


def test_token_normalised_accumulation_equals_one_big_batch(manifest, tmp_path):
    task = RecognitionTask(tiny_config(manifest, tmp_path))
    torch.manual_seed(0)
    model = task.build_model()
    model.decoder.config.dropout = 0.0
    model.eval()  # no dropout: the two paths must see identical forwards
    data = task.train_dataset()
    items = [data[i] for i in range(len(data))]
    micro = [task.collate(items[:1]), task.collate(items[1:3]), task.collate(items[3:])]  # 3..38 tokens
    accumulate(model, task, micro)
    grads_acc = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    big = task.collate(items)
    (task.loss(model, big) / task.units(big)).backward()
    assert grads_acc
    for name, p in model.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(grads_acc[name], p.grad, rtol=1e-4, atol=1e-6, msg=name)


def test_param_groups_cover_trainable_params_once(manifest, tmp_path):
    task = RecognitionTask(tiny_config(manifest, tmp_path, backbone_lr_mult=0.5))
    model = task.build_model()
    groups = task.param_groups(model, 1e-3, 0.05)
    ids = [id(p) for g in groups for p in g["params"]]
    assert len(ids) == len(set(ids)) == len({id(p) for p in model.parameters() if p.requires_grad})
    lrs = {(g["lr"], g["weight_decay"]) for g in groups}
    assert {lr for lr, _ in lrs} == {1e-3, 5e-4} and {wd for _, wd in lrs} == {0.0, 0.05}


def test_train_script_two_steps(manifest, tmp_path):
    out = tmp_path / "run"
    rc = cli_main(
        [
            "train",
            "recognizer",
            "-c",
            "configs/recognizer/tiny.yaml",
            "--set",
            f"data.train={manifest}",
            "--set",
            f"data.val={manifest}",
            "--set",
            f"train.out_dir={out}",
        ]
    )
    assert rc == 0
    evals = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines() if "eval" in x]
    assert evals and 0.0 <= evals[-1]["eval"]["cer"]
    assert read_spec(out / "model", "recognizer").preprocess.longest == 128
    assert (
        cli_main(["train", "recognizer", "-c", "configs/recognizer/tiny.yaml", "--set", "model.nope=1"]) == 2
    )


def test_auxiliary_ctc_loss_trains_the_encoder_and_stays_out_of_the_hf_weights(manifest, tmp_path):
    from safetensors.torch import load_file

    cfg = tiny_config(manifest, tmp_path / "ctc")
    cfg.model.ctc_weight = 0.5
    task = RecognitionTask(cfg)
    torch.manual_seed(0)
    model = task.build_model()
    data = task.train_dataset()
    batch = task.collate([data[i] for i in range(3)])
    with_ctc = task.loss(model, batch)
    with_ctc.backward()
    assert torch.isfinite(with_ctc) and model.ctc_head.weight.grad.abs().sum() > 0
    assert model.encoder.embeddings.patch_embeddings.projection.weight.grad.abs().sum() > 0
    parts = task.pop_loss_parts()  # per-token terms for metrics.jsonl, reset after each read
    units = task.units(batch)
    assert parts["ce_per_token"] + 0.5 * parts["ctc_per_token"] == pytest.approx(
        float(with_ctc.detach()) / units
    )
    assert task.pop_loss_parts() == {}
    cfg.model.ctc_weight = 0.0
    assert float(task.loss(model, batch).detach()) < float(with_ctc.detach())  # the CTC term really is added
    task.save_pretrained(model, tmp_path / "saved")
    assert not [
        k for k in load_file(str(tmp_path / "saved" / "model.safetensors")) if k.startswith("ctc_head")
    ]


def test_blank_crops_train_to_read_nothing(tmp_path):
    # synthetic blank crops have text "": the decoder target is </s> alone, the CTC target empty
    blank_manifest = write_manifest(tmp_path / "lines", ["", "Total 12.50"])
    cfg = tiny_config(blank_manifest, tmp_path / "run")
    cfg.model.ctc_weight = 0.5
    task = RecognitionTask(cfg)
    data = task.train_dataset()
    assert task.collate([data[0]])["labels"][0].tolist() == [task.tokenizer.eos_token_id]
    torch.manual_seed(0)
    model = task.build_model()
    loss = task.loss(model, task.collate([data[0], data[1]]))
    loss.backward()
    assert torch.isfinite(loss) and float(loss.detach()) > 0
    assert model.ctc_head.weight.grad.abs().sum() > 0
    parts = task.pop_loss_parts()
    assert np.isfinite(parts["ctc_per_token"]) and task.units(task.collate([data[0]])) == 1


def test_scan_augment_stretches_width_keeps_height_and_validates_share():
    line = np.full((30, 200, 3), 255, np.uint8)
    line[8:22, 10:190:12] = 0  # a row of glyph-like bars
    aug = scan_augment(1.0)
    aug.set_random_seed(0)
    widths = []
    for _ in range(40):
        out = aug(image=line)["image"]
        assert abs(out.shape[0] - 30) <= 1 and out.dtype == np.uint8  # fit_output may round up a row
        widths.append(out.shape[1])
    assert min(widths) <= 180 and max(widths) >= 220  # narrower and wider faces than rendered
    assert np.array_equal(scan_augment(0.0)(image=line)["image"], line)
    with pytest.raises(ConfigError, match="data.scan_augment"):
        from_dict(RecognizerConfig, {"data": {"scan_augment": 1.5}})


def test_decoder_gate_needs_a_ctc_head_and_a_probability():
    config = from_dict(RecognizerConfig, {"model": {"ctc_weight": 0.5, "decoder_gate": 0.7}})
    assert config.model.decoder_gate == 0.7
    for model in (
        {"ctc_weight": 0.5, "decoder_gate": 0.0},
        {"ctc_weight": 0.5, "decoder_gate": 1.5},
        {"decoder_gate": 0.7},
    ):
        with pytest.raises(ConfigError, match="model.decoder_gate"):
            from_dict(RecognizerConfig, {"model": model})


def test_decoder_max_chars_needs_a_ctc_head_and_a_positive_count():
    config = from_dict(RecognizerConfig, {"model": {"ctc_weight": 0.5, "decoder_max_chars": 80}})
    assert config.model.decoder_max_chars == 80
    for model in ({"ctc_weight": 0.5, "decoder_max_chars": 0}, {"decoder_max_chars": 80}):
        with pytest.raises(ConfigError, match="model.decoder_max_chars"):
            from_dict(RecognizerConfig, {"model": model})


@pytest.mark.parametrize("path", sorted((REPO / "configs/recognizer").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_recognizer_config_loads(path):
    """A shipped recipe that no longer parses (a renamed key, a broken include) fails here, not after a
    user has set up a training machine."""
    cfg = load_config(RecognizerConfig, path)
    assert cfg.data.longest % 16 == 0
    if cfg.model.decoding != "attention":
        assert cfg.model.ctc_weight > 0


def test_extra_characters_grow_a_trained_model_that_still_reads_as_before(manifest, tmp_path, capsys):
    from ocrkit.recognition.tokenizer import with_characters

    cfg = tiny_config(manifest, tmp_path / "base")
    cfg.model.ctc_weight, cfg.model.ctc_frames_per_patch = 0.5, 2
    task = RecognitionTask(cfg)
    torch.manual_seed(0)
    base = task.build_model().eval()
    task.save_pretrained(base, tmp_path / "saved")
    old_vocab = task.tokenizer.get_vocab()

    grown_cfg = tiny_config(
        write_manifest(tmp_path / "lines", ["Ka\u2e17", "Aufkla\u0364rung"]), tmp_path / "g"
    )
    grown_cfg.model.ctc_weight, grown_cfg.model.ctc_frames_per_patch = 0.5, 2
    grown_cfg.model.pretrained, grown_cfg.model.extra_chars = str(tmp_path / "saved"), "\u0364"
    grown_task = RecognitionTask(grown_cfg)
    grown = grown_task.build_model().eval()
    vocab = grown_task.tokenizer.get_vocab()
    assert all(vocab[tok] == i for tok, i in old_vocab.items())
    assert vocab["\u0364"] == len(old_vocab) and grown.decoder.config.vocab_size == 352
    assert (
        grown.ctc_head.weight.shape[0] == 2 * 352
        and with_characters(grown_task.tokenizer, "a") is grown_task.tokenizer
    )

    batch = grown_task.collate([grown_task.train_dataset()[0]])
    log = capsys.readouterr().out
    assert "in 1 training lines: U+2E17 '⸗' 1;" in log and "U+0364" not in log
    ids = batch["labels"].clamp(min=0)
    with torch.no_grad():
        before = base(
            pixel_values=batch["pixel_values"], decoder_input_ids=ids, interpolate_pos_encoding=True
        )
        after = grown(
            pixel_values=batch["pixel_values"], decoder_input_ids=ids, interpolate_pos_encoding=True
        )
        states = base.encoder(
            pixel_values=batch["pixel_values"], interpolate_pos_encoding=True
        ).last_hidden_state
        ctc_before = base.ctc_head(states)
        ctc_after = grown.ctc_head(states)
    old = len(old_vocab)
    assert torch.allclose(before.logits[..., :old], after.logits[..., :old], atol=1e-5)
    assert torch.allclose(ctc_before[..., :old], ctc_after[..., :old], atol=1e-5)
    lowest = base.ctc_head.bias.min()  # a new label starts as unlikely as the rarest old one
    assert torch.allclose(ctc_after[..., old:], lowest.expand_as(ctc_after[..., old:]), atol=1e-6)
    grown_task.save_pretrained(grown, tmp_path / "grown")
    from ocrkit.recognition import load_recognizer

    reader = load_recognizer(tmp_path / "grown", decoding="ctc")
    assert (
        reader.tokenizer.get_vocab()["\u0364"] == old
        and len(reader.recognize([np.zeros((32, 64), np.uint8)])) == 1
    )
