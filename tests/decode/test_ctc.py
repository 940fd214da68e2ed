"""CTC and joint decoding: best path, frame order, head save/load, config checks, torch = ONNX parity."""

import shutil
from dataclasses import replace

import numpy as np
import pytest
import torch
from fixtures import render_line, write_manifest
from safetensors.torch import load_file, save_file

from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.ctc import best_path, patch_columns
from ocrkit.decode.joint import per_line, row_logprobs, teacher_forcing_batch
from ocrkit.decode.read import read, read_crops
from ocrkit.decode.routing import weakest_frame
from ocrkit.export.recognizer import export_recognizer
from ocrkit.hub.model_folder import CTC_HEAD_FILE as HEAD_FILE
from ocrkit.hub.model_folder import read_spec, write_spec
from ocrkit.recognition import load_recognizer
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.ctc import restore_head
from ocrkit.recognition.task import RecognitionTask
from ocrkit.recognition.torch_backend import TorchBackend
from ocrkit.runtime import OnnxRecognizer
from ocrkit.util.config import ConfigError, load_config
from ocrkit.util.errors import ModelError

BLANK = 0


def one_hot_logits(frames: list[int], vocab: int = 6, peak: float = 20.0) -> np.ndarray:
    logits = np.zeros((1, len(frames), vocab))
    logits[0, np.arange(len(frames)), frames] = peak
    return logits


def test_best_path_merges_repeats_and_drops_blanks():
    # "a a _ a b b _ _ b" → a, a, b, b : a blank separates a real double letter
    ((ids, conf),) = best_path(one_hot_logits([1, 1, 0, 1, 2, 2, 0, 0, 2]), BLANK)
    assert ids == [1, 1, 2, 2]
    assert conf == pytest.approx(1.0, abs=1e-6)
    ((ids, soft),) = best_path(one_hot_logits([1, 1, 0, 1, 2, 2, 0, 0, 2], peak=1.0), BLANK)
    assert ids == [1, 1, 2, 2] and 0.0 < soft < 0.5  # flat frames → low confidence
    ((ids, _),) = best_path(one_hot_logits([0, 0, 0]), BLANK)
    assert ids == []


def test_patch_columns_read_column_by_column_after_the_cls_token():
    h, w = 2, 3
    grid = np.arange(h * w, dtype=np.float32).reshape(1, h * w, 1)  # row-major patch index
    states = np.concatenate([np.full((1, 1, 1), -1.0, np.float32), grid], axis=1)
    frames = patch_columns(states, h, w)[0, :, 0]
    assert frames.tolist() == [0, 3, 1, 4, 2, 5]  # (r0,c0) (r1,c0) (r0,c1) (r1,c1) ...


def tiny_config(manifest, out_dir, **model):
    overrides = [f"data.train={manifest}", f"data.val={manifest}", f"train.out_dir={out_dir}"]
    overrides += [f"model.{k}={v}" for k, v in model.items()]
    return load_config(RecognizerConfig, "configs/recognizer/tiny.yaml", overrides)


def test_config_rejects_unknown_decoding_and_ctc_without_head(tmp_path):
    with pytest.raises(ConfigError, match="model.decoding"):
        tiny_config("x.jsonl", tmp_path, decoding="beam")
    with pytest.raises(ConfigError, match="ctc_weight"):
        tiny_config("x.jsonl", tmp_path, decoding="ctc", ctc_weight=0)
    with pytest.raises(ConfigError, match="ctc_weight"):
        tiny_config("x.jsonl", tmp_path, decoding="joint", ctc_weight=0)
    with pytest.raises(ConfigError, match="joint_ctc_weight"):
        tiny_config("x.jsonl", tmp_path, decoding="joint", ctc_weight=0.5, joint_ctc_weight=1.5)
    with pytest.raises(ConfigError, match="joint_gate"):
        tiny_config("x.jsonl", tmp_path, decoding="joint", ctc_weight=0.5, joint_gate=0)


@pytest.fixture(scope="module")
def ctc_model_dir(tmp_path_factory):
    """A tiny model trained-from-nothing with a CTC head, saved by the task as a user's run would."""
    folder = tmp_path_factory.mktemp("ctc")
    manifest = write_manifest(folder / "lines", ["Total 12.50", "Brot 1,20", "x y z", "ID 42"])
    task = RecognitionTask(tiny_config(manifest, folder / "run", ctc_weight=0.5, decoding="ctc"))
    torch.manual_seed(3)
    model = task.build_model().eval()
    with torch.no_grad():  # a random head mostly emits blank; make it emit characters
        model.ctc_head.weight.normal_(0, 1.0)
        model.ctc_head.bias[model.config.pad_token_id] = -2.0
    task.save_pretrained(model, folder / "model")
    return task, model, folder / "model", manifest


def test_head_saved_beside_the_hf_weights_and_evaluated(ctc_model_dir):
    task, model, folder, _ = ctc_model_dir
    assert read_spec(folder, "recognizer").decoding == "ctc"
    assert not [k for k in load_file(str(folder / "model.safetensors")) if k.startswith("ctc_head")]
    torch.testing.assert_close(load_file(str(folder / HEAD_FILE))["weight"], model.ctc_head.weight)
    metrics = task.evaluate(model)
    assert metrics["cer"] == metrics["cer_ctc"] and {"cer_attention", "cer_joint"} <= set(metrics)
    spec = read_spec(folder, "recognizer")
    assert spec.joint_ctc_weight == 0.5 and spec.joint_gate is None


def test_continuing_from_a_saved_folder_keeps_its_trained_head(ctc_model_dir, tmp_path):
    _, model, folder, manifest = ctc_model_dir
    config = tiny_config(manifest, tmp_path / "run", ctc_weight=0.5, decoding="ctc", pretrained=folder)
    torch.manual_seed(11)  # a different seed: a fresh random head would differ from the saved one
    resumed = RecognitionTask(config).build_model()
    torch.testing.assert_close(resumed.ctc_head.weight, model.ctc_head.weight)
    torch.testing.assert_close(resumed.ctc_head.bias, model.ctc_head.bias)


def test_restoring_a_head_of_another_vocabulary_names_the_folder(ctc_model_dir, tmp_path):
    _, model, folder, _ = ctc_model_dir
    wrong = tmp_path / "other_vocab"
    wrong.mkdir()
    head = model.ctc_head
    save_file(
        {"weight": head.weight[:8].detach().contiguous(), "bias": head.bias[:8].detach()},
        str(wrong / HEAD_FILE),
    )
    with pytest.raises(ModelError, match="other_vocab.*CTC head shape"):
        restore_head(model, wrong)


def test_ctc_decoding_matches_an_independent_torch_best_path(ctc_model_dir):
    task, model, folder, _ = ctc_model_dir
    crops = [render_line("Total 12.50"), render_line("a much longer receipt line"), render_line("x")]
    rec = load_recognizer(folder)
    got = rec.recognize(crops, batch_size=1)
    assert sum(len(t) for t, _ in got) > 5
    for crop, (text, conf) in zip(crops, got, strict=True):
        torch.set_grad_enabled(False)
        pixels = torch.from_numpy(task.preprocess.batch([task.preprocess.apply(crop)]))
        states = model.encoder(pixel_values=pixels, interpolate_pos_encoding=True).last_hidden_state
        h, w = pixels.shape[2] // 16, pixels.shape[3] // 16
        cols = states[0, 1:].reshape(h, w, -1).transpose(0, 1).reshape(h * w, -1)
        logp = model.ctc_head(cols).log_softmax(-1)
        path = logp.argmax(-1)
        ids = [
            int(t)
            for k, t in enumerate(path)
            if t != model.config.pad_token_id and (k == 0 or t != path[k - 1])
        ]
        assert text == task.tokenizer.decode(
            ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
        )
        assert conf == pytest.approx(float(logp.max(-1).values.mean().exp()), rel=1e-4)
        torch.set_grad_enabled(True)
    # the folder's choice can be overridden; the head stays loaded for lines wider than `longest`
    attention = load_recognizer(folder, decoding="attention")
    assert attention.settings.decoding == "attention" and attention.ctc_head is not None


def test_ctc_decoding_errors(ctc_model_dir, tmp_path):
    _, _, folder, _ = ctc_model_dir
    broken = tmp_path / "no_head"
    shutil.copytree(folder, broken)
    (broken / HEAD_FILE).unlink()
    with pytest.raises(ModelError, match=HEAD_FILE):
        load_recognizer(broken)
    reader = load_recognizer(broken, decoding="attention")  # no head: wide lines are shrunk instead
    assert reader.ctc_head is None and reader.recognize([render_line("ok")])
    (broken / HEAD_FILE).write_bytes(b"truncated")
    with pytest.raises(ModelError, match="unreadable CTC head"):
        load_recognizer(broken)
    with pytest.raises(ModelError, match="unknown decoding"):
        load_recognizer(folder, decoding="beam")


def test_onnx_ctc_decoding_matches_torch(ctc_model_dir, tmp_path):
    _, _, folder, _ = ctc_model_dir
    shipped = tmp_path / "fp16"  # the shipped head is fp16: both backends must upcast the same way
    shutil.copytree(folder, shipped)
    head = load_file(str(folder / HEAD_FILE))
    save_file({k: v.half() for k, v in head.items()}, str(shipped / HEAD_FILE))
    export_recognizer(shipped, tmp_path / "onnx")
    rng = np.random.default_rng(4)
    crops = [render_line(t) for t in ["Total 12.50", "Brot", "x y z 42"]]
    crops += [(rng.random(s) * 255).astype(np.uint8) for s in [(30, 300), (40, 100), (64, 64)]]
    ours = load_recognizer(shipped).recognize(crops, batch_size=2)
    theirs = OnnxRecognizer(tmp_path / "onnx", threads=1).recognize(crops, batch_size=2)
    assert sum(len(t) for t, _ in ours) > 10
    for (tt, ts), (ot, os_) in zip(ours, theirs, strict=True):
        assert tt == ot
        assert abs(ts - os_) < 1e-4


@pytest.mark.slow
def test_pipeline_reads_with_the_folders_decoding_or_the_override(ctc_model_dir, tiny_detector_dir, tmp_path):
    from ocrkit.export.detector import export_detector
    from ocrkit.pipeline import OCR

    _, _, folder, _ = ctc_model_dir
    export_detector(tiny_detector_dir, tmp_path / "det")
    export_recognizer(folder, tmp_path / "rec")
    page = (np.random.default_rng(5).random((200, 300, 3)) * 255).astype(np.uint8)
    torch_ctc = OCR(tiny_detector_dir, folder, threads=1)
    onnx_ctc = OCR(tmp_path / "det", tmp_path / "rec", backend="onnx", threads=1)
    assert torch_ctc.recognizer.ctc_head is not None and onnx_ctc.recognizer.ctc_head is not None
    for reader in (
        OCR(tiny_detector_dir, folder, decoding="attention").recognizer,
        OCR(tmp_path / "det", tmp_path / "rec", backend="onnx", decoding="attention").recognizer,
    ):
        assert reader.settings.decoding == "attention" and reader.ctc_head is not None  # kept for wide lines
    ours, theirs = torch_ctc.read(page), onnx_ctc.read(page)
    assert ours.lines and [ln.text for ln in ours.lines] == [ln.text for ln in theirs.lines]


def test_joint_decoding_picks_from_both_readings_with_the_decoders_own_scores(ctc_model_dir, tmp_path):
    task, model, folder, _ = ctc_model_dir
    crops = [render_line("Total 12.50"), render_line("x y z 42"), render_line("Brot")]
    ctc = load_recognizer(folder, decoding="ctc").recognize(crops)
    attention = load_recognizer(folder, decoding="attention").recognize(crops)
    two_only = shutil.copytree(folder, tmp_path / "two_candidates")  # no CTC second choices
    write_spec(two_only, replace(read_spec(two_only, "recognizer"), joint_alternatives=0))
    joint = load_recognizer(two_only, decoding="joint").recognize(crops)
    assert [t for t, _ in ctc] != [t for t, _ in attention]  # the untrained decoders disagree
    assert all(text in (c, a) for (text, _), (c, _), (a, _) in zip(joint, ctc, attention, strict=True))
    assert all(0.0 <= conf <= 1.0 for _, conf in joint)
    # teacher forcing the greedy reading reproduces greedy decoding's own log-probabilities
    pixels = torch.from_numpy(task.preprocess.batch([task.preprocess.apply(crops[0])]))
    backend = TorchBackend(model.eval())
    ((ids, conf),) = read(backend, pixels.numpy(), "attention")
    budget = greedy_token_budget(pixels.shape[-1], backend.patch, backend.max_positions)
    inputs, targets, mask, owners = teacher_forcing_batch(
        [[ids]], model.config.decoder_start_token_id, task.tokenizer.eos_token_id, 0, 1000
    )
    with torch.no_grad():
        logits = model(
            pixel_values=pixels, decoder_input_ids=torch.from_numpy(inputs), interpolate_pos_encoding=True
        ).logits
    mask[0, budget:] = False  # a reading that ran out of budget has no </s> to score
    (score,) = per_line(row_logprobs(logits.numpy(), targets, mask), owners, 1)[0]
    assert np.exp(score / mask.sum()) == pytest.approx(conf, rel=1e-4)


def test_onnx_joint_decoding_matches_torch(ctc_model_dir, tmp_path):
    _, _, folder, _ = ctc_model_dir
    export_recognizer(folder, tmp_path / "onnx")
    rng = np.random.default_rng(6)
    crops = [render_line(t) for t in ["Total 12.50", "Brot", "x y z 42", "ID 42"]]
    crops += [(rng.random(s) * 255).astype(np.uint8) for s in [(30, 300), (40, 100)]]
    ours = load_recognizer(folder, decoding="joint").recognize(crops, batch_size=2)
    theirs = OnnxRecognizer(tmp_path / "onnx", threads=1, decoding="joint").recognize(crops, batch_size=2)
    assert sum(len(t) for t, _ in ours) > 10
    for (tt, ts), (ot, os_) in zip(ours, theirs, strict=True):
        assert tt == ot
        assert abs(ts - os_) < 1e-4


def test_a_line_reads_the_same_alone_and_in_a_batch(ctc_model_dir):
    _, _, folder, _ = ctc_model_dir
    crops = [render_line(t) for t in ["Total 12.50", "a", "x y z 42", "a much longer receipt line", "ID 42"]]
    rec = load_recognizer(folder, decoding="ctc")
    assert rec.recognize(crops, batch_size=16) == rec.recognize(crops, batch_size=1)


def gated_copy(folder, out, gate):
    """The model folder with settings asking for joint decoding gated at `gate`."""
    shutil.copytree(folder, out)
    write_spec(out, replace(read_spec(out, "recognizer"), decoding="joint", joint_gate=gate))
    return out


def least_sure_frame(recognizer, crop: np.ndarray) -> float:
    """The probability of the best label at the least sure CTC frame of one crop (the gate's measure)."""
    preprocess = recognizer.settings.preprocess
    pixels = preprocess.batch([preprocess.apply(crop)])
    with torch.inference_mode():
        logits = recognizer.backend.ctc_logits(recognizer.backend.encode(pixels), pixels.shape[-2:])
    return float(weakest_frame(logits)[0])


def test_gated_joint_decoding_keeps_confident_ctc_readings_and_rescores_the_rest(ctc_model_dir, tmp_path):
    _, _, folder, _ = ctc_model_dir
    rng = np.random.default_rng(8)
    crops = [render_line(t) for t in ["Total 12.50", "Brot", "x y z 42", "ID 42", "a much longer line"]]
    crops += [(rng.random(s) * 255).astype(np.uint8) for s in [(30, 300), (40, 100)]]
    reader = load_recognizer(folder, decoding="ctc")
    ctc = reader.recognize(crops, batch_size=4)
    joint = load_recognizer(folder, decoding="joint").recognize(crops, batch_size=4)
    sureness = [least_sure_frame(reader, crop) for crop in crops]
    ranked = sorted(sureness)  # gate halfway between two lines: ONNX float noise stays on a side
    gate = (ranked[3] + ranked[4]) / 2
    gated_dir = gated_copy(folder, tmp_path / "gated", gate)
    gated = load_recognizer(gated_dir).recognize(crops, batch_size=4)
    confident = [sure >= gate for sure in sureness]
    assert 0 < sum(confident) < len(crops)
    for sure, g, c, j in zip(confident, gated, ctc, joint, strict=True):
        assert g == (c if sure else j)
    export_recognizer(gated_dir, tmp_path / "onnx")
    theirs = OnnxRecognizer(tmp_path / "onnx", threads=1).recognize(crops, batch_size=4)
    for (tt, ts), (ot, os_) in zip(gated, theirs, strict=True):
        assert tt == ot and abs(ts - os_) < 1e-4


def test_a_one_frame_head_grows_into_two_frames_per_patch_reading_the_same(ctc_model_dir, tmp_path):
    """Starting k = 2 from a saved k = 1 head: both frames copy it, so every line reads as before, from
    twice the frames; the grown folder saves and reloads with its own frame count."""
    task, model, folder, manifest = ctc_model_dir
    config = tiny_config(
        manifest, tmp_path / "run", ctc_weight=0.5, decoding="ctc", pretrained=folder, ctc_frames_per_patch=2
    )
    grown_task = RecognitionTask(config)
    grown = grown_task.build_model().eval()
    assert grown.ctc_head.weight.shape[0] == 2 * model.ctc_head.weight.shape[0]
    grown_task.save_pretrained(grown, tmp_path / "grown")
    assert read_spec(tmp_path / "grown", "recognizer").ctc_frames_per_patch == 2
    crops = [render_line(t) for t in ["Total 12.50", "Brot 1,20", "ID 42"]]
    before = load_recognizer(folder).recognize(crops)
    after = load_recognizer(tmp_path / "grown").recognize(crops)
    assert [t for t, _ in after] == [t for t, _ in before] and any(t for t, _ in before)
    pixels = task.collate([{"image": c, "text": ""} for c in crops[:1]])["pixel_values"]
    states = grown.encoder(pixel_values=pixels, interpolate_pos_encoding=True).last_hidden_state
    patches = (pixels.shape[-2] // 16) * (pixels.shape[-1] // 16)
    assert grown.ctc_head(states[:, 1:]).shape[1] == 2 * patches  # two frames for every patch


@pytest.mark.parametrize("decoding", ["ctc", "joint"])
def test_onnx_places_characters_where_torch_does(ctc_model_dir, tmp_path, decoding):
    """Positions come from the same CTC frames in both backends, whichever decoder chose the reading
    (a decoder's reading is forced onto the frames; this untrained decoder reads these lines as nothing,
    so joint decoding brings its readings in)."""
    _, _, folder, _ = ctc_model_dir
    export_recognizer(folder, tmp_path / "onnx")
    crops = [render_line(t) for t in ["Total 12.50", "Brot", "x y z 42"]]
    ours = load_recognizer(folder, decoding=decoding).read_placed(crops, batch_size=2)
    theirs = OnnxRecognizer(tmp_path / "onnx", threads=1, decoding=decoding).read_placed(crops, batch_size=2)
    placed = 0
    for a, b, crop in zip(ours, theirs, crops, strict=True):
        assert a.text == b.text and a.glyphs == b.glyphs
        if a.text:
            assert a.centres is not None and "".join(a.glyphs) == a.text
            np.testing.assert_allclose(a.centres, b.centres, atol=1e-3)
            assert all(0 <= x <= crop.shape[1] for x in a.centres) and a.centres == sorted(a.centres)
            placed += 1
    assert placed >= 2


def test_lines_whose_ctc_reading_holds_no_letter_keep_it_in_both_backends(ctc_model_dir, tmp_path):
    """`decoder_needs_letters`: both backends take the letter ids from the folder's vocabulary, and the
    decoder reads only the lines in which the CTC head reads one; the others keep the CTC reading (which
    the page filter then drops as not text). This untrained head reads letters everywhere, so the test
    narrows the letters to those of some lines' CTC readings to see both kinds of line."""
    _, _, folder, _ = ctc_model_dir
    crops = [render_line(t) for t in ["Total 12.50", "Brot", "ID 42", "x y z 42", "a much longer line"]]
    ctc = load_recognizer(folder, decoding="ctc")
    with torch.inference_mode():
        ctc_ids = [ids for ids, _ in read_crops(ctc.backend, ctc.settings, crops, 2)]
    ctc_texts = [t for t, _ in ctc.recognize(crops, batch_size=2)]
    attention = load_recognizer(folder, decoding="attention").recognize(crops, batch_size=2)
    needs = tmp_path / "needs_letters"
    shutil.copytree(folder, needs)
    write_spec(
        needs, replace(read_spec(needs, "recognizer"), decoding="attention", decoder_needs_letters=True)
    )
    export_recognizer(needs, tmp_path / "onnx")
    readers = [load_recognizer(needs), OnnxRecognizer(tmp_path / "onnx", threads=1)]
    vocabulary = [i for i, g in enumerate(readers[0].glyphs) if any(ch.isalnum() for ch in g)]
    for reader in readers:
        assert reader.settings.routing.letter_ids == frozenset(vocabulary)
    assert [t for t, _ in readers[0].recognize(crops)] == [t for t, _ in attention]  # every line lettered
    letters = frozenset(ctc_ids[0][:3])  # only some lines' CTC readings hold one of these
    lettered = [not letters.isdisjoint(ids) for ids in ctc_ids]
    assert any(lettered) and not all(lettered)
    for reader in readers:
        reader.settings = replace(
            reader.settings, routing=replace(reader.settings.routing, letter_ids=letters)
        )
        got = reader.recognize(crops, batch_size=2)
        for has, (text, _), ctc_text, (decoded, _) in zip(lettered, got, ctc_texts, attention, strict=True):
            assert text == (decoded if has else ctc_text)
