"""Tokenizer round trips and CER/WER on known pairs."""

import pytest
from transformers import AutoTokenizer

from ocrkit.recognition.metrics import ErrorCounts, edit_distance, error_rates
from ocrkit.recognition.tokenizer import decode, encode_label, load_tokenizer
from ocrkit.util.charset import DEFAULT_CHARSET

SAMPLES = [
    "Grüße aus Köln — 12,50 €",
    "ſein  Geſchäft   (3 spaces)",
    "Ærø ŁÓDŹ naïve façade “quoted” ‘x’ – §4 °C £3",
    " leading and trailing ",
    "a <s> </s> <pad> literal",
]


def test_vocab_layout(tok):
    assert len(tok) % 8 == 0
    assert (tok.pad_token_id, tok.bos_token_id, tok.eos_token_id, tok.unk_token_id) == (0, 1, 2, 3)
    assert len(tok) >= len(DEFAULT_CHARSET) + 4


@pytest.mark.parametrize("text", SAMPLES)
def test_round_trip_one_token_per_char(tok, text):
    ids = encode_label(tok, text)
    assert ids[-1] == tok.eos_token_id and tok.eos_token_id not in ids[:-1]
    assert len(ids) == len(text) + 1  # one token per character, spaces included, plus </s>
    assert tok.unk_token_id not in ids
    assert decode(tok, ids) == text


def test_unknown_and_decomposed_chars(tok):
    assert encode_label(tok, "e\u0301") == encode_label(tok, "é")  # NFC before lookup
    ids = encode_label(tok, "a中b")
    assert ids[1] == tok.unk_token_id and decode(tok, ids) == "ab"


def test_truncation_keeps_eos(tok):
    ids = encode_label(tok, "x" * 50, max_length=10)
    assert len(ids) == 10 and ids[-1] == tok.eos_token_id


def test_saved_tokenizer_is_a_plain_hf_fast_tokenizer(tok, tmp_path):
    tok.save_pretrained(tmp_path)
    assert (tmp_path / "tokenizer.json").is_file()
    for loaded in (load_tokenizer(tmp_path), AutoTokenizer.from_pretrained(str(tmp_path))):
        assert loaded.is_fast and len(loaded) == len(tok)
        for text in SAMPLES:
            assert encode_label(loaded, text) == encode_label(tok, text)
            assert decode(loaded, encode_label(loaded, text)) == text


def test_edit_distance_known_pairs():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3
    assert edit_distance("flaw", "lawn") == 2
    assert edit_distance("the cat sat".split(), "the bat sat down".split()) == 2


def test_cer_wer_micro_average():
    # 1 edit over 10 chars + 0 over 2 chars: micro CER = 1/12 (a mean of per-line CERs would be 0.05)
    rates = error_rates(["abcdefghij", "xy"], ["abcdefghiX", "xy"])
    assert rates["cer"] == pytest.approx(1 / 12)
    assert rates["wer"] == pytest.approx(1 / 2)
    rates = error_rates(["hello world foo"], ["hello word"])
    assert rates["cer"] == pytest.approx(5 / 15)
    assert rates["wer"] == pytest.approx(2 / 3)


def test_case_insensitive_per_record():
    counts = ErrorCounts()
    counts.add("TOTAL 12.50", "Total 12.50", case_sensitive=False)
    assert counts.cer == 0.0
    counts.add("Ab", "ab", case_sensitive=True)
    assert counts.char_edits == 1 and counts.ref_chars == 13
