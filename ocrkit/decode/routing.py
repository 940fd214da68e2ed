"""Attention decoding's routing: which lines keep the CTC head's reading instead of the decoder's.

The decoder reads better than the CTC head on most lines but costs several times as much per line, it
misreads lines much longer than it trained on, and asked to read a picture it writes fluent lines of its
training text. Both heads read the same encoder pass, so the CTC reading of every line is known before
the decoder runs; the routing keeps it where it is long or certain, or holds no letter at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ocrkit.decode.ctc import log_softmax
from ocrkit.util.charset import has_letter_or_digit


@dataclass(frozen=True)
class DecoderRouting:
    """`max_chars`: a CTC reading longer than this is kept (on glued real validation lines of 100-160
    characters the decoder's CER was 0.26-0.35 against CTC's 0.20-0.21; up to 80 the decoder read
    better). `gate`: a line whose least sure CTC frame gives its best label at least this probability
    is kept, and the decoder never reads it. The least sure frame, not the mean over frames, because the
    many certain blank frames of a line hide one doubtful letter in a mean (real validation lines: a mean
    gate that keeps the CER skipped 5 % of the receipt lines, a least-frame gate 18-29 %).
    `needs_letters`: a line in whose CTC reading no letter or digit stands keeps it, and the decoder
    never reads it: on woodcuts, ornaments and rules the decoder wrote fluent invented lines ("*** W
    INVOICE" on a page of 1550) where the CTC head read nothing, and the page filter
    (ocrkit.pages.not_text) then drops the line. `letter_ids` are the token ids whose text holds a letter
    or digit, filled in from the recognizer's vocabulary (`for_glyphs`)."""

    max_chars: int | None = None
    gate: float | None = None
    needs_letters: bool = False
    letter_ids: frozenset[int] = field(default=frozenset(), repr=False)

    @property
    def reads_ctc(self) -> bool:
        """Whether routing needs the CTC readings at all (else the decoder reads every line)."""
        return self.max_chars is not None or self.gate is not None or self.needs_letters

    def for_glyphs(self, glyphs: Sequence[str]) -> DecoderRouting:
        """The routing with `letter_ids` taken from each token id's text (`glyphs[id]`)."""
        return replace(self, letter_ids=frozenset(i for i, g in enumerate(glyphs) if has_letter_or_digit(g)))

    def decoder_lines(self, readings: list[tuple[list[int], float]], logits: np.ndarray) -> list[int]:
        """Indices of the lines the decoder must read, given their CTC readings and (B, T, V) frame logits."""
        keep = np.zeros(len(readings), dtype=bool)
        if self.max_chars is not None:
            keep |= np.array([len(ids) > self.max_chars for ids, _ in readings], dtype=bool)
        if self.gate is not None:
            keep |= weakest_frame(logits) >= self.gate
        if self.needs_letters:
            if not self.letter_ids:
                raise ValueError("needs_letters routing needs the vocabulary's letter ids (for_glyphs)")
            keep |= np.array([self.letter_ids.isdisjoint(ids) for ids, _ in readings], dtype=bool)
        return [i for i in range(len(readings)) if not keep[i]]


def weakest_frame(logits: np.ndarray) -> np.ndarray:
    """(B, T, V) CTC frame logits → (B,) probability of the best label at each line's least sure frame."""
    best = log_softmax(logits.astype(np.float64)).max(-1)
    return np.exp(best.min(-1))
