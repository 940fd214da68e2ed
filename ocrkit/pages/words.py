"""Words of a read line, placed on the page: the text split at spaces, each word boxed from where the
recognizer's CTC alignment put its characters (ocrkit.decode.read.read_crops_placed).

numpy and OpenCV only (the torch-free runtime places words too).

A CTC head emits a character on one or two frames near the middle of its glyph, so a character's
aligned place is its centre, not its extent: a word runs from half a character pitch before its first
character's centre to half a pitch after its last one, clipped to the line's box. Given the line's pixels,
each word is then shrunk to its ink (dark on light or light on dark, split by Otsu's threshold), so its
box holds the word's print as a word box in hOCR or ALTO does, not the line's margins.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ocrkit.decode.read import PlacedReading
from ocrkit.images.preprocess import to_rgb_uint8
from ocrkit.pages.document import Word


@dataclass(frozen=True)
class PlacedText:
    """A line as a recognizer read it: its text, confidence, the text cut as its tokens read it
    (`glyphs`, joined = `text`), and per glyph the x of its centre in the crop and the CTC probability it
    was read with (None where the model gives no positions)."""

    text: str
    score: float
    glyphs: list[str]
    centres: list[float] | None = None
    confidences: list[float] | None = None


def placed_text(reading: PlacedReading, text: str, glyph_table: list[str]) -> PlacedText:
    """A recognizer's placed reading with its decoded `text`; `glyph_table[id]` is the text of one token
    (empty for special tokens). Positions are dropped where the glyphs do not spell the text."""
    glyphs = [glyph_table[i] if 0 <= i < len(glyph_table) else "" for i in reading.ids]
    if reading.centres is None or "".join(glyphs) != text:
        return PlacedText(text, reading.confidence, [text])
    kept = [k for k, g in enumerate(glyphs) if g]
    return PlacedText(
        text,
        reading.confidence,
        [glyphs[k] for k in kept],
        [float(reading.centres[k]) for k in kept],
        None if reading.confidences is None else [float(reading.confidences[k]) for k in kept],
    )


def place_words(
    placed: PlacedText,
    box: list[float],
    crop_left: float,
    crop: np.ndarray | None = None,
    crop_top: float = 0.0,
) -> list[Word]:
    """The words of one line whose crop starts at page x `crop_left`, boxed inside the line's xyxy
    `box`; with the `crop` (its pixels, starting at page y `crop_top`), each box shrunk to its ink.
    Without positions, characters are spread evenly over the box (what a reader of the text alone
    would guess)."""
    x0, y0, x1, y1 = (float(v) for v in box)
    xs, probs = _character_places(placed, x0, x1, crop_left)
    chars = "".join(placed.glyphs)
    if not chars.strip():
        return []
    pitch = _pitch(chars, xs, x1 - x0)
    words = []
    at = 0
    for token in chars.split(" "):
        start, at = at, at + len(token) + 1
        if not token.strip():
            continue
        centre = xs[start : start + len(token)]
        left = max(x0, float(centre.min()) - pitch / 2)
        right = min(x1, float(centre.max()) + pitch / 2)
        score = float(np.mean(probs[start : start + len(token)]))
        if words and words[-1].bbox[2] > left:  # half pitches that overlap: meet halfway
            middle = (words[-1].bbox[2] + left) / 2
            words[-1].bbox[2], left = middle, middle
        words.append(Word([left, y0, max(right, left + 1.0), y1], token, score))
    if crop is not None and crop.size:
        ink = ink_mask(crop)
        for word in words:
            word.bbox = _to_ink(word.bbox, ink, crop_left, crop_top)
    return words


def ink_mask(crop: np.ndarray) -> np.ndarray:
    """Where a line crop has print: Otsu's threshold on its gray levels, the smaller side taken as ink
    (a line holds less print than paper, whichever is darker)."""
    gray = cv2.cvtColor(to_rgb_uint8(crop), cv2.COLOR_RGB2GRAY)
    _, dark = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    ink = dark.astype(bool)
    return ~ink if ink.mean() > 0.5 else ink


def _to_ink(bbox: list[float], ink: np.ndarray, crop_left: float, crop_top: float) -> list[float]:
    """`bbox` shrunk to the ink inside it: rows holding at least 5 % of the word's busiest row (so a
    neighbouring line's descender tips do not stretch it), then the columns with ink in those rows."""
    x0, y0, x1, y1 = bbox
    c0 = max(0, int(np.floor(x0 - crop_left)))
    c1 = min(ink.shape[1], int(np.ceil(x1 - crop_left)))
    r0 = max(0, int(np.floor(y0 - crop_top)))
    r1 = min(ink.shape[0], int(np.ceil(y1 - crop_top)))
    patch = ink[r0:r1, c0:c1]
    counts = patch.sum(1)
    if not counts.any():
        return bbox
    rows = np.flatnonzero(counts >= max(1.0, 0.05 * counts.max()))
    top, bottom = rows[0], rows[-1] + 1
    cols = np.flatnonzero(patch[top:bottom].any(0))
    return [
        max(x0, float(crop_left + c0 + cols[0])),
        max(y0, float(crop_top + r0 + top)),
        min(x1, float(crop_left + c0 + cols[-1] + 1)),
        min(y1, float(crop_top + r0 + bottom)),
    ]


def _character_places(
    placed: PlacedText, x0: float, x1: float, crop_left: float
) -> tuple[np.ndarray, np.ndarray]:
    """Page x of every character's centre and its probability: a glyph's characters share its place."""
    n = sum(len(g) for g in placed.glyphs)
    if placed.centres is None or len(placed.centres) != len(placed.glyphs):
        xs = x0 + (np.arange(n) + 0.5) * (x1 - x0) / max(n, 1)
        return xs, np.full(n, placed.score)
    confidences = placed.confidences or [placed.score] * len(placed.glyphs)
    xs = np.array([crop_left + c for g, c in zip(placed.glyphs, placed.centres, strict=True) for _ in g])
    probs = np.array([p for g, p in zip(placed.glyphs, confidences, strict=True) for _ in g])
    return xs, probs


def _pitch(chars: str, xs: np.ndarray, width: float) -> float:
    """The line's character pitch: over its words of two characters or more, the distance from first to
    last centre per step between them (several narrow characters can share one frame column, so single
    steps are often 0); the box width per character where no word has two."""
    span = steps = 0.0
    at = 0
    for token in chars.split(" "):
        if len(token) > 1:
            span += float(xs[at + len(token) - 1] - xs[at])
            steps += len(token) - 1
        at += len(token) + 1
    return span / steps if span > 0 else width / max(len(chars), 1)
