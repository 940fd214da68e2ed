"""Variable-size forward/generate, from_pretrained round trip, save/load identical greedy output."""

import numpy as np
import pytest
import torch
from fixtures import render_line

from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.read import read
from ocrkit.hub.model_folder import SETTINGS_NAME, DetectorSpec, RecognizerSpec, read_spec, write_spec
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.images.preprocess import PageSizing
from ocrkit.recognition import load_recognizer
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.model import count_parameters, create_recognizer
from ocrkit.recognition.task import RecognitionTask
from ocrkit.recognition.tokenizer import build_tokenizer, decode, padded_vocab_size
from ocrkit.recognition.torch_backend import TorchBackend
from ocrkit.util.errors import ModelError


@pytest.fixture(scope="module")
def tiny(tok):
    torch.manual_seed(0)
    return create_recognizer("tiny", tokenizer=tok, image_size=128, max_target_length=64).eval()


def test_config_ids_and_vocab(tiny, tok):
    assert tiny.config.decoder_start_token_id == tok.bos_token_id
    assert tiny.config.pad_token_id == tok.pad_token_id
    assert tiny.generation_config.eos_token_id == tok.eos_token_id
    assert tiny.decoder.config.vocab_size == padded_vocab_size(tok) and padded_vocab_size(tok) % 8 == 0
    assert tiny.decoder.get_output_embeddings().weight.shape[0] == padded_vocab_size(tok)
    assert tiny.encoder.config.patch_size == 16 and tiny.encoder.config.image_size == 128
    assert not any(p.requires_grad for p in tiny.encoder.pooler.parameters())


def test_shipped_size_fits_the_budget(tok):
    n = count_parameters(create_recognizer("small", tokenizer=tok))
    assert 3e6 < n < 20e6  # fp16 safetensors ≤ 40 MB


@pytest.mark.parametrize("hw", [(32, 128), (64, 512), (48, 1024)])
def test_variable_size_forward_and_generate(tiny, hw):
    x = torch.randn(2, 3, *hw)
    labels = torch.tensor([[5, 6, 7, 2], [8, 2, -100, -100]])
    with torch.no_grad():
        out = tiny(pixel_values=x, labels=labels, interpolate_pos_encoding=True)
    assert out.logits.shape == (2, 4, tiny.decoder.config.vocab_size) and torch.isfinite(out.loss)
    enc = tiny.encoder(pixel_values=x, interpolate_pos_encoding=True).last_hidden_state
    assert enc.shape[1] == 1 + (hw[0] // 16) * (hw[1] // 16)  # [CLS] + one token per patch
    seq = tiny.generate(pixel_values=x, interpolate_pos_encoding=True, max_new_tokens=5)
    assert seq.shape[0] == 2 and 2 <= seq.shape[1] <= 6


def test_without_interpolation_other_sizes_fail(tiny):
    with pytest.raises(ValueError):
        tiny(pixel_values=torch.randn(1, 3, 32, 256), decoder_input_ids=torch.tensor([[1]]))


def test_greedy_scores_and_budget(tiny):
    backend = TorchBackend(tiny)
    assert backend.max_positions == 64 and backend.patch == 16
    assert greedy_token_budget(512, 16, 64) == 63  # 32 columns x 3 + 2, capped by 64 decoder positions
    preds = read(backend, torch.randn(3, 3, 32, 128).numpy(), "attention")
    for ids, score in preds:
        assert len(ids) <= greedy_token_budget(128, 16, 64) and 0.0 < score <= 1.0


def test_from_pretrained_local_round_trip(tiny, tok, tmp_path):
    tiny.save_pretrained(tmp_path, safe_serialization=True)
    loaded = create_recognizer(pretrained=tmp_path, tokenizer=tok).eval()
    x = torch.randn(1, 3, 32, 256)
    ids = torch.tensor([[1, 40, 41]])
    with torch.no_grad():
        a = tiny(pixel_values=x, decoder_input_ids=ids, interpolate_pos_encoding=True).logits
        b = loaded(pixel_values=x, decoder_input_ids=ids, interpolate_pos_encoding=True).logits
    torch.testing.assert_close(a, b)
    with pytest.raises(ModelError, match="cannot load"):
        create_recognizer(pretrained=tmp_path / "missing", tokenizer=tok)


def test_task_save_then_load_recognizer_gives_identical_greedy_output(tmp_path):
    config = RecognizerConfig()
    config.model.size, config.data.longest, config.data.max_height = "tiny", 128, 32
    task = RecognitionTask(config)
    torch.manual_seed(1)
    model = task.build_model().eval()
    task.save_pretrained(model, tmp_path / "model")
    spec = read_spec(tmp_path / "model", "recognizer")
    assert spec.preprocess.longest == 128 and spec.preprocess.divisor == 16
    assert all((tmp_path / "model" / f).is_file() for f in ("model.safetensors", "tokenizer.json"))

    crops = [render_line("Total 12.50"), render_line("a much longer receipt line here"), render_line("x")]
    rec = load_recognizer(tmp_path / "model")
    got = rec.recognize(crops, batch_size=1)
    images = [task.preprocess.apply(c) for c in crops]
    for (text, _), image in zip(got, images, strict=True):  # our greedy loop reads as HF generate does
        pixels = torch.from_numpy(task.preprocess.batch([image]))
        budget = greedy_token_budget(pixels.shape[-1], 16, model.decoder.config.max_position_embeddings)
        with torch.no_grad():
            ids = model.generate(pixel_values=pixels, interpolate_pos_encoding=True, max_new_tokens=budget)
        assert text == decode(task.tokenizer, ids[0, 1:].tolist())
    assert len(rec.recognize(crops, batch_size=2)) == 3 and rec.recognize([]) == []


def test_load_recognizer_errors(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        load_recognizer(tmp_path / "nope")
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelError, match=f"{SETTINGS_NAME} is missing"):
        load_recognizer(tmp_path)
    write_spec(tmp_path, RecognizerSpec(LinePreprocess(longest=128)))
    build_tokenizer().save_pretrained(tmp_path)
    with pytest.raises(ModelError, match="cannot load recognizer"):  # garbage safetensors, empty config
        load_recognizer(tmp_path)
    write_spec(tmp_path, DetectorSpec(PageSizing(64)))
    with pytest.raises(ModelError, match="not a recognition model"):
        load_recognizer(tmp_path)


def test_preprocess_shapes_and_height_cap():
    from ocrkit.images.line_preprocess import LinePreprocess

    pre = LinePreprocess(longest=512, max_height=64)
    long_line = np.zeros((30, 900, 3), np.uint8)
    word = np.zeros((40, 120, 3), np.uint8)
    assert pre.apply(long_line).shape == (32, 512, 3) == (*pre.padded_shape(30, 900), 3)
    out = pre.apply(word)  # capped at 64 px tall instead of 171 x 512
    assert out.shape[0] <= 64 and out.shape[1] % 16 == 0 and out.shape[:2] == pre.padded_shape(40, 120)
    assert LinePreprocess(longest=512).apply(word).shape == (176, 512, 3)
