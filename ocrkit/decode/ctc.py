"""CTC over the encoder's patch columns (best path, prefix beams, alignment likelihoods): numpy only.

Why it exists: a small recognizer trained from scratch on CPU reads with its encoder long before its
autoregressive decoder stops hallucinating — at step 7 750 of the shipped run, the CTC head scored CER
0.51 on the SROIE crops where the TrOCR decoder scored 0.83 (it emits fluent receipt strings and loops).
CTC can neither loop nor emit more characters than there are frames. Which decoder a model uses is the
`decoding` key of its settings; the head lives beside the HF weights in its own safetensors file, so plain
`VisionEncoderDecoderModel.from_pretrained` still loads the folder cleanly (ocrkit.hub.model_folder reads it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np


class Decoding(StrEnum):
    """How a recognizer reads: the TrOCR decoder alone, the CTC head alone, or both rescored (joint.py)."""

    ATTENTION = "attention"
    CTC = "ctc"
    JOINT = "joint"

    @property
    def reads_head(self) -> bool:
        """Whether this decoding needs the CTC head."""
        return self is not Decoding.ATTENTION


DECODINGS = tuple(d.value for d in Decoding)  # the names, for command-line choices and messages


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def patch_columns(states: np.ndarray, height: int, width: int) -> np.ndarray:
    """(B, [CLS +] h·w, D) encoder states → (B, w·h, D) frames: columns left to right, each top to bottom.
    The same order as the training loss (ocrkit.recognition.ctc.ctc_loss)."""
    patches = states[:, -height * width :, :]
    batch = patches.shape[0]
    return patches.reshape(batch, height, width, -1).transpose(0, 2, 1, 3).reshape(batch, width * height, -1)


def best_path(logits: np.ndarray, blank: int) -> list[tuple[list[int], float]]:
    """(B, T, V) frame logits → per line (token ids with repeats merged and blanks dropped, confidence).
    Confidence = exp(mean per-frame log-prob of the best path): 1.0 when every frame is certain."""
    logprobs = log_softmax(logits.astype(np.float64))
    best = logprobs.argmax(-1)
    frame_lp = np.take_along_axis(logprobs, best[..., None], axis=-1)[..., 0]
    out = []
    for ids, lps in zip(best, frame_lp, strict=True):
        keep = np.ones(len(ids), dtype=bool)
        keep[1:] = ids[1:] != ids[:-1]
        tokens = [int(t) for t in ids[keep] if t != blank]
        out.append((tokens, float(np.exp(lps.mean()))))
    return out


@dataclass(frozen=True)
class CtcHead:
    """The CTC head's weights as float32 numpy: `weight` (k·V × D), `bias` (k·V).

    Each patch emits `frames_per_patch` (k) frames, the head's output split into k consecutive V-sized
    rows. Why k > 1: a 16-px patch column of a 32-px-tall line is about one character wide, so a line gets
    ~1.8 frames per character, and CTC needs a blank between doubled letters ("ll", "ff", "00"): with too
    few frames they collapse into one. k = 2 doubles the frames at the cost of a wider linear layer, not
    of a longer encoder sequence."""

    weight: np.ndarray
    bias: np.ndarray
    frames_per_patch: int = 1

    def logits(self, states: np.ndarray, pixel_shape: tuple[int, int], patch: int) -> np.ndarray:
        """Encoder states of a batch of H×W inputs (ViT patches of `patch` pixels) → (B, T, V) frame
        logits in reading order, T = k · (H/patch) · (W/patch)."""
        frames = patch_columns(states.astype(np.float32), pixel_shape[0] // patch, pixel_shape[1] // patch)
        out = frames @ self.weight.T + self.bias
        batch, columns, width = out.shape
        return out.reshape(batch, columns * self.frames_per_patch, width // self.frames_per_patch)


def ctc_log_likelihood(frame_logprobs: np.ndarray, target: list[int], blank: int) -> float:
    """log p(target | frames) summed over all CTC alignments (forward algorithm, log space).

    `frame_logprobs` (T, V) are log-softmaxed; -inf when the target cannot fit into T frames."""
    return float(ctc_log_likelihoods([frame_logprobs], [target], blank)[0])


def ctc_log_likelihoods(
    frame_logprobs: Sequence[np.ndarray], targets: Sequence[list[int]], blank: int, chunk: int = 64
) -> np.ndarray:
    """`ctc_log_likelihood` of many (frames, target) pairs at once, `chunk` pairs of similar size per
    forward pass: one loop over the frames per chunk instead of one per pair (joint decoding scores two
    to five candidates per line; looping per pair cost it ~9 % of its reading time on receipt lines)."""
    order = sorted(range(len(targets)), key=lambda i: (len(frame_logprobs[i]), len(targets[i])))
    out = np.empty(len(targets))
    for at in range(0, len(order), chunk):
        rows = order[at : at + chunk]
        out[rows] = _forward([frame_logprobs[i] for i in rows], [targets[i] for i in rows], blank)
    return out


def ctc_states(
    frames: list[np.ndarray], targets: list[list[int]], blank: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A padded batch's CTC state lattice: each target becomes the state sequence blank, t1, blank, t2,
    ..., blank (states past a target's own are padding that nothing reads). Returns each target's own
    state count (n,), which states may be reached over the blank before them (n, S), and the log-prob
    of emitting each state at each frame (T, n, S). A pair with fewer frames than the batch gets frames
    after its own where only blanks may be emitted (log p 0): its last label's state then empties into
    its final blank state, which holds the answer from then on."""
    n, longest = len(targets), max(len(f) for f in frames)
    own_states = np.array([2 * len(t) + 1 for t in targets])
    ext = np.full((n, own_states.max()), blank)
    for i, target in enumerate(targets):
        ext[i, 1 : 2 * len(target) : 2] = target
    # a state may skip the blank before it unless it repeats the previous label (a double letter
    # needs a blank between its two frames)
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = np.full((longest, *ext.shape), -np.inf)
    for i, f in enumerate(frames):
        emit[: len(f), i] = f[:, ext[i]]
        emit[len(f) :, i, ext[i] == blank] = 0.0
    return own_states, skip, emit


def _forward(frames: list[np.ndarray], targets: list[list[int]], blank: int) -> np.ndarray:
    """The CTC forward algorithm over a padded batch (the lattice of `ctc_states`)."""
    own_states, skip, emit = ctc_states(frames, targets, blank)
    n, longest, states = len(targets), len(emit), skip.shape[1]
    alpha = np.full(skip.shape, -np.inf)
    alpha[:, :2] = emit[0, :, :2]
    none = np.full((n, 2), -np.inf)
    for t in range(1, longest):
        shifted = np.concatenate((none, alpha), axis=1)  # shifted[:, s + 2] is alpha[:, s]
        step, jump = shifted[:, 1 : states + 1], np.where(skip, shifted[:, :states], -np.inf)
        alpha = np.logaddexp(np.logaddexp(alpha, step), jump) + emit[t]
    rows = np.arange(n)
    last = alpha[rows, own_states - 1]
    before = np.where(own_states > 1, alpha[rows, np.maximum(own_states - 2, 0)], -np.inf)
    return np.logaddexp(last, before)


def prefix_beams(
    logprobs: np.ndarray, blank: int, beam: int = 6, per_frame: int = 4, min_logprob: float = -6.0
) -> list[tuple[list[int], float]]:
    """CTC prefix beam search over one line's (T, V) log-softmaxed frames → up to `beam` readings, best
    first, each with log p(reading) summed over the alignments the beam kept.

    Unlike the best path, it merges alignments and proposes second choices where a frame is ambiguous
    (`menber` / `member`), which joint decoding can then let the decoder judge. Per frame only the
    `per_frame` likeliest tokens above `min_logprob` (and the prefix's last token, which may repeat) are
    expanded. Plain floats and `math` on purpose: numpy's per-scalar overhead made it several times slower."""
    beams: dict[tuple[int, ...], tuple[float, float]] = {(): (0.0, -math.inf)}  # (ends in blank, in token)
    for frame in logprobs:
        top = np.argsort(-frame)[:per_frame]
        live = {int(t): float(frame[t]) for t in top if t != blank and frame[t] > min_logprob}
        blank_lp = float(frame[blank])
        grown: dict[tuple[int, ...], list[float]] = {}
        for prefix, (p_blank, p_token) in beams.items():
            total = _logaddexp(p_blank, p_token)
            _add(grown, prefix, 0, total + blank_lp)
            last = prefix[-1] if prefix else -1
            if last >= 0 and last not in live:
                live_here = {**live, last: float(frame[last])}
            else:
                live_here = live
            for token, lp in live_here.items():
                if token == last:
                    _add(grown, prefix, 1, p_token + lp)  # the same letter held another frame
                    _add(grown, (*prefix, token), 1, p_blank + lp)  # a double letter: blank between
                else:
                    _add(grown, (*prefix, token), 1, total + lp)
        ranked = sorted(grown.items(), key=lambda kv: -_logaddexp(*kv[1]))[:beam]
        beams = {prefix: (pb, pt) for prefix, (pb, pt) in ranked}
    return [(list(prefix), _logaddexp(pb, pt)) for prefix, (pb, pt) in beams.items()]


def _logaddexp(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return a if b == -math.inf else a + math.log1p(math.exp(b - a))


def _add(beams: dict[tuple[int, ...], list[float]], prefix: tuple[int, ...], slot: int, value: float) -> None:
    entry = beams.setdefault(prefix, [-math.inf, -math.inf])
    entry[slot] = _logaddexp(entry[slot], value)
