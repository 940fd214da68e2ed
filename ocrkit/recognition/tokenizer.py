"""Character-level tokenizer: one token per character (space included), saved as a HF fast tokenizer.

Built with the `tokenizers` library and wrapped in `PreTrainedTokenizerFast`, so the model folder's
tokenizer.json is readable by `AutoTokenizer` and Optimum. It never adds <s>/</s> by itself: the decoder
start token comes from the model config and labels are given an explicit </s> by `encode_label`.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from ocrkit.util.charset import DEFAULT_CHARSET
from ocrkit.util.errors import ModelError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
VOCAB_MULTIPLE = 8  # embedding / LM-head rows padded to a multiple of 8 (faster matmuls, tidy shapes)


def build_tokenizer(charset: str = DEFAULT_CHARSET) -> PreTrainedTokenizerFast:
    """Specials get ids 0-3 (<pad>, <s>, </s>, <unk>), then one id per character, then filler tokens."""
    chars = list(dict.fromkeys(charset))
    if any(len(c) != 1 for c in chars) or not chars:
        raise ValueError("charset must be a non-empty string of single characters")
    vocab = {tok: i for i, tok in enumerate([*SPECIALS, *chars])}
    filler = 0
    while len(vocab) % VOCAB_MULTIPLE:
        vocab[f"<unused{filler}>"] = len(vocab)
        filler += 1
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # NFC: a decomposed "é" (e + U+0301) must map to the single "é" token, not to "e" + <unk>.
    core.normalizer = normalizers.NFC()
    core.pre_tokenizer = pre_tokenizers.Split(
        Regex(r"(?m)."), behavior="isolated"
    )  # Oniguruma (?m): "." also matches \n
    core.decoder = decoders.Fuse()  # join tokens with nothing between them (WordLevel would add spaces)
    unused = [t for t in vocab if t.startswith("<unused")]
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token=PAD,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        additional_special_tokens=unused,
        clean_up_tokenization_spaces=False,
    )


def encode_label(tokenizer: PreTrainedTokenizerBase, text: str, max_length: int | None = None) -> list[int]:
    """Token ids of `text` followed by </s>. Literal "<s>" in text stays three characters."""
    ids = tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
    if max_length is not None:
        ids = ids[: max_length - 1]
    return [*ids, tokenizer.eos_token_id]


def decode(tokenizer: PreTrainedTokenizerBase, ids: list[int]) -> str:
    """Ids → text, special and filler tokens dropped, spacing kept exactly."""
    return tokenizer.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)


def load_tokenizer(model_dir: str | Path) -> PreTrainedTokenizerBase:
    """The tokenizer saved in a model folder (ours or any HF tokenizer, e.g. a TrOCR checkpoint's)."""
    try:
        return AutoTokenizer.from_pretrained(str(model_dir))
    except Exception as exc:  # noqa: BLE001 - a broken tokenizer.json raises bare Exception, a missing one others
        reason = " ".join(str(exc).split())  # transformers 5 explains over several lines: keep one
        raise ModelError(model_dir, f"cannot load tokenizer ({exc.__class__.__name__}: {reason})") from None


def padded_vocab_size(tokenizer: PreTrainedTokenizerBase) -> int:
    """Rows the embedding / LM head need: len(tokenizer) rounded up to a multiple of 8."""
    n = len(tokenizer)
    return -(-n // VOCAB_MULTIPLE) * VOCAB_MULTIPLE


def with_characters(tokenizer: PreTrainedTokenizerBase, chars: str) -> PreTrainedTokenizerBase:
    """The tokenizer with `chars` added after its own characters. Every character it had keeps its id, so a
    trained model reads as before; the new ones take the ids after them (where filler tokens were)."""
    vocab = tokenizer.get_vocab()
    new = [c for c in dict.fromkeys(chars) if c not in vocab]
    if not new:
        return tokenizer
    by_id = sorted(vocab, key=vocab.get)
    known = [tok for tok in by_id if tok not in SPECIALS and not tok.startswith("<unused")]
    grown = build_tokenizer("".join(known + new))
    if any(grown.get_vocab().get(tok) != vocab[tok] for tok in (*SPECIALS, *known)):
        raise ModelError("tokenizer", "only ocrkit's character tokenizer can take new characters")
    return grown


def unknown_characters(texts: Iterable[str], tokenizer: PreTrainedTokenizerBase) -> tuple[Counter[str], int]:
    """Characters of the texts (NFC, as the tokenizer reads them) that the tokenizer lacks, each with the
    number of texts holding it, and the number of texts holding any: they train as <unk>, which reading
    drops."""
    vocab, counts, texts_with = tokenizer.get_vocab(), Counter(), 0
    for text in texts:
        missing = {c for c in unicodedata.normalize("NFC", text) if c not in vocab}
        counts.update(missing)
        texts_with += bool(missing)
    return counts, texts_with


def describe_unknown(counts: Counter[str], lines: int, shown: int = 8) -> str:
    """One log line: how many training lines hold characters the tokenizer lacks, and the most common."""
    top = ", ".join(f"U+{ord(c):04X} {c!r} {n}" for c, n in counts.most_common(shown))
    return (
        f"characters outside the tokenizer (train as <unk>, read as nothing) in {lines} training lines: "
        f"{top}; add the ones to learn with model.extra_chars"
    )
