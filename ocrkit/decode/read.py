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


class RecognizerBackend(Protocol):
    """The networks of a recognizer, run by torch or onnxruntime.

    Encoder states stay in the backend's own type (a torch tensor, a numpy array): decoding only hands
    them back, or selects lines of them with a list of row indices (`states[rows]`)."""

    start_id: int  # the decoder's start token
    eos_id: int
    blank_id: int  # the CTC blank, also the decoder's padding token
    max_positions: int  # the decoder's learned positions
    patch: int  # the ViT patch size in pixels

    def encode(self, pixels: np.ndarray) -> Any:
        """(B, 3, H, W) float32 pixels → encoder states."""

    def ctc_logits(self, states: Any, pixel_shape: tuple[int, int]) -> np.ndarray:
        """The CTC head's (B, T, V) frame logits for states of H×W inputs."""

    def greedy(self, states: Any, max_new_tokens: int) -> tuple[list[list[int]], list[float]]:
        """Greedy decoding → (token ids without </s>, exp(mean token log-prob, </s> included)) per line."""

    def score(self, states: Any, input_ids: np.ndarray) -> np.ndarray:
        """Teacher forcing: decoder logits (N, L, V) for input ids (N, L), row i attending to states[i]."""


def read_crops(
    backend: RecognizerBackend,
    preprocess: LinePreprocess,
    crops: Sequence[np.ndarray],
    decoding: str,
    joint: JointSettings | None = None,
    batch_size: int = 16,
) -> list[Reading]:
    """Line crops → readings in input order, batched by identical padded shape (the model reads batch
    padding badly, see ocrkit.buckets.same_shape_batches). Lines wider than the preprocessing's `longest`
    (kept at the model's height by `windowed` settings) are read by the CTC head in overlapping windows,
    whatever the decoding; a model read without its CTC head gets them shrunk to fit instead."""
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
        for batch in same_shape_batches([images[i].shape[:2] for i in fitting], batch_size):
            rows = [fitting[j] for j in batch]
            pixels = preprocess.batch([images[i] for i in rows])
            for i, reading in zip(rows, read(backend, pixels, decoding, joint), strict=True):
                readings[i] = reading
        for i in wide:
            readings[i] = read_windowed(backend, preprocess, images[i], batch_size)
    return readings


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
    states = backend.encode(pixels)
    if decoding == "attention":
        ids, confidences = _greedy(backend, states, pixels.shape[-1])
        return list(zip(ids, confidences, strict=True))
    logits = backend.ctc_logits(states, pixels.shape[-2:])
    picked = best_path(logits, backend.blank_id)
    if decoding == "ctc":
        return picked
    if joint is None:
        raise ValueError("joint decoding needs JointSettings")
    unsure = joint.unsure([conf for _, conf in picked])
    if unsure:
        decoder_ids, _ = _greedy(backend, states[unsure], pixels.shape[-1])
        ctc_ids = [picked[i][0] for i in unsure]
        rescored = _rescore(backend, states[unsure], logits[unsure], ctc_ids, decoder_ids, joint)
        for i, pick in zip(unsure, rescored, strict=True):
            picked[i] = pick
    return picked


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
    return backend.greedy(states, greedy_token_budget(width, backend.patch, backend.max_positions))


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
