"""Character and word error rates, micro-averaged: total edits / total reference characters (words).

One edit distance for the whole project (rapidfuzz's Levenshtein, also fast on page-length texts).
Texts are NFC-normalised first, so composed and decomposed accents match.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein


def edit_distance(ref: Sequence, hyp: Sequence) -> int:
    """Levenshtein distance (unit insert / delete / substitute) between two strings or word lists."""
    return Levenshtein.distance(ref, hyp)


def _norm(text: str, case_sensitive: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    return text if case_sensitive else text.lower()


@dataclass
class ErrorCounts:
    """Running totals; add lines one by one (each may have its own case rule), read cer/wer at the end."""

    char_edits: int = 0
    ref_chars: int = 0
    word_edits: int = 0
    ref_words: int = 0

    def add(self, ref: str, hyp: str, case_sensitive: bool = True) -> None:
        ref, hyp = _norm(ref, case_sensitive), _norm(hyp, case_sensitive)
        self.char_edits += edit_distance(ref, hyp)
        self.ref_chars += len(ref)
        self.word_edits += edit_distance(ref.split(), hyp.split())
        self.ref_words += len(ref.split())

    @property
    def cer(self) -> float:
        return self.char_edits / max(self.ref_chars, 1)

    @property
    def wer(self) -> float:
        return self.word_edits / max(self.ref_words, 1)


def error_rates(refs: Iterable[str], hyps: Iterable[str], case_sensitive: bool = True) -> dict[str, float]:
    """{"cer", "wer"} over paired lines."""
    counts = ErrorCounts()
    for ref, hyp in zip(refs, hyps, strict=True):
        counts.add(ref, hyp, case_sensitive)
    return {"cer": counts.cer, "wer": counts.wer}
