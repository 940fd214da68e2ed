"""Cutting detected line boxes out of a page: shared by `ocrkit detect --crops` and the OCR pipeline,
so the crops a user saves are exactly the crops the recognizer reads. numpy only."""

from __future__ import annotations

import numpy as np

# Of the line height, added around each detected box before recognition. 0: the shipped detector's boxes
# already carry the annotation margin it was trained on (synth LABEL_PAD); on the 64 synthetic validation
# pages page CER was 0.431 / 0.465 / 0.525 with 0 / 0.05 / 0.15 (docs/design.md). Boxes that end inside a
# line's first or last letter (one in twenty on receipts) are not worth a margin either: widening every
# crop by 0.15 / 0.3 of its height at both ends moved 49 validation receipts' page CER 0.0932 → 0.0920 /
# 0.0923 (detector 0.8.0, recognizer 0.16.0).
CROP_MARGIN = 0.0
# The "framing" a lines.jsonl record of `ocrkit detect --crops` carries: `ocrkit recognize` reads such
# crops as cut, as the pipeline does (cutting detected receipt lines to their densest rows cost the
# development receipts page CER 0.067 -> 0.081), and cuts other crops, framed by other tools, to their line.
DETECTED_FRAMING = "detected"


def crop_lines(image: np.ndarray, boxes: np.ndarray, margin: float = CROP_MARGIN) -> list[np.ndarray]:
    """Cut each xyxy box (plus a margin proportional to its height) out of the page."""
    windows = crop_windows(image.shape, boxes, margin)
    return [image[top:bottom, left:right] for left, top, right, bottom in windows]


def crop_windows(
    shape: tuple[int, ...], boxes: np.ndarray, margin: float = CROP_MARGIN
) -> list[tuple[int, int, int, int]]:
    """The pixel window (left, top, right, bottom) `crop_lines` cuts for each box of a page of `shape`:
    where a crop's pixels sit on the page, so positions read on a crop map back to it."""
    h, w = shape[:2]
    windows = []
    for x0, y0, x1, y1 in np.asarray(boxes, np.float32).reshape(-1, 4):
        pad = margin * max(1.0, y1 - y0)
        left, top = int(max(0, np.floor(x0 - pad))), int(max(0, np.floor(y0 - pad)))
        right, bottom = int(min(w, np.ceil(x1 + pad))), int(min(h, np.ceil(y1 + pad)))
        windows.append((left, top, max(right, left + 1), max(bottom, top + 1)))
    return windows
