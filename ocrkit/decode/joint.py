"""Joint CTC/attention rescoring: read a line with both decoders, keep the reading both like best.

Why: the CTC head and the TrOCR decoder of the shipped recognizer err on different lines. On the SROIE
crops an earlier model scored CER 0.131 with CTC and 0.134 with the decoder, but picking the better of
the two per line would give 0.095. Neither decoder's own confidence picks well; the sum of both models'
log-likelihoods of each candidate does (hybrid CTC/attention decoding, as in speech recognition),
because CTC penalises the decoder's fluent hallucinations and the decoder penalises CTC's collapsed
letters and broken words.

numpy only: the torch and ONNX recognizers score candidates with their own decoder pass
(ocrkit.decode.read drives both) and share the CTC forward algorithm and the choice made here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ocrkit.decode.ctc import ctc_log_likelihoods, log_softmax, prefix_beams
from ocrkit.decode.routing import weakest_frame

DEFAULT_CTC_WEIGHT = 0.5  # weight of the CTC log-likelihood; the decoder's gets 1 - weight
# Decoder confidence (per-token probability of its best candidate) from which a line too dense for the CTC
# frames is rescored on doubled frames (`ctc_scores`). On the 600 synthetic validation lines the lines so
# rescored gained 1 545 / 1 545 / 1 542 / 1 418 edits at 0.5 / 0.6 / 0.7 / 0.8: 0.7 is the highest that
# keeps 99 % of the gain. An unsure decoder keeps the CTC veto (handwriting, where both read garbage).
DENSE_TRUST = 0.7
# CTC prefix-beam readings offered to the rescoring besides the best path (`second_choices`). Fixed before
# measuring; on an older model it left 600 synthetic lines level (0.150 → 0.151) and lowered every real
# crop subset (SROIE 0.088 → 0.087, DTA 0.396 → 0.380, OCR-D 0.374 → 0.372, poilus 0.828 → 0.811) for
# ~20 % more time per receipt page. A folder's `joint_alternatives` setting overrides it (0 = off).
CTC_ALTERNATIVES = 3
# Nats added to a candidate's decoder log-prob bound before it is ruled out (`beyond_reach`): the bound comes
# from the greedy loop's step graph, the log-prob it stands for from the full graph's teacher forcing, and
# the two differ by float rounding only (about 1e-5 per token in float32).
BOUND_SLACK = 0.05
# The least CTC probability left to readings outside a line's candidates (`others_may_win`): the forward
# algorithm's float64 rounding is far below it, and at log 1e-9 ≈ -20.7 nats no real line's best joint
# score is beaten.
OTHERS_FLOOR = 1e-9


@dataclass(frozen=True)
class JointSettings:
    """How joint decoding weighs the two models and when it may skip the decoder.

    The gate exists for speed: the decoder reads token by token and costs several times the encoder, while
    a line whose every CTC frame is sure rarely changes under rescoring. It looks at the least sure frame
    (`weakest_frame`), as attention decoding's gate does: gated on the mean frame confidence at 0.9,
    recognizer 0.6.0 kept the CTC reading of 92 % of 500 real validation receipt lines and read them at
    CER 0.055; gated on the least sure frame at 0.8 it kept 18 % and read them at 0.0316, as ungated."""

    ctc_weight: float = DEFAULT_CTC_WEIGHT  # weight of the CTC log-likelihood; the decoder's gets 1 - this
    gate: float | None = None  # keep the CTC reading, decoder unused, when its least sure frame >= gate
    alternatives: int = CTC_ALTERNATIVES  # CTC second-choice readings rescored beside the two best

    def unsure(self, frame_logits: np.ndarray) -> list[int]:
        """Indices of the lines the decoder must read, given (B, T, V) CTC frame logits: all without a
        gate, else those whose least sure frame is below it."""
        if self.gate is None:
            return list(range(len(frame_logits)))
        return [int(i) for i in np.nonzero(weakest_frame(frame_logits) < self.gate)[0]]


def ctc_scores(
    frame_logprobs: Sequence[np.ndarray],
    candidates: list[list[list[int]]],
    blank: int,
    refit: Sequence[bool] | None = None,
    on_frames: list[list[float]] | None = None,
) -> list[list[float]]:
    """CTC log-likelihood of each candidate reading of each line, all lines in one batched pass.

    The head has two frames per patch column, so a line set in a narrow face (more than about one
    character per frame once blanks between double letters count) cannot be aligned at all: -inf then says
    nothing about the reading, only about the geometry, and made joint decoding keep CTC's collapsed
    reading over a correct decoder reading (600 synthetic validation lines: joint 0.234, decoder alone
    0.153). A line with `refit[i]` (default: every line) and an impossible candidate has all its
    candidates scored on frames read twice each, which fits up to two characters per frame and still
    rejects a reading far longer than the line. `on_frames`: the candidates' scores on the frames as they
    are (`ctc_scores_on_frames`), when already computed."""
    refit = [True] * len(candidates) if refit is None else refit
    scores = [list(line) for line in on_frames or ctc_scores_on_frames(frame_logprobs, candidates, blank)]
    again = [i for i, line in enumerate(scores) if refit[i] and not np.isfinite(line).all()]
    if again:
        doubled = [np.repeat(frame_logprobs[i], 2, axis=0) for i in again]
        for i, line in zip(
            again, ctc_scores_on_frames(doubled, [candidates[i] for i in again], blank), strict=True
        ):
            scores[i] = line
    return scores


def ctc_scores_on_frames(
    frame_logprobs: Sequence[np.ndarray], candidates: list[list[list[int]]], blank: int
) -> list[list[float]]:
    """CTC log-likelihood of each candidate of each line on its frames as they are (no refit)."""
    pairs = [(frames, ids) for frames, cands in zip(frame_logprobs, candidates, strict=True) for ids in cands]
    flat = ctc_log_likelihoods([f for f, _ in pairs], [ids for _, ids in pairs], blank) if pairs else []
    out, at = [], 0
    for cands in candidates:
        out.append([float(v) for v in flat[at : at + len(cands)]])
        at += len(cands)
    return out


def second_choices(
    frame_logprobs: np.ndarray, taken: list[list[int]], blank: int, alternatives: int = CTC_ALTERNATIVES
) -> list[list[int]]:
    """One line's `alternatives` + 1 best CTC prefix-beam readings that are not `taken` yet — second
    choices at ambiguous frames for the decoder to judge (the best of them is usually the best path)."""
    return [ids for ids, _ in prefix_beams(frame_logprobs, blank, beam=alternatives + 1) if ids not in taken]


def others_may_win(
    ctc: Sequence[float],
    known: Sequence[float | None],
    ctc_weight: float = DEFAULT_CTC_WEIGHT,
    decoder_bound: float | None = None,
) -> bool:
    """Whether a reading outside a line's candidates could score above the best known candidate's, so that
    looking for CTC second choices may pay (`ctc`, `known`: as for `beyond_reach`).

    CTC's probabilities of a line's readings sum to one, so any other reading has a CTC log-prob of at
    most log(1 − Σ p(candidate)); its decoder log-prob is at most `decoder_bound` (the greedy path's
    `others_bound`; 0 where None). Exact, up to the floor OTHERS_FLOOR that keeps float rounding of the
    candidates' sum from ruling everything out. A line with a candidate CTC cannot align is always open:
    its scores may be refit on doubled frames (`ctc_scores`)."""
    best = best_known_score(ctc, known, ctc_weight)
    if best is None or not np.isfinite(ctc).all():
        return True
    rest = max(1.0 - float(np.exp(ctc).sum()), OTHERS_FLOOR)
    decoder = 0.0 if decoder_bound is None else decoder_bound
    return joint_score(float(np.log(rest)), decoder + BOUND_SLACK, ctc_weight) >= best


def distinct_candidates(*readings: list[list[int]]) -> list[list[list[int]]]:
    """Per line, the distinct token sequences proposed by each decoder (first proposer's order)."""
    out = []
    for proposals in zip(*readings, strict=True):
        unique: list[list[int]] = []
        for ids in proposals:
            if ids not in unique:
                unique.append(list(ids))
        out.append(unique)
    return out


def beyond_reach(
    ctc: Sequence[float],
    known: Sequence[float | None],
    bounds: Sequence[float | None],
    ctc_weight: float = DEFAULT_CTC_WEIGHT,
) -> list[bool]:
    """Per candidate of one line: True where it cannot win, so its decoder log-prob need not be computed.

    `ctc`: the candidates' CTC scores on the line's frames; `known[k]`: candidate k's decoder log-prob where
    known (the greedy reading's, from its own loop); `bounds[k]`: an upper bound on it where a tighter one
    than 0 is known (ocrkit.decode.greedy.DecoderPath: from where the candidate leaves the greedy path). A
    candidate is out of reach when its joint score at that bound (plus BOUND_SLACK) is below a known
    candidate's. A line with a candidate CTC cannot align is left alone: its scores may be refit on
    doubled frames (`ctc_scores`)."""
    best = best_known_score(ctc, known, ctc_weight)
    if best is None or not np.isfinite(ctc).all():
        return [False] * len(ctc)
    return [
        lp is None and joint_score(c, (0.0 if bound is None else bound) + BOUND_SLACK, ctc_weight) < best
        for c, lp, bound in zip(ctc, known, bounds, strict=True)
    ]


def joint_score(ctc: float, decoder: float, ctc_weight: float = DEFAULT_CTC_WEIGHT) -> float:
    """The weighted log-likelihood joint decoding ranks a line's candidates by."""
    return ctc_weight * ctc + (1.0 - ctc_weight) * decoder


def best_known_score(
    ctc: Sequence[float], known: Sequence[float | None], ctc_weight: float = DEFAULT_CTC_WEIGHT
) -> float | None:
    """The highest joint score among a line's candidates whose decoder log-prob is known (None: none is)."""
    scores = [joint_score(c, lp, ctc_weight) for c, lp in zip(ctc, known, strict=True) if lp is not None]
    return max(scores, default=None)


def choose(
    frame_logprobs: np.ndarray,
    candidates: list[list[list[int]]],
    attention_logprobs: list[list[float]],
    blank: int,
    ctc_weight: float = DEFAULT_CTC_WEIGHT,
    ctc_on_frames: list[list[float]] | None = None,
) -> list[tuple[list[int], float]]:
    """Per line, the candidate with the highest weighted log-likelihood, and its confidence.

    `attention_logprobs[b][k]` is the decoder's log p(candidate + </s>), -inf for a candidate out of reach
    (`beyond_reach`); the confidence is exp of the joint score per emitted token (</s> included), 1.0 when
    both models are certain. `ctc_on_frames`: see `ctc_scores`."""
    decoder_sure = [
        max(np.exp(lp / (len(ids) + 1)) for ids, lp in zip(cands, att, strict=True)) >= DENSE_TRUST
        for cands, att in zip(candidates, attention_logprobs, strict=True)
    ]
    ctc_all = ctc_scores(frame_logprobs, candidates, blank, refit=decoder_sure, on_frames=ctc_on_frames)
    picked = []
    for cands, att, ctc in zip(candidates, attention_logprobs, ctc_all, strict=True):
        scores = [joint_score(c, lp, ctc_weight) for c, lp in zip(ctc, att, strict=True)]
        best = int(np.argmax(scores))
        confidence = float(np.exp(scores[best] / (len(cands[best]) + 1)))
        picked.append((cands[best], confidence if np.isfinite(confidence) else 0.0))
    return picked


def teacher_forcing_batch(
    candidates: list[list[list[int]]], start_id: int, eos_id: int, pad_id: int, max_positions: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Decoder inputs for scoring every candidate at once: (input_ids [N, L] = <s> + ids, right-padded;
    targets [N, L] = ids + </s>; mask [N, L] of scored positions; owner line of each row). Right padding
    leaves the scored positions untouched under the decoder's causal attention, so no attention mask is
    needed (the ONNX decoder has none)."""
    rows, owners = [], []
    for line, cands in enumerate(candidates):
        for ids in cands:
            rows.append(list(ids)[: max_positions - 1])
            owners.append(line)
    length = max(len(r) for r in rows) + 1
    inputs = np.full((len(rows), length), pad_id, dtype=np.int64)
    targets = np.full((len(rows), length), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), length), dtype=bool)
    for i, ids in enumerate(rows):
        inputs[i, : len(ids) + 1] = [start_id, *ids]
        targets[i, : len(ids) + 1] = [*ids, eos_id]
        mask[i, : len(ids) + 1] = True
    return inputs, targets, mask, owners


def row_logprobs(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Decoder logits [N, L, V] of teacher-forced rows → (N,) log p of each row's scored targets."""
    lp = log_softmax(logits.astype(np.float64))
    token = np.take_along_axis(lp, targets[..., None], axis=-1)[..., 0]
    return (token * mask).sum(1)


def per_line(totals: np.ndarray, owners: list[int], lines: int) -> list[list[float]]:
    """Row values → per line, in row order, the values of the rows it owns."""
    out: list[list[float]] = [[] for _ in range(lines)]
    for owner, total in zip(owners, totals, strict=True):
        out[owner].append(float(total))
    return out
