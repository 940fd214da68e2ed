"""Greedy decoding with the KV cache, one loop for both backends (torch, onnxruntime).

Lines of different widths decode together: their encoder states are padded to the longest and the
cross-attention mask hides the padding, so a page's lines run in one loop instead of one per width. Each
line keeps its own token budget (ocrkit.decode.budget), so it reads exactly as it would alone, and leaves
the batch soon after it ends (COMPACT_SHARE), so the short lines do not pay for the long ones. Callers
pass the lines longest first: the short ones then end at the tail, and dropping a tail is a free view of
an array cache where picking rows copies it (ocrkit.runtime.recognizer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from ocrkit.decode.ctc import log_softmax

# Finished lines leave the batch once they are this share of it, so each step costs about the lines
# left, without copying the whole cache (cross-attention states included) every time one line ends.
COMPACT_SHARE = 0.25
# Finished lines a kept prefix may still carry (share of it): their rows' compute until the next
# compaction costs less than a copy. Below COMPACT_SHARE, so a cut never triggers the next at once. On
# the SROIE dev receipts (ONNX) it cut the cache bytes copied per page from 43 MB to 13 MB for 1.6 %
# more decoder rows.
PREFIX_SLACK = 0.2


class DecoderSteps(Protocol):
    """A decoder run one token at a time with its cache, in the backend's own tensor type."""

    eos_id: int

    def first_step(self, states: Any, mask: np.ndarray | None) -> tuple[np.ndarray, Any]:
        """Decoder start token → ((B, V) logits of the first token, cache)."""

    def next_step(self, tokens: np.ndarray, cache: Any, mask: np.ndarray | None) -> tuple[np.ndarray, Any]:
        """(B,) tokens just chosen → ((B, V) logits of the next token, cache)."""

    def select(self, cache: Any, rows: np.ndarray) -> Any:
        """The cache of the given rows only (increasing; lines still being read)."""


class GreedyReadings(NamedTuple):
    """Per line: token ids without </s>; exp(mean token log-prob, </s> included); and, where a reference
    reading was given, an upper bound on the decoder's log p(reference + </s>) (None where the line ran out
    of budget before leaving the reference)."""

    ids: list[list[int]]
    confidences: list[float]
    reference_bounds: list[float | None]


def greedy(
    steps: DecoderSteps,
    states: Any,
    budgets: np.ndarray,
    mask: np.ndarray | None = None,
    references: Sequence[Sequence[int]] | None = None,
) -> GreedyReadings:
    """Line b stops at </s> or after budgets[b] tokens; `mask` (B, encoder length; 1 = real state) hides
    padded states.

    `references[b]` (another reading of line b, e.g. the CTC head's): the reference shares the greedy
    path's tokens up to the first step where it differs, so its log-probability is at most the path's
    log-probability up to there plus its own token's at that step (later tokens only lower it). Joint
    decoding skips teacher-forcing a reference this bound already rules out
    (ocrkit.decode.joint.beyond_reach)."""
    budgets = np.asarray(budgets, np.int64)
    n = len(budgets)
    tokens: list[list[int]] = [[] for _ in range(n)]
    logprob = np.zeros(n, np.float64)
    counted = np.zeros(n, np.int64)
    bounds: list[float | None] = [None] * n
    following = np.full(n, references is not None)  # the reference still matches the path so far
    done = budgets <= 0
    if done.all():
        return GreedyReadings(tokens, [1.0] * n, bounds)
    logits, cache = steps.first_step(states, mask)
    active = np.arange(n)  # the lines the cache and the logits rows belong to
    for step in range(int(budgets.max())):
        lp = log_softmax(logits.astype(np.float64))
        chosen = lp.argmax(-1)
        for row, b in enumerate(active):
            if done[b]:
                continue
            if following[b]:
                reference = references[b]
                wanted = reference[step] if step < len(reference) else steps.eos_id
                if wanted != chosen[row] or wanted == steps.eos_id:
                    bounds[b] = float(logprob[b] + lp[row, wanted])
                    following[b] = False
            logprob[b] += lp[row, chosen[row]]
            counted[b] += 1
            if chosen[row] == steps.eos_id:
                done[b] = True
            else:
                tokens[b].append(int(chosen[row]))
        done |= budgets <= step + 1
        if done.all():
            break
        finished = int(done[active].sum())
        if finished and finished >= COMPACT_SHARE * len(active):
            rows = kept_rows(~done[active])
            cache, chosen, active = steps.select(cache, rows), chosen[rows], active[rows]
            mask = None if mask is None else mask[rows]
        logits, cache = steps.next_step(chosen.astype(np.int64), cache, mask)
    confidences = [float(np.exp(logprob[b] / max(1, counted[b]))) for b in range(n)]
    return GreedyReadings(tokens, confidences, bounds)


def kept_rows(unfinished: np.ndarray) -> np.ndarray:
    """Rows to keep at a compaction: the prefix up to the last unfinished row when it carries few finished
    ones (a prefix needs no copy), else exactly the unfinished rows."""
    rows = np.nonzero(unfinished)[0]
    prefix = int(rows[-1]) + 1
    if prefix - len(rows) <= PREFIX_SLACK * prefix:
        return np.arange(prefix)
    return rows


def pad_lengths(lengths: list[int]) -> np.ndarray:
    """(B, max length) int64 cross-attention mask: 1 over each line's own encoder states, 0 after."""
    mask = np.zeros((len(lengths), max(lengths, default=0)), np.int64)
    for row, length in enumerate(lengths):
        mask[row, :length] = 1
    return mask
