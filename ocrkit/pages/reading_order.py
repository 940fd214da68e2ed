"""Reading order for line boxes: columns left-to-right, and within a column rows top-to-bottom.

A region is split at a vertical gutter only when both sides look like text columns (several lines,
each side wide); receipts and tables (narrow price/number columns) are read row by row instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ROW_OVERLAP = 0.5  # two boxes share a row when they overlap vertically by ≥ half the smaller height
MIN_COLUMN_LINES = 3
MIN_COLUMN_WIDTH = 0.3  # each side's median line width, as a fraction of the region's width


def same_row(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether two xyxy boxes share a row: they overlap vertically by ≥ ROW_OVERLAP of the smaller height,
    and each one's vertical centre lies within the other's span. Detected boxes are taller than their ink
    and pages are skewed, so a short box between two lines can overlap half its height with both; by
    overlap alone it joined them into one row, read interleaved. With the centre test, page CER on the
    real validation pages (detected lines) went from 0.297 to 0.219 on typewritten letters and from 0.234
    to 0.214 on books; receipts and handwriting improved by less than 0.002."""
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    if overlap < ROW_OVERLAP * max(1e-6, min(a[3] - a[1], b[3] - b[1])):
        return False
    a_mid, b_mid = (a[1] + a[3]) / 2, (b[1] + b[3]) / 2
    return b[1] <= a_mid <= b[3] and a[1] <= b_mid <= a[3]


def group_rows(boxes: np.ndarray, idx: list[int]) -> list[list[int]]:
    """Rows of `idx` (top to bottom), each left to right; a box joins a row it overlaps vertically."""
    rows: list[list[int]] = []
    for i in sorted(idx, key=lambda k: (boxes[k, 1] + boxes[k, 3]) / 2):
        for row in rows:
            if any(same_row(boxes[i], boxes[j]) for j in row):
                row.append(i)
                break
        else:
            rows.append([i])
    rows.sort(key=lambda r: float(np.mean([(boxes[k, 1] + boxes[k, 3]) / 2 for k in r])))
    return [sorted(r, key=lambda k: boxes[k, 0]) for r in rows]


def _gaps(starts: np.ndarray, ends: np.ndarray) -> list[tuple[float, float]]:
    """Uncovered intervals between the union of [start, end) intervals."""
    order = np.argsort(starts)
    gaps, reach = [], ends[order[0]]
    for k in order[1:]:
        if starts[k] > reach:
            gaps.append((float(reach), float(starts[k])))
        reach = max(reach, ends[k])
    return gaps


def _column_split(boxes: np.ndarray, idx: list[int]) -> tuple[list[int], list[int]] | None:
    b = boxes[idx]
    heights = np.median(b[:, 3] - b[:, 1])
    region_width = b[:, 2].max() - b[:, 0].min()
    for lo, hi in sorted(_gaps(b[:, 0], b[:, 2]), key=lambda g: g[0] - g[1]):
        if hi - lo < 0.5 * heights:
            continue
        left = [i for i in idx if boxes[i, 2] <= lo]
        right = [i for i in idx if boxes[i, 0] >= hi]
        sides_ok = all(
            len(side) >= MIN_COLUMN_LINES
            and np.median(boxes[side, 2] - boxes[side, 0]) >= MIN_COLUMN_WIDTH * region_width
            for side in (left, right)
        )
        if sides_ok:
            return left, right
    return None


def _split_at_widest_gap(boxes: np.ndarray, idx: list[int]) -> tuple[list[int], list[int]] | None:
    """Cut a region at its widest horizontal whitespace (classic XY-cut: one cut, then recurse)."""
    b = boxes[idx]
    gaps = _gaps(b[:, 1], b[:, 3])
    if not gaps:
        return None
    lo, hi = max(gaps, key=lambda g: g[1] - g[0])
    return [i for i in idx if boxes[i, 3] <= lo], [i for i in idx if boxes[i, 1] >= hi]


def _order(boxes: np.ndarray, idx: list[int]) -> list[list[int]]:
    if len(idx) <= 1:
        return [idx] if idx else []
    split = _column_split(boxes, idx)
    if split is not None:
        return _order(boxes, split[0]) + _order(boxes, split[1])
    cut = _split_at_widest_gap(boxes, idx)
    if cut is not None:
        return _order(boxes, cut[0]) + _order(boxes, cut[1])
    return group_rows(boxes, idx)


def reading_order_rows(boxes: np.ndarray) -> list[list[int]]:
    """Indices of xyxy boxes grouped into rows, rows in reading order."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    return _order(boxes, list(range(len(boxes))))


def reading_order(boxes: np.ndarray) -> list[int]:
    """Indices of xyxy boxes in reading order."""
    return [i for row in reading_order_rows(boxes) for i in row]
