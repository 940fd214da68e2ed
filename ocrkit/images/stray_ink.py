"""Print standing in the row of a detected line that no box holds, boxed for the recognizer to read.

Why: the detector misses short fields standing apart in a row — a receipt's quantity column ("2",
"4"), a tax code ("SR"), a column heading ("QTY") — whose row it finds. Only rows the detector boxed
in two or more pieces are searched, as tables and forms are: a row of one box is running text, whose
print beyond the box is its own or a note in the margin (on handwritten pages, strokes there read as
stray digits). Each box of such a row is searched beside it (up to the next box of its row, or up to
REACH line heights beyond the row's first and last) for runs of ink in the line's middle rows, which are
letters of that row and not a neighbour's ascenders or descenders. Ink within GAP of a box's end is
that box's own print cut short (ocrkit.images.box_ends grows such ends), so a run must stand clear of
both boxes beside it.
Whether a run is text is the recognizer's to say: the pipeline keeps only what it reads as text, sure.
"""

from __future__ import annotations

import cv2
import numpy as np

from ocrkit.images import boxes as B
from ocrkit.images.box_ends import ROW_OVERLAP, ROWS, SPECK

GAP = 0.6  # a run of ink must stand at least this many line heights clear of the boxes beside it
WORD_GAP = 0.8  # blank runs narrower than this (line heights) join ink into one field
REACH = 8.0  # beyond a row's first or last box, search at most this many line heights
MIN_WIDTH = 0.25  # runs narrower than this many line heights are specks
MAX_WIDTH = 12.0  # and wider than this, rules or borders, not a missed field
MIN_HEIGHT = 10  # lines lower than this many pixels are not searched: too few rows to tell ink from noise
MAX_FILL = 0.5  # runs inked over more than this share of their box are a dark border or a picture
MAX_COVERED = 0.3  # runs with more of their box under a detected line's are that line's
MIN_CONTRAST = 48  # a window whose gray values span less than this holds no print to tell


def stray_print(gray: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(k, 4) xyxy boxes around print in the rows of the horizontal `boxes` (page pixels of the 2-D
    uint8 page `gray`) that none of them holds (see the module's docstring); each spans its run of ink
    and the rows of the line beside it."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    found: list[list[float]] = []
    for i, before, after in _row_neighbours(boxes):
        x0, y0, x1, y1 = boxes[i]
        height = y1 - y0
        if height < MIN_HEIGHT or x1 - x0 < height or (before is None and after is None):
            continue
        reach = REACH * height
        spans = [(x1, after if after is not None else min(gray.shape[1], x1 + reach))]
        if before is None:
            spans.append((max(0.0, x0 - reach), x0))
        for start, end in spans:
            found.extend(_runs(gray, boxes[i], float(start), float(end), (x0, x1)))
    runs = _distinct(np.array(found, np.float32).reshape(-1, 4))
    if not len(runs) or not len(boxes):
        return runs
    # a run reaching into a line of another row is that line's ascenders or descenders
    covered = (B.intersection(runs, boxes) / np.maximum(B.area(runs), 1e-6)[:, None]).max(axis=1)
    return runs[covered < MAX_COVERED]


def _row_neighbours(boxes: np.ndarray) -> list[tuple[int, float | None, float | None]]:
    """For each box: its index, where the nearest box of its row before it ends and where the nearest
    after it starts (None where there is none); a box overlapped by one of its row has no gap there."""
    heights = boxes[:, 3] - boxes[:, 1]
    tops, bottoms = boxes[:, 1], boxes[:, 3]
    shared = np.minimum(bottoms[:, None], bottoms[None, :]) - np.maximum(tops[:, None], tops[None, :])
    same_row = shared >= ROW_OVERLAP * np.minimum(heights[:, None], heights[None, :])
    np.fill_diagonal(same_row, False)
    out = []
    for i, x0 in enumerate(boxes[:, 0]):
        row = np.flatnonzero(same_row[i])
        ends_before = [boxes[j, 2] for j in row if boxes[j, 0] < x0]
        starts_after = [boxes[j, 0] for j in row if boxes[j, 0] >= x0]
        before = float(max(ends_before)) if ends_before else None
        after = float(min(starts_after)) if starts_after else None
        out.append((i, before, after))
    return out


def _runs(
    gray: np.ndarray, box: np.ndarray, start: float, end: float, own: tuple[float, float]
) -> list[list[float]]:
    """Boxes around the runs of ink in the line's middle rows between columns `start` and `end` (the
    line's own columns `own` give Otsu's threshold its print) that stand GAP clear of both: a run
    reaching nearer is the print of the box beside it, or runs on beyond the search."""
    _, y0, _, y1 = box
    height = y1 - y0
    clear = GAP * height
    if end - start < 2 * clear + MIN_WIDTH * height:
        return []
    top, bottom = max(0, int(y0)), min(gray.shape[0], int(np.ceil(y1)))
    left = max(0, int(min(start, own[0])))
    window = gray[top:bottom, left : min(gray.shape[1], int(np.ceil(max(end, own[1]))))]
    if window.size == 0:
        return []
    darkest, lightest, _, _ = cv2.minMaxLoc(window)
    if lightest - darkest < MIN_CONTRAST:
        return []
    _, mask = cv2.threshold(window, 0, 1, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    if 2 * cv2.countNonZero(mask) > mask.size:  # light print on a dark ground
        mask = 1 - mask
    rows = mask[int(ROWS[0] * len(mask)) : int(np.ceil(ROWS[1] * len(mask)))]
    inked = rows.sum(axis=0) >= max(2, round(SPECK * len(rows)))
    lo, hi = max(0, int(np.ceil(start)) - left), max(0, int(end) - left)
    runs = []
    for first, last in _ink_runs(inked[lo:hi], max(1, round(WORD_GAP * height))):
        width = last - first
        fill = float(mask[:, lo + first : lo + last].mean())
        if first < clear or last > hi - lo - clear or fill > MAX_FILL:
            continue
        if MIN_WIDTH * height <= width <= MAX_WIDTH * height:
            pad = 0.1 * height
            runs.append([left + lo + first - pad, float(y0), left + lo + last + pad, float(y1)])
    return runs


def _ink_runs(inked: np.ndarray, gap: int) -> list[tuple[int, int]]:
    """[first, last) column ranges of inked columns, blank runs narrower than `gap` joined."""
    columns = np.flatnonzero(inked)
    if not len(columns):
        return []
    breaks = np.flatnonzero(np.diff(columns) > gap)
    firsts = np.concatenate([[columns[0]], columns[breaks + 1]])
    lasts = np.concatenate([columns[breaks], [columns[-1]]]) + 1
    return [(int(a), int(b)) for a, b in zip(firsts, lasts, strict=True)]


def _distinct(found: np.ndarray) -> np.ndarray:
    """The boxes found, each run once: a run seen from two lines of a row is kept from the first."""
    shared = B.intersection(found, found) / np.maximum(np.minimum.outer(B.area(found), B.area(found)), 1e-6)
    kept: list[int] = []
    for i in range(len(found)):
        if all(shared[i, j] < 0.5 for j in kept):
            kept.append(i)
    return found[kept]
