"""Reading line crops with any recognizer backend: attention (greedy), CTC best path, or joint rescoring.

The torch and ONNX recognizers differ only in how they run the networks; everything else (batching,
which decoder reads which line, the gate, the candidates and the choice) lives here once, so the two
backends read every line the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ocrkit.blas import single_thread_blas
from ocrkit.buckets import same_shape_batches
from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.ctc import Decoding, best_path, log_softmax
from ocrkit.decode.greedy import DecoderSteps, greedy, pad_lengths
from ocrkit.decode.joint import (
    JointSettings,
    choose,
    joint_candidates,
    sequence_logprobs,
    teacher_forcing_batch,
)
from ocrkit.decode.windows import stitch_columns, window_starts
from ocrkit.line_preprocess import LinePreprocess

Reading = tuple[list[int], float]  # token ids (no special tokens) and a confidence in 0..1


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

    def encode(self, pixels: np.ndarray) -> Any:
        """(B, 3, H, W) float32 pixels → encoder states."""

    def ctc_logits(self, states: Any, pixel_shape: tuple[int, int]) -> np.ndarray:
        """The CTC head's (B, T, V) frame logits for states of H×W inputs."""

    def pad_states(self, states: list[Any]) -> Any:
        """States of several batches, (n_i, N_i, D) each → one (Σn_i, max N_i, D) batch, zero-padded."""

    def score(self, states: Any, input_ids: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Teacher forcing: decoder logits (N, L, V) for input ids (N, L), row i attending to states[i]."""


def read_crops(
    backend: RecognizerBackend,
    preprocess: LinePreprocess,
    crops: Sequence[np.ndarray],
    decoding: str,
    joint: JointSettings | None = None,
    batch_size: int = 16,
) -> list[Reading]:
    """Line crops → readings in input order. The encoder reads batches of identical padded shape (it
    reads batch padding badly, see ocrkit.buckets.same_shape_batches); the decoder then reads the lines
    of all those batches together (`read_batches`). Lines wider than the preprocessing's `longest` (kept at
    the model's height by `windowed` settings) are read by the CTC head in overlapping windows, whatever
    the decoding; a model read without its CTC head gets them shrunk to fit instead."""
    images = [preprocess.apply(c) for c in crops]
    wide = [i for i, im in enumerate(images) if im.shape[1] > preprocess.longest]
    if wide and not Decoding(decoding).reads_head:
        for i in wide:
            images[i] = preprocess.apply(crops[i], fit_width=True)
        wide = []
    readings: list[Reading] = [([], 0.0)] * len(images)
    with single_thread_blas():
        windowed = set(wide)
        fitting = [i for i in range(len(images)) if i not in windowed]
        batches = [
            [fitting[j] for j in batch]
            for batch in same_shape_batches([images[i].shape[:2] for i in fitting], batch_size)
        ]
        pixels = [preprocess.batch([images[i] for i in rows]) for rows in batches]
        for rows, batch_readings in zip(
            batches, read_batches(backend, pixels, decoding, joint, 4 * batch_size), strict=True
        ):
            for i, reading in zip(rows, batch_readings, strict=True):
                readings[i] = reading
        for i in wide:
            readings[i] = read_windowed(backend, preprocess, images[i], batch_size)
    return readings


def read_batches(
    backend: RecognizerBackend,
    batches: list[np.ndarray],
    decoding: str,
    joint: JointSettings | None = None,
    decoder_batch: int = 64,
) -> list[list[Reading]]:
    """Several pixel batches (each of one shape) with one decoding → readings per batch. Every line the
    decoder must read (all of them for attention, the gate's unsure ones for joint) joins one greedy
    loop, up to `decoder_batch` lines at a time, lines of similar length together; a backend without the
    cross-attention mask gets one loop per encoder length instead."""
    if decoding == "joint" and joint is None:
        raise ValueError("joint decoding needs JointSettings")
    states = [backend.encode(pixels) for pixels in batches]
    picked: list[list[Reading]] = []
    logits: list[np.ndarray] = []
    pending: list[tuple[int, int]] = []  # (batch, line) the decoder reads
    for b, (pixels, encoded) in enumerate(zip(batches, states, strict=True)):
        if decoding == "attention":
            picked.append([([], 0.0)] * len(pixels))
            pending += [(b, i) for i in range(len(pixels))]
            continue
        logits.append(backend.ctc_logits(encoded, pixels.shape[-2:]))
        picked.append(best_path(logits[b], backend.blank_id))
        if decoding == "joint":
            pending += [(b, i) for i in joint.unsure([conf for _, conf in picked[b]])]
    widths = [pixels.shape[-1] for pixels in batches]
    decoded = _greedy_lines(backend, states, widths, pending, decoder_batch)
    if decoding == "attention":
        for (b, i), reading in decoded.items():
            picked[b][i] = reading
        return picked
    for b in range(len(batches)):
        unsure = [i for bb, i in pending if bb == b]
        if not unsure:
            continue
        ctc_ids = [picked[b][i][0] for i in unsure]
        decoder_ids = [decoded[(b, i)][0] for i in unsure]
        rescored = _rescore(backend, states[b][unsure], logits[b][unsure], ctc_ids, decoder_ids, joint)
        for i, pick in zip(unsure, rescored, strict=True):
            picked[b][i] = pick
    return picked


def _greedy_lines(
    backend: RecognizerBackend,
    states: list[Any],
    widths: list[int],
    lines: list[tuple[int, int]],
    decoder_batch: int,
) -> dict[tuple[int, int], Reading]:
    """Greedy readings of (batch, line) pairs, each within its own batch width's token budget."""
    length = {key: states[key[0]].shape[1] for key in lines}
    ordered = sorted(lines, key=lambda key: length[key])
    if backend.masks_encoder:
        chunks = [ordered[at : at + decoder_batch] for at in range(0, len(ordered), decoder_batch)]
    else:  # no mask: only lines with states of one length share a loop
        chunks = [[k for k in ordered if length[k] == n] for n in dict.fromkeys(length[k] for k in ordered)]
    out: dict[tuple[int, int], Reading] = {}
    for chunk in chunks:
        padded = backend.pad_states([states[b][[i]] for b, i in chunk])
        lengths = [length[key] for key in chunk]
        mask = pad_lengths(lengths) if backend.masks_encoder else None
        budgets = [greedy_token_budget(widths[b], backend.patch, backend.max_positions) for b, _ in chunk]
        ids, confidences = greedy(backend, padded, np.array(budgets), mask)
        out.update(zip(chunk, zip(ids, confidences, strict=True), strict=True))
    return out


def read_windowed(
    backend: RecognizerBackend, preprocess: LinePreprocess, image: np.ndarray, batch_size: int = 16
) -> Reading:
    """One letterboxed line wider than `preprocess.longest`: CTC over overlapping windows of that width
    (a quarter of each shared with its neighbour), joined column by column (ocrkit.decode.windows)."""
    window = preprocess.longest
    overlap = window // 4 // preprocess.divisor * preprocess.divisor
    starts = window_starts(image.shape[1], window, overlap)
    parts = []
    for at in range(0, len(starts), batch_size):
        pixels = preprocess.batch([image[:, s : s + window] for s in starts[at : at + batch_size]])
        parts.append(backend.ctc_logits(backend.encode(pixels), pixels.shape[-2:]))
    frames = stitch_columns(np.concatenate(parts), starts, window, image.shape[1], backend.patch)
    return best_path(frames[None], backend.blank_id)[0]


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
    decoder_ids, decoder_conf = _greedy(backend, states, pixels.shape[-1])
    picked = _rescore(backend, states, logits, [ids for ids, _ in ctc], decoder_ids, joint)
    return {"ctc": ctc, "attention": list(zip(decoder_ids, decoder_conf, strict=True)), "joint": picked}


def _greedy(backend: RecognizerBackend, states: Any, width: int) -> tuple[list[list[int]], list[float]]:
    budget = greedy_token_budget(width, backend.patch, backend.max_positions)
    return greedy(backend, states, np.full(len(states), budget))


def _rescore(
    backend: RecognizerBackend,
    states: Any,
    logits: np.ndarray,
    ctc_ids: list[list[int]],
    decoder_ids: list[list[int]],
    joint: JointSettings,
) -> list[Reading]:
    """Score the candidates (both decoders' readings and CTC's second choices) with the decoder (teacher
    forcing) and the CTC forward algorithm, and keep the best per line."""
    frames = log_softmax(logits.astype(np.float64))
    candidates = joint_candidates(frames, ctc_ids, decoder_ids, backend.blank_id, joint.alternatives)
    inputs, targets, mask, owners = teacher_forcing_batch(
        candidates, backend.start_id, backend.eos_id, backend.blank_id, backend.max_positions
    )
    scored = backend.score(states[owners], inputs)
    attention = sequence_logprobs(scored, targets, mask, owners, len(candidates))
    return choose(frames, candidates, attention, backend.blank_id, joint.ctc_weight)
