"""The rows of a line crop that hold its line: blank margins and the neighbouring lines' edges cut off.

Why: detectors and annotators frame lines loosely, and a recognizer that reads crops at a fixed height
(32 px) sees a line framed with one line height of blank paper at half its size, or reads the
descenders of the line above as text. On the framing test set (benchmarks/framing, 105 validation
lines of seven sources), recognizer 0.9.0 read tight crops at CER 0.188, with a blank line height above
or below at 0.738 / 0.727, with its neighbours' edges at 0.444; cut to the band, at 0.181, 0.182 /
0.181 and 0.335. OCRopus and kraken centre the line before reading for the same reason. It is a
setting of the recognizer's folder (`trim_margins`), off in the shipped one: on the development
receipts its detected boxes, which that recognizer was trained to read as they come, read worse cut
(page CER 0.067 → 0.081).

Only paper and separate pieces go: the crop's rows are split at blank rows into runs of ink, the run
holding the most ink is the line, and a run above or below it is kept when it is close (accents, dots,
the tips of ascenders) or heavy (a part of the line a blank row happens to cross), dropped otherwise
(a neighbour's descenders or ascenders). Ink that touches the line is never cut.

Neighbours often reach into the line's rows, so no row can be cut between them: `without_stray_ink`
paints over, as paper, the pieces (connected components) of ink that lie wholly above or below the
line's core (its densest run of rows, the x-height of print), and everything beyond the path of most
clearance from the ink above and below the core (a seam, found as a least-cost path, that cuts through
ink only where a neighbour's descender touches the line's ascender). A crop whose ink was painted is cut
to its band however tall its line is in it (`cut_to_line`). With recognizer 0.16.0 on the framing test
set, tight / blank above / blank below / neighbours read at 0.166 / 0.157 / 0.162 / 0.220 with the
pieces alone and 0.144 / 0.156 / 0.161 / 0.176 with the seams too: most tight crops of dense print and
handwriting hold a piece of a neighbour (docs/models/recognizer/training-log.md).
"""

from __future__ import annotations

import cv2
import numpy as np

INK_ROW = 0.03  # a row holding less ink than this share of the densest row's is blank
NEAR = 0.2  # a run at most this many line heights away belongs to the line
HEAVY = 0.5  # so does a run holding at least this share of the line's ink
MARGIN = 0.12  # paper kept above and below the band, in band heights (at least 2 px)
# a crop is cut to its band only when the band is at most this share of its height: a tight crop keeps
# its own framing, which the recognizer was trained on (cutting every crop cost dev receipt crops 0.024
# → 0.032; at 0.7 the Kant dev pages went 0.077 → 0.093, at 0.6 they stay at 0.077)
LOOSE = 0.6


# stray ink: the core is the rows of the line's run holding at least CORE_LEVEL of its densest row's ink
# (rows averaged over a tenth of the crop's height); a piece wholly beyond FAR core heights above or
# below it is a neighbour's, and so is a piece touching the crop's edge beyond EDGE_FAR. A crop at least
# LOOSE_CROP core heights tall holds more than its line: there the limits are FAR_LOOSE, and an edge
# piece goes unless it reaches EDGE_REACH core heights into the core. Pieces holding STRAY_HEAVY of the
# line's ink stay (a stroke broken by the threshold). The limits keep accents, dots and commas of tight
# crops: at FAR 0.4 everywhere, development DTA crops went 0.022 → 0.027 (umlauts and "aͤ" lost).
CORE_LEVEL = 0.35
FAR, EDGE_FAR = 0.8, 0.6
LOOSE_CROP, FAR_LOOSE, EDGE_REACH = 3.0, 0.4, 0.5
STRAY_HEAVY = 0.15


def ink_mask(gray: np.ndarray) -> np.ndarray | None:
    """1 where a 2-D uint8 crop holds ink (Otsu), None where no ink stands out (blank or too small)."""
    if gray.shape[0] < 8 or int(gray.max()) - int(gray.min()) < 32:
        return None
    _, ink = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if ink.mean() > 0.5:  # Otsu marks the lighter class 1: dark ink on light paper is the 0 class
        ink = 1 - ink
    return ink if ink.any() else None


def without_stray_ink(gray: np.ndarray) -> np.ndarray:
    """The crop with the neighbouring lines' ink painted over as paper (see module doc); `gray` itself
    where none is found."""
    ink = ink_mask(gray)
    if ink is None:
        return gray
    height = gray.shape[0]
    top, bottom = _core(ink)
    core = bottom - top
    loose = height >= LOOSE_CROP * core
    far = FAR_LOOSE if loose else FAR
    edge_top = top + EDGE_REACH * core if loose else top - EDGE_FAR * core
    edge_bottom = bottom - EDGE_REACH * core if loose else bottom + EDGE_FAR * core
    _, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ys, hs, areas = stats[:, cv2.CC_STAT_TOP], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    ends = ys + hs
    line_ink = areas[1:][(ys[1:] < bottom) & (ends[1:] > top)].sum()
    stray = (areas < STRAY_HEAVY * line_ink) & (
        (ends < top - far * core)
        | (ys > bottom + far * core)
        | ((ys == 0) & (ends <= edge_top))
        | ((ends == height) & (ys >= edge_bottom))
    )
    stray[0] = False  # the paper
    above, below = _beyond_seams(ink, top, bottom)
    # beyond a seam, a heavy piece stays unless the crop's edge cuts it (a neighbour's, not a stroke
    # of the line's own that the threshold broke off)
    kept = (areas >= STRAY_HEAVY * line_ink) & (ys > 0) & (ends < height)
    kept[0] = False
    paint = (above | below) & ~kept[labels]
    if stray.any():
        paint |= cv2.dilate(stray[labels].astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    if not (paint & (ink > 0)).any():
        return gray
    out = gray.copy()
    out[paint] = _median(gray[ink == 0])
    return out


def _median(values: np.ndarray) -> int:
    """Median of uint8 values, from their histogram (a sort of every paper pixel took longer)."""
    counts = np.cumsum(np.bincount(values, minlength=256))
    return int(np.searchsorted(counts, (counts[-1] + 1) // 2))


SEAM_CORE = 10  # px: the seams are found on the ink scaled so that the core is at most this tall
SEAM_GAP = 0.15  # core heights kept clear of the seams above and below the core (the line's own strokes)


def _beyond_seams(ink: np.ndarray, top: int, bottom: int) -> tuple[np.ndarray, np.ndarray]:
    """The pixels above the clearest path from left to right above the core, and those below the one
    below it."""
    height, width = ink.shape
    scale = min(1.0, SEAM_CORE / max(1, bottom - top))
    small = ink
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = (cv2.resize(ink.astype(np.float32), size, interpolation=cv2.INTER_AREA) >= 0.25).astype(
            np.uint8
        )
    h = small.shape[0]
    s_top, s_bottom = int(top * scale), int(np.ceil(bottom * scale))
    core = max(1, s_bottom - s_top)
    clear = cv2.distanceTransform(1 - small, cv2.DIST_L2, 3)
    cap = max(1.0, core / 2)
    cost = (cap - np.minimum(clear, cap)) + small * (2 * cap)
    above, below = np.zeros(ink.shape, bool), np.zeros(ink.shape, bool)
    rows = np.arange(height)[:, None]
    columns = np.minimum((np.arange(width) * scale).astype(int), small.shape[1] - 1)
    low = min(h, s_bottom + int(round(SEAM_GAP * core)))
    if h - low >= 2:
        seam = (low + _seam(cost[low:]) + 1) / scale  # first full-size row beyond the seam
        below = rows >= np.ceil(seam[columns])[None, :]
    high = max(0, s_top - int(round(SEAM_GAP * core)))
    if high >= 2:
        seam = (high - 1 - _seam(cost[:high][::-1])) / scale  # the seam's row, full size
        above = rows < np.floor(seam[columns])[None, :]
    return above, below


SEAM_BLOCK = 4  # columns the seam crosses per step (one row up or down): a line's worth of freedom


def _seam(cost: np.ndarray) -> np.ndarray:
    """Row per column of the least-cost path across `cost` (rows × columns), moving at most one row per
    SEAM_BLOCK columns."""
    h, w = cost.shape
    steps = -(-w // SEAM_BLOCK)
    padded = np.zeros((h, steps * SEAM_BLOCK), np.float64)
    padded[:, :w] = cost
    blocks = padded.reshape(h, steps, SEAM_BLOCK).sum(2)
    acc = blocks[:, 0].copy()
    moves = np.zeros((steps, h), np.int8)
    shifted = np.full((3, h), np.inf)
    for x in range(1, steps):
        shifted[0, 1:] = acc[:-1]  # from the row above
        shifted[1] = acc
        shifted[2, :-1] = acc[1:]  # from the row below
        choice = shifted.argmin(0)
        moves[x] = choice - 1
        acc = blocks[:, x] + shifted[choice, np.arange(h)]
    path = np.empty(steps, int)
    path[-1] = int(acc.argmin())
    for x in range(steps - 1, 0, -1):
        path[x - 1] = path[x] + moves[x, path[x]]
    return np.repeat(path, SEAM_BLOCK)[:w]


def _core(ink: np.ndarray) -> tuple[int, int]:
    """(top, bottom) of the densest rows of the heaviest run of ink rows: the line's x-height. Where
    that run reaches the crop's edge, the densest rows on that side may be a neighbour's x-height, cut
    by the edge: the core ends there at the densest run of rows; where paper lies between the run and
    the edge, at the last dense row (dot-matrix print is dense only in its top and bottom rows)."""
    rows = ink.sum(axis=1).astype(np.float64)
    start, end = max(_runs(rows >= INK_ROW * rows.max()), key=lambda run: rows[run[0] : run[1]].sum())
    width = max(1, ink.shape[0] // 10)
    smooth = np.convolve(rows, np.ones(width) / width, mode="same")[start:end]
    dense = _runs(smooth >= CORE_LEVEL * smooth.max())
    first, last = max(dense, key=lambda run: smooth[run[0] : run[1]].sum())
    top = first if start == 0 else dense[0][0]
    bottom = last if end == ink.shape[0] else dense[-1][1]
    return start + top, start + bottom


def cut_to_line(gray: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The crop with its neighbours' ink painted over (`without_stray_ink`), and the rows of its line
    (`line_band`). A crop that held a neighbour's ink is cut to its line however tall the line is in it."""
    cleaned = without_stray_ink(gray)
    if cleaned is not gray:
        top, bottom = line_band(cleaned, loose=1.0)
        return cleaned, top, bottom
    top, bottom = line_band(gray)
    return gray, top, bottom


def line_band(gray: np.ndarray, loose: float = LOOSE) -> tuple[int, int]:
    """(top, bottom) rows of the line in a 2-D uint8 crop; the whole crop where no ink stands out."""
    height = gray.shape[0]
    ink = ink_mask(gray)
    if ink is None:
        return 0, height
    rows = ink.sum(axis=1).astype(np.float64)
    runs = _runs(rows >= INK_ROW * rows.max())
    weights = [float(rows[a:b].sum()) for a, b in runs]
    main = int(np.argmax(weights))
    top, bottom = runs[main]
    for i in range(main - 1, -1, -1):  # upwards, nearest first
        a, b = runs[i]
        if top - b > NEAR * (bottom - top) and weights[i] < HEAVY * weights[main]:
            break
        top = a
    for i in range(main + 1, len(runs)):
        a, b = runs[i]
        if a - bottom > NEAR * (bottom - top) and weights[i] < HEAVY * weights[main]:
            break
        bottom = b
    margin = max(2, int(round(MARGIN * (bottom - top))))
    top, bottom = max(0, top - margin), min(height, bottom + margin)
    return (top, bottom) if bottom - top <= loose * height else (0, height)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True rows."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))
