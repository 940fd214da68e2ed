"""Where each character of a reading sits on its line: forced CTC alignment of the chosen reading to the
CTC head's frames (numpy only, shared by torch and ONNX).

Whichever decoder produced a reading, the CTC head has read the same encoder pass, so the most likely
alignment of that exact text to the frames says which frames each character was emitted on. A frame
belongs to one encoder patch, and patches come column by column (ocrkit.decode.ctc.patch_columns), so a
character's frames give its horizontal place on the letterboxed line to the width of one patch column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ocrkit.decode.ctc import ctc_states

JUMP = 2  # how a state was reached: 0 from itself, 1 from the state before, 2 over a blank


def forced_alignment(
    frame_logprobs: Sequence[np.ndarray], targets: Sequence[list[int]], blank: int, chunk: int = 64
) -> list[np.ndarray | None]:
    """For each (T, V) log-softmaxed frames and target ids, the (T,) state of each frame on the single
    most likely CTC alignment (Viterbi): 2k + 1 where the frame emits target token k, even where it
    emits a blank; None where the target cannot fit in the frames. Lines of similar size are aligned
    `chunk` at a time in one loop over frames."""
    order = sorted(range(len(targets)), key=lambda i: (len(frame_logprobs[i]), len(targets[i])))
    out: list[np.ndarray | None] = [None] * len(targets)
    for at in range(0, len(order), chunk):
        rows = [i for i in order[at : at + chunk] if targets[i]]
        if not rows:
            continue
        paths = _viterbi([frame_logprobs[i] for i in rows], [targets[i] for i in rows], blank)
        for i, path in zip(rows, paths, strict=True):
            out[i] = path
    for i, target in enumerate(targets):
        if not target:
            out[i] = np.zeros(len(frame_logprobs[i]), dtype=np.intp)
    return out


def _viterbi(frames: list[np.ndarray], targets: list[list[int]], blank: int) -> list[np.ndarray | None]:
    """The best alignment of each target over the padded batch's CTC lattice (ocrkit.decode.ctc.ctc_states:
    states blank, t1, blank, ..., frames past a line's own allowing only blanks)."""
    own_states, skip, emit = ctc_states(frames, targets, blank)
    n, longest, states = len(targets), len(emit), skip.shape[1]
    score = np.full(skip.shape, -np.inf)
    score[:, :2] = emit[0, :, :2]
    came = np.zeros((longest, *skip.shape), dtype=np.int8)
    none = np.full((n, 2), -np.inf)
    for t in range(1, longest):
        shifted = np.concatenate((none, score), axis=1)
        step, jump = shifted[:, 1 : states + 1], np.where(skip, shifted[:, :states], -np.inf)
        best = np.maximum(score, step)
        came[t] = step > score  # STEP where the state before is likelier, else STAY
        took_jump = jump > best
        came[t][took_jump] = JUMP
        score = np.maximum(best, jump) + emit[t]
    rows = np.arange(n)
    last, before = own_states - 1, np.maximum(own_states - 2, 0)
    state = np.where(score[rows, last] >= score[rows, before], last, before)
    feasible = np.isfinite(np.maximum(score[rows, last], score[rows, before]))
    path = np.empty((longest, n), dtype=np.intp)
    for t in range(longest - 1, -1, -1):
        path[t] = state
        state = state - came[t, rows, state]
    return [path[: len(f), i].copy() if feasible[i] else None for i, f in enumerate(frames)]


def token_centres(path: np.ndarray, tokens: int, frame_x: np.ndarray) -> np.ndarray:
    """(tokens,) mean x of the frames on which each token is emitted, given an alignment `path` and the x
    of every frame."""
    emitted = path % 2 == 1
    token = path[emitted] // 2
    sums = np.bincount(token, weights=frame_x[emitted], minlength=tokens)
    counts = np.bincount(token, minlength=tokens)
    return sums / np.maximum(counts, 1)


def token_confidences(path: np.ndarray, ids: list[int], frame_logprobs: np.ndarray) -> np.ndarray:
    """(tokens,) mean probability, over the frames each token is emitted on, of that token."""
    emitted = np.flatnonzero(path % 2 == 1)
    token = path[emitted] // 2
    probs = np.exp(frame_logprobs[emitted, np.asarray(ids, dtype=np.intp)[token]])
    sums = np.bincount(token, weights=probs, minlength=len(ids))
    return sums / np.maximum(np.bincount(token, minlength=len(ids)), 1)


def frame_centres(frames: int, rows: int, frames_per_patch: int, patch: int) -> np.ndarray:
    """x (letterboxed-line pixels) of the centre of the patch column each of `frames` frames belongs to:
    columns come left to right, each `rows` patches top to bottom, each patch `frames_per_patch` frames."""
    column = np.arange(frames) // frames_per_patch // rows
    return (column + 0.5) * patch
