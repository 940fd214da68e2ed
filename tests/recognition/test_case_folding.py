"""Case-free targets: a row marked case-free scores either case, in the attention and the CTC loss."""

from __future__ import annotations

import pytest
import torch

from ocrkit.recognition.case_folding import case_partners, fold_cases
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.tokenizer import build_tokenizer
from ocrkit.util.config import load_config


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
