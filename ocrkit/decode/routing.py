"""Attention decoding's routing: which lines keep the CTC head's reading instead of the decoder's.

The decoder reads better than the CTC head on most lines but costs several times as much per line, and it
misreads lines much longer than it trained on. Both heads read the same encoder pass, so the CTC reading
of every line is known before the decoder runs; the routing keeps it where it is long or certain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ocrkit.decode.ctc import log_softmax


@dataclass(frozen=True)
class DecoderRouting:
    """`max_chars`: a CTC reading longer than this is kept (on glued real validation lines of 100-160
    characters the decoder's CER was 0.26-0.35 against CTC's 0.20-0.21; up to 80 the decoder read
    better). `gate`: a line whose least sure CTC frame gives its best label at least this probability
    is kept, and the decoder never reads it. The least sure frame, not the mean over frames, because the
    many certain blank frames of a line hide one doubtful letter in a mean (real validation lines: a mean
    gate that keeps the CER skipped 5 % of the receipt lines, a least-frame gate 18-29 %)."""

    max_chars: int | None = None
    gate: float | None = None

    @property
    def reads_ctc(self) -> bool:
        """Whether routing needs the CTC readings at all (else the decoder reads every line)."""
        return self.max_chars is not None or self.gate is not None

    def decoder_lines(self, readings: list[tuple[list[int], float]], logits: np.ndarray) -> list[int]:
        """Indices of the lines the decoder must read, given their CTC readings and (B, T, V) frame logits."""
        keep = np.zeros(len(readings), dtype=bool)
        if self.max_chars is not None:
            keep |= np.array([len(ids) > self.max_chars for ids, _ in readings], dtype=bool)
        if self.gate is not None:
            keep |= weakest_frame(logits) >= self.gate
        return [i for i in range(len(readings)) if not keep[i]]


def weakest_frame(logits: np.ndarray) -> np.ndarray:
    """(B, T, V) CTC frame logits → (B,) probability of the best label at each line's least sure frame."""
    best = log_softmax(logits.astype(np.float64)).max(-1)
    return np.exp(best.min(-1))
