"""Line boxes whose left or right end falls inside their line's print, grown to where the print stops.

Why: a detected box that ends inside a word costs its letters ("MR. D.I.Y." read ". D.I.Y.", "LOT"
read "OT"): on the development receipts one box in twenty ends a third of a line height or more inside
its annotated line. Growing every box by a fixed margin reads other boxes worse (a neighbour's ink), so
only an end with ink at or just beyond it moves, and only as far as the ink goes: until a blank run at
least GAP line heights wide, which is wider than the gaps between letters and narrower than those
between the words and columns annotators box apart, and never into another box of the same row.
Print that is not seen to stop within REACH (a woodcut, a border, text running into a neighbour's
box) moves nothing: on early printed pages such ends grew into ornaments the recognizer then read as
long, confident text.
"""

from __future__ import annotations

import cv2
import numpy as np

GAP = 0.3  # a blank run of at least this many box heights ends the line's print
REACH = 1.5  # an end moves at most this many box heights
ROWS = (0.3, 0.7)  # the rows of a box whose ink counts: on tight receipts its neighbours reach 0.3 into it
PAD = 0.05  # paper kept beyond the ink reached, in box heights (the detector's own labels keep 0.05 em)
SPECK = 0.1  # a column holding fewer ink pixels than this share of the rows (and fewer than 2) is blank
# boxes share a row when they overlap vertically by at least this share of the lower one's height (the
# overlap half of ocrkit.pages.reading_order.same_row, without its centre test: a wall too many only
# stops a box sooner)
ROW_OVERLAP = 0.5
MIN_HEIGHT = 6  # boxes lower than this many pixels stay as they are: too few rows to tell ink from noise


def grow_to_ink(gray: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The xyxy `boxes` (page pixels of the 2-D uint8 page `gray`) with each horizontal box's ends moved
    out to where its print stops (see the module's docstring); the other boxes as they are."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    grown = boxes.copy()
    left_walls, right_walls = _walls(boxes)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        height = y1 - y0
        if height < MIN_HEIGHT or x1 - x0 < height:
            continue
        reach, gap, pad = REACH * height, max(2, round(GAP * height)), PAD * height
        left_wall, right_wall = float(left_walls[i]), float(right_walls[i])
        # the print must be seen to stop: a whole gap beyond the farthest an end may move
        left = int(max(0.0, x0 - reach - gap, left_wall))
        right = int(min(gray.shape[1], x1 + reach + gap, right_wall))
        window = gray[max(0, int(y0)) : min(gray.shape[0], int(np.ceil(y1))), left:right]
        inked = _inked_columns(window)
        if inked is None:
            continue
        start, end = int(x0) - left, int(np.ceil(x1)) - left
        new_start = _print_start(inked, start, end, gap)
        new_end = len(inked) - _print_start(inked[::-1], len(inked) - end, len(inked) - start, gap)
        if start - reach <= new_start < start:
            grown[i, 0] = max(left + new_start - pad, float(left))
        if end < new_end <= end + reach:
            grown[i, 2] = min(left + new_end + pad, float(right))
    return grown


def _walls(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far each box may grow: to the nearest end of another box of its row on either side, and not
    at all on a side where such a box already overlaps it (0 and infinity where there is none)."""
    heights = boxes[:, 3] - boxes[:, 1]
    tops, bottoms = boxes[:, 1], boxes[:, 3]
    shared = np.minimum(bottoms[:, None], bottoms[None, :]) - np.maximum(tops[:, None], tops[None, :])
    same_row = shared >= ROW_OVERLAP * np.minimum(heights[:, None], heights[None, :])
    np.fill_diagonal(same_row, False)
    before = same_row & (boxes[None, :, 2] < boxes[:, None, 2])  # [i, j]: j ends before i does
    after = same_row & (boxes[None, :, 0] > boxes[:, None, 0])  # [i, j]: j starts after i does
    nearest_end = np.where(before, boxes[None, :, 2], -np.inf).max(axis=1, initial=-np.inf)
    nearest_start = np.where(after, boxes[None, :, 0], np.inf).min(axis=1, initial=np.inf)
    left = np.where(before.any(axis=1), np.minimum(nearest_end, boxes[:, 0]), 0.0)
    right = np.where(after.any(axis=1), np.maximum(nearest_start, boxes[:, 2]), np.inf)
    return left, right


def _inked_columns(window: np.ndarray) -> np.ndarray | None:
    """Which columns of a box's rows (a 2-D uint8 window) hold ink in its middle rows (Otsu over the
    whole window, whose paper between lines tells print from ground; light print on dark inverted), or
    None where no ink stands out."""
    if window.size == 0:
        return None
    darkest, lightest, _, _ = cv2.minMaxLoc(window)
    if lightest - darkest < 48:
        return None
    level, mask = cv2.threshold(window, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    if _median_at_most(window, cv2.countNonZero(mask), level):  # light print on a dark ground
        mask = 1 - mask
    rows = mask[int(ROWS[0] * len(mask)) : int(np.ceil(ROWS[1] * len(mask)))]
    return rows.sum(axis=0) >= max(2, round(SPECK * len(rows)))


def _median_at_most(window: np.ndarray, at_most: int, level: float) -> bool:
    """Whether the median gray of `window` (the ground) is at most `level`, given how many of its pixels
    are: np.median's answer without sorting the window (sorting took most of the step's time)."""
    half = window.size // 2
    if window.size % 2 or at_most != half:
        return at_most > half
    # the two middle values lie either side of the level: their mean decides
    return int(window[window <= level].max()) + int(window[window > level].min()) <= 2 * level


def _print_start(inked: np.ndarray, start: int, end: int, gap: int) -> int:
    """The first column of the print that reaches the box's start (column `start`) from within it:
    the box's first inked column, followed leftwards while no blank run of `gap` columns intervenes.
    Returns `start` where the box holds no ink, its print stops before its start or is not seen to stop
    at all."""
    inside = np.flatnonzero(inked[start:end])
    if not len(inside):
        return start
    column, blank = start + int(inside[0]), 0
    first = column
    while column > 0 and blank < gap:
        column -= 1
        if inked[column]:
            first, blank = column, 0
        else:
            blank += 1
    if blank < gap:  # the print runs on to the window's edge (a picture, a border, a neighbour's box)
        return start
    return min(first, start)
