"""Reading line crops with any recognizer backend: attention (greedy), CTC best path, or joint rescoring.

The torch and ONNX recognizers differ only in how they run the networks; everything else (batching,
which decoder reads which line, the gate, the candidates and the choice) lives here once, so the two
backends read every line the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from ocrkit.decode.align import forced_alignment, frame_centres, token_centres, token_confidences
from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.ctc import best_path, log_softmax
from ocrkit.decode.greedy import DecoderPath, DecoderSteps, greedy, pad_lengths
from ocrkit.decode.joint import (
    JointSettings,
    beyond_reach,
    choose,
    ctc_scores_on_frames,
    distinct_candidates,
    others_may_win,
    per_line,
    row_logprobs,
    second_choices,
    teacher_forcing_batch,
)
from ocrkit.decode.routing import DecoderRouting
from ocrkit.decode.windows import stitch_columns, window_starts
from ocrkit.images.buckets import same_shape_batches
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.util.blas import single_thread_blas

Reading = tuple[list[int], float]  # token ids (no special tokens) and a confidence in 0..1


@dataclass(frozen=True)
class ReadSettings:
    """How a recognizer folder reads its crops: the values that travel together from its settings
    (RecognizerSpec.read_settings) to every read, torch and ONNX alike."""

    preprocess: LinePreprocess
    decoding: str  # attention | ctc | joint
    joint: JointSettings | None = None  # joint decoding's weight and gate
    routing: DecoderRouting | None = None  # attention: the lines that keep their CTC reading

    def with_trim_margins(self, trim: bool) -> ReadSettings:
        """The same reading with loose crops cut to their line's rows (or not): for crops framed by
        other tools, whose margins the folder's own setting, chosen for detected boxes, does not expect."""
        return replace(self, preprocess=replace(self.preprocess, trim_margins=trim))

    def for_glyphs(self, glyphs: Sequence[str]) -> ReadSettings:
        """The settings with the routing's letter ids taken from the vocabulary (`glyphs[id]`: each
        token's text), which a folder's settings alone do not know."""
        return self if self.routing is None else replace(self, routing=self.routing.for_glyphs(glyphs))

    def ctc_only(self) -> ReadSettings:
        """The same crops read by the CTC head alone (a cheap confidence, e.g. for orientation)."""
        return replace(self, decoding="ctc", routing=None)


class RecognizerBackend(DecoderSteps, Protocol):
    """The networks of a recognizer, run by torch or onnxruntime.

    Encoder states stay in the backend's own type (a torch tensor, a numpy array): decoding only hands
    them back, selects lines of them with a list of row indices (`states[rows]`), or pads them."""

    start_id: int  # the decoder's start token
    eos_id: int
    blank_id: int  # the CTC blank, also the decoder's padding token
    max_positions: int  # the decoder's learned positions
    patch: int  # the ViT patch size in pixels
    masks_encoder: bool  # the decoder takes a cross-attention mask: lines of any width decode together
    ctc_head: Any  # the CTC head when the model has one (whatever the decoding), else None

    def encode(self, pixels: np.ndarray) -> Any:
        """(B, 3, H, W) float32 pixels → encoder states."""

    def ctc_logits(self, states: Any, pixel_shape: tuple[int, int]) -> np.ndarray:
        """The CTC head's (B, T, V) frame logits for states of H×W inputs."""

    def pad_states(self, states: list[Any]) -> Any:
        """States of several batches, (n_i, N_i, D) each → one (Σn_i, max N_i, D) batch, zero-padded."""

    def score(self, states: Any, input_ids: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Teacher forcing: decoder logits (N, L, V) for input ids (N, L), row i attending to states[i]."""


def read_crops(
    backend: RecognizerBackend, settings: ReadSettings, crops: Sequence[np.ndarray], batch_size: int = 16
) -> list[Reading]:
    """Line crops → readings in input order. The encoder reads batches of identical padded shape (it
    reads batch padding badly, see ocrkit.images.buckets.same_shape_batches); the decoder then reads the lines
    of all those batches together (`read_batches`). Lines wider than the preprocessing's `longest` (kept at
    the model's height by `windowed` settings) are read by the CTC head in overlapping windows, whatever
    the decoding (they are longer than the decoder's token budget); a model without a CTC head gets them
    shrunk to fit instead. `settings.routing`: see `read_batches`."""
    lines = _read_lines(backend, settings, crops, batch_size, keep_frames=False)
    return [line.reading for line in lines]


@dataclass(frozen=True)
class PlacedReading:
    """A line's reading and where each of its tokens sits: `centres[k]` is the x, in the crop's own
    pixels, of the centre of the frames token k was emitted on, `confidences[k]` its mean CTC probability
    there (ocrkit.decode.align); None where the model has no CTC head or the reading cannot be aligned to
    its frames."""

    ids: list[int]
    confidence: float
    centres: np.ndarray | None = None
    confidences: np.ndarray | None = None


def read_crops_placed(
    backend: RecognizerBackend, settings: ReadSettings, crops: Sequence[np.ndarray], batch_size: int = 16
) -> list[PlacedReading]:
    """`read_crops`, and each reading forced-aligned to the CTC head's frames of the same encoder pass:
    the positions words and searchable PDFs are built from (ocrkit.pages.words)."""
    lines = _read_lines(backend, settings, crops, batch_size, keep_frames=True)
    head = backend.ctc_head
    placed = [PlacedReading(*line.reading) for line in lines]
    if head is None:
        return placed
    aligned = [i for i, line in enumerate(lines) if line.frames is not None]
    logprobs = [log_softmax(lines[i].frames.astype(np.float32, copy=False)) for i in aligned]
    paths = forced_alignment(logprobs, [lines[i].reading[0] for i in aligned], backend.blank_id)
    for i, frames, path in zip(aligned, logprobs, paths, strict=True):
        if path is None:
            continue
        ids = lines[i].reading[0]
        rows = lines[i].shape[0] // backend.patch
        frame_x = frame_centres(len(path), rows, head.frames_per_patch, backend.patch)
        centres = token_centres(path, len(ids), frame_x) / lines[i].scale
        placed[i] = PlacedReading(*lines[i].reading, centres, token_confidences(path, ids, frames))
    return placed


@dataclass
class _LineRead:
    """One crop as read: its reading, its CTC frame logits (T, V) when kept, and the letterboxed line's
    (H, W) and scale (letterboxed px per crop px)."""

    reading: Reading
    frames: np.ndarray | None
    shape: tuple[int, int]
    scale: float


def _read_lines(
    backend: RecognizerBackend,
    settings: ReadSettings,
    crops: Sequence[np.ndarray],
    batch_size: int,
    keep_frames: bool,
) -> list[_LineRead]:
    """What `read_crops` and `read_crops_placed` share; `keep_frames` also runs the CTC head where the
    decoding alone would not need it."""
    preprocess = settings.preprocess
    fitted = [preprocess.apply_scaled(c) for c in crops]
    wide = [i for i, (im, _) in enumerate(fitted) if im.shape[1] > preprocess.longest]
    if wide and backend.ctc_head is None:
        for i in wide:
            fitted[i] = preprocess.apply_scaled(crops[i], fit_width=True)
        wide = []
    images = [im for im, _ in fitted]
    out = [_LineRead(([], 0.0), None, im.shape[:2], scale) for im, scale in fitted]
    with single_thread_blas():
        windowed = set(wide)
        fitting = [i for i in range(len(images)) if i not in windowed]
        batches = [
            [fitting[j] for j in batch]
            for batch in same_shape_batches([images[i].shape[:2] for i in fitting], batch_size)
        ]
        pixels = [preprocess.batch([images[i] for i in rows]) for rows in batches]
        keep = keep_frames and backend.ctc_head is not None
        readings, logits = _read_batches(
            backend, pixels, settings.decoding, settings.joint, 4 * batch_size, settings.routing, keep
        )
        for rows, batch_readings, batch_logits in zip(batches, readings, logits, strict=True):
            for k, (i, reading) in enumerate(zip(rows, batch_readings, strict=True)):
                out[i].reading = reading
                out[i].frames = None if batch_logits is None else batch_logits[k]
        for i in wide:
            out[i].reading, out[i].frames = _read_windowed(backend, preprocess, images[i], batch_size)
    return out


def read_batches(
    backend: RecognizerBackend,
    batches: list[np.ndarray],
    decoding: str,
    joint: JointSettings | None = None,
    decoder_batch: int = 64,
    routing: DecoderRouting | None = None,
) -> list[list[Reading]]:
    """Several pixel batches (each of one shape) with one decoding → readings per batch. The lines the
    decoder must read (all of them for attention, the gate's unsure ones for joint) are read together
    across batches, in one greedy loop and one teacher-forcing pass per `decoder_batch` lines of similar
    length; a backend without the cross-attention mask groups only lines of one encoder length.

    `routing` (attention, with a CTC head): the lines that keep their CTC reading, the decoder unused
    (ocrkit.decode.routing); None: the decoder reads every line."""
    return _read_batches(backend, batches, decoding, joint, decoder_batch, routing, keep_frames=False)[0]


def _read_batches(
    backend: RecognizerBackend,
    batches: list[np.ndarray],
    decoding: str,
    joint: JointSettings | None,
    decoder_batch: int,
    routing: DecoderRouting | None,
    keep_frames: bool,
) -> tuple[list[list[Reading]], list[np.ndarray | None]]:
    """`read_batches`, and each batch's CTC frame logits where they were computed (always with
    `keep_frames`, which needs a CTC head), else None."""
    if decoding == "joint" and joint is None:
        raise ValueError("joint decoding needs JointSettings")
    states = [backend.encode(pixels) for pixels in batches]
    picked: list[list[Reading]] = []
    logits: list[np.ndarray | None] = []
    pending: list[tuple[int, int]] = []  # (batch, line) the decoder reads
    routed = routing is not None and routing.reads_ctc and backend.ctc_head is not None
    for b, (pixels, encoded) in enumerate(zip(batches, states, strict=True)):
        if decoding == "attention" and not routed:
            picked.append([([], 0.0)] * len(pixels))
            pending += [(b, i) for i in range(len(pixels))]
            logits.append(backend.ctc_logits(encoded, pixels.shape[-2:]) if keep_frames else None)
            continue
        logits.append(backend.ctc_logits(encoded, pixels.shape[-2:]))
        picked.append(best_path(logits[b], backend.blank_id))
        if decoding == "attention":
            pending += [(b, i) for i in routing.decoder_lines(picked[b], logits[b])]
        elif decoding == "joint":
            pending += [(b, i) for i in joint.unsure(logits[b])]
    if not pending:
        return picked, logits
    lines = Lines(
        states=[states[b][[i]] for b, i in pending],
        lengths=[states[b].shape[1] for b, _ in pending],
        budgets=[
            greedy_token_budget(batches[b].shape[-1], backend.patch, backend.max_positions)
            for b, _ in pending
        ],
    )
    ctc_ids = [picked[b][i][0] for b, i in pending] if decoding == "joint" else None
    decoded, paths = _greedy_lines(backend, lines, decoder_batch, keep_paths=ctc_ids is not None)
    if ctc_ids is not None:
        # where the decoder reads what CTC read, rescoring changed no real validation line: only the
        # others are rescored (on receipts about half the lines, saving their teacher-forcing pass)
        differ = [k for k, (ids, _) in enumerate(decoded) if ids != ctc_ids[k]]
        if differ:
            frames = [log_softmax(logits[pending[k][0]][pending[k][1]].astype(np.float64)) for k in differ]
            rescored = _rescore(
                backend,
                lines.subset(differ),
                frames,
                [ctc_ids[k] for k in differ],
                [decoded[k][0] for k in differ],
                joint,
                decoder_batch,
                [_greedy_logprob(decoded[k], lines.budgets[k]) for k in differ],
                [paths[k] for k in differ],
            )
            for k, reading in zip(differ, rescored, strict=True):
                decoded[k] = reading
    for (b, i), reading in zip(pending, decoded, strict=True):
        picked[b][i] = reading
    return picked, logits


@dataclass
class Lines:
    """Lines the decoder reads, each with its own encoder states (1, N_i, D), their length and its budget."""

    states: list[Any]
    lengths: list[int]
    budgets: list[int]

    def subset(self, rows: list[int]) -> Lines:
        return Lines(
            [self.states[r] for r in rows], [self.lengths[r] for r in rows], [self.budgets[r] for r in rows]
        )


def _row_groups(backend: RecognizerBackend, lengths: list[int], limit: int) -> list[list[int]]:
    """Row indices to run together, by their encoder length, longest first (ocrkit.decode.greedy): up to
    `limit` rows of similar length with the cross-attention mask, rows of one length without it."""
    ordered = sorted(range(len(lengths)), key=lambda r: -lengths[r])
    if backend.masks_encoder:
        return [ordered[at : at + limit] for at in range(0, len(ordered), limit)]
    return [[r for r in ordered if lengths[r] == n] for n in dict.fromkeys(lengths[r] for r in ordered)]


def _padded(backend: RecognizerBackend, lines: Lines, owners: list[int]) -> tuple[Any, np.ndarray | None]:
    """The states of the given lines as one batch, and its cross-attention mask (None for a backend
    without one, which only ever gets lines of one length here)."""
    states = backend.pad_states([lines.states[o] for o in owners])
    lengths = [lines.lengths[o] for o in owners]
    return states, (pad_lengths(lengths) if backend.masks_encoder else None)


def _greedy_lines(
    backend: RecognizerBackend, lines: Lines, limit: int, keep_paths: bool = False
) -> tuple[list[Reading], list[DecoderPath | None]]:
    """Greedy readings of the lines, each within its own token budget, and with `keep_paths` each line's
    DecoderPath (ocrkit.decode.greedy; all None without)."""
    out: list[Reading] = [([], 0.0)] * len(lines.lengths)
    paths: list[DecoderPath | None] = [None] * len(lines.lengths)
    for group in _row_groups(backend, lines.lengths, limit):
        states, mask = _padded(backend, lines, group)
        budgets = np.array([lines.budgets[o] for o in group])
        read = greedy(backend, states, budgets, mask, keep_paths)
        for k, o in enumerate(group):
            out[o] = (read.ids[k], read.confidences[k])
            paths[o] = read.paths[k]
    return out, paths


def read_windowed(
    backend: RecognizerBackend, preprocess: LinePreprocess, image: np.ndarray, batch_size: int = 16
) -> Reading:
    """One letterboxed line wider than `preprocess.longest`: CTC over overlapping windows of that width
    (a quarter of each shared with its neighbour), joined column by column (ocrkit.decode.windows)."""
    return _read_windowed(backend, preprocess, image, batch_size)[0]


def _read_windowed(
    backend: RecognizerBackend, preprocess: LinePreprocess, image: np.ndarray, batch_size: int
) -> tuple[Reading, np.ndarray]:
    """`read_windowed`, and the joined (T, V) frame logits."""
    window = preprocess.longest
    overlap = window // 4 // preprocess.divisor * preprocess.divisor
    starts = window_starts(image.shape[1], window, overlap)
    parts = []
    for at in range(0, len(starts), batch_size):
        pixels = preprocess.batch([image[:, s : s + window] for s in starts[at : at + batch_size]])
        parts.append(backend.ctc_logits(backend.encode(pixels), pixels.shape[-2:]))
    frames = stitch_columns(np.concatenate(parts), starts, window, image.shape[1], backend.patch)
    return best_path(frames[None], backend.blank_id)[0], frames


def read(
    backend: RecognizerBackend, pixels: np.ndarray, decoding: str, joint: JointSettings | None = None
) -> list[Reading]:
    """One batch with one decoding (attention | ctc | joint; joint needs `joint`). Joint decoding runs the
    decoder only on the lines the gate leaves unsure; the others keep their CTC reading and confidence."""
    return read_batches(backend, [pixels], decoding, joint, decoder_batch=len(pixels))[0]


def read_all(
    backend: RecognizerBackend, pixels: np.ndarray, joint: JointSettings
) -> dict[str, list[Reading]]:
    """{"ctc", "attention", "joint": readings} from one encoder pass, the gate not applied: validation
    scores every line with every decoding."""
    states = backend.encode(pixels)
    logits = backend.ctc_logits(states, pixels.shape[-2:])
    ctc = best_path(logits, backend.blank_id)
    budget = greedy_token_budget(pixels.shape[-1], backend.patch, backend.max_positions)
    n = len(pixels)
    lines = Lines([states[[i]] for i in range(n)], [states.shape[1]] * n, [budget] * n)
    attention, _ = _greedy_lines(backend, lines, n)
    frames = list(log_softmax(logits.astype(np.float64)))
    decoder_ids = [ids for ids, _ in attention]
    picked = _rescore(backend, lines, frames, [ids for ids, _ in ctc], decoder_ids, joint, n)
    return {"ctc": ctc, "attention": attention, "joint": picked}


def _rescore(
    backend: RecognizerBackend,
    lines: Lines,
    frames: list[np.ndarray],
    ctc_ids: list[list[int]],
    decoder_ids: list[list[int]],
    joint: JointSettings,
    limit: int,
    decoder_logprobs: list[float | None] | None = None,
    paths: list[DecoderPath | None] | None = None,
) -> list[Reading]:
    """Score the candidates (both decoders' readings and CTC's second choices) with the decoder (teacher
    forcing, `limit` lines of similar length per pass) and the CTC forward algorithm (log-softmaxed
    `frames` per line), and keep the best per line. `decoder_logprobs[i]`, when known, is the decoder's
    own log p(reading + </s>) of line i from the greedy loop: that candidate is then not teacher-forced
    again. `paths[i]`, when known, is line i's greedy DecoderPath, which bounds every other candidate's
    decoder log-prob: a candidate it already rules out (ocrkit.decode.joint.beyond_reach) is not
    teacher-forced, and a line whose candidates leave no other reading in reach gets no CTC second choices
    (ocrkit.decode.joint.others_may_win). Both exact: every reading and score stays that of teacher-forcing
    every candidate."""
    candidates = distinct_candidates(ctc_ids, decoder_ids)
    own_logprobs = decoder_logprobs or [None] * len(candidates)
    paths = paths or [None] * len(candidates)
    on_frames = ctc_scores_on_frames(frames, candidates, backend.blank_id)
    given = [
        [own_lp if ids == own else None for ids in cands]
        for cands, own, own_lp in zip(candidates, decoder_ids, own_logprobs, strict=True)
    ]
    if joint.alternatives:
        _add_second_choices(backend, frames, candidates, on_frames, given, paths, joint)
    known: list[list[float | None]] = []
    for cands, ctc, line, path in zip(candidates, on_frames, given, paths, strict=True):
        bounds = [None if path is None else path.bound(ids, backend.eos_id) for ids in cands]
        reach = beyond_reach(ctc, line, bounds, joint.ctc_weight)
        known.append([-np.inf if out else lp for lp, out in zip(line, reach, strict=True)])
    forced = [
        [ids for ids, lp in zip(cands, line, strict=True) if lp is None]
        for cands, line in zip(candidates, known, strict=True)
    ]
    forced_lps = _forced_logprobs(backend, lines, forced, limit)
    attention = [
        [lp if lp is not None else next(taught) for lp in line]
        for line, taught in zip(known, map(iter, forced_lps), strict=True)
    ]
    return choose(frames, candidates, attention, backend.blank_id, joint.ctc_weight, on_frames)


def _add_second_choices(
    backend: RecognizerBackend,
    frames: list[np.ndarray],
    candidates: list[list[list[int]]],
    on_frames: list[list[float]],
    given: list[list[float | None]],
    paths: list[DecoderPath | None],
    joint: JointSettings,
) -> None:
    """Extend each line's candidates (and their CTC scores and known decoder log-probs, in place) with CTC
    second choices, on the lines where a reading outside the candidates could still win; their CTC
    likelihoods in one batched pass."""
    open_lines = [
        i
        for i, (ctc, line, path) in enumerate(zip(on_frames, given, paths, strict=True))
        if others_may_win(ctc, line, joint.ctc_weight, None if path is None else path.others_bound())
    ]
    extras = [
        second_choices(frames[i], candidates[i], backend.blank_id, joint.alternatives) for i in open_lines
    ]
    scores = ctc_scores_on_frames([frames[i] for i in open_lines], extras, backend.blank_id)
    for i, extra, extra_scores in zip(open_lines, extras, scores, strict=True):
        candidates[i] += extra
        on_frames[i] += extra_scores
        given[i] += [None] * len(extra)


def _greedy_logprob(reading: Reading, budget: int) -> float | None:
    """log p(reading + </s>) from a greedy reading's confidence (exp of its mean token log-prob, </s>
    counted); None when the line ran out of budget before </s>, or its confidence underflowed."""
    ids, confidence = reading
    if len(ids) >= budget or confidence <= 0.0:
        return None
    return float(np.log(confidence)) * (len(ids) + 1)


def _forced_logprobs(
    backend: RecognizerBackend, lines: Lines, candidates: list[list[list[int]]], limit: int
) -> list[list[float]]:
    """The decoder's log p(candidate + </s>) of every candidate of every line, by teacher forcing."""
    if not any(candidates):
        return [[] for _ in candidates]
    inputs, targets, mask, owners = teacher_forcing_batch(
        candidates, backend.start_id, backend.eos_id, backend.blank_id, backend.max_positions
    )
    totals = np.zeros(len(owners))
    for group in _row_groups(backend, lines.lengths, limit):
        members = set(group)
        rows = [r for r, owner in enumerate(owners) if owner in members]
        if not rows:  # every candidate of these lines known or out of reach
            continue
        # the group's own longest candidate: right padding beyond it is never scored (causal decoder), and
        # a page's longest line padded every receipt line's candidates to its length
        width = int(mask[rows].sum(1).max())
        states, cross_mask = _padded(backend, lines, [owners[r] for r in rows])
        logits = backend.score(states, inputs[rows, :width], cross_mask)
        totals[rows] = row_logprobs(logits, targets[rows, :width], mask[rows, :width])
    return per_line(totals, owners, len(candidates))
