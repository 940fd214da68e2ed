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

Neighbours often reach into the line's rows, so no row can be cut between them: `stray_ink` finds the
pieces (connected components) of ink that lie wholly above or below the line's core (its densest
rows, the x-height of print), which are painted over as paper before the band is cut. With recognizer
0.10.0 on the framing test set this moved neighbours 0.296 → 0.216, blank margins 0.178 / 0.180 →
0.166 / 0.171 and tight crops 0.169 → 0.165; development crops moved by one line each (SROIE 0.0266 →
0.0277, Kant 0.0306 → 0.0311; DTA unchanged).
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
    """The crop with the neighbouring lines' pieces of ink painted over as paper (see module doc)."""
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
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ys, hs, areas = stats[:, cv2.CC_STAT_TOP], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    ends = ys + hs
    line_ink = areas[1:][(ys[1:] < bottom) & (ends[1:] > top)].sum()
    stray = [
        i
        for i in range(1, count)
        if areas[i] < STRAY_HEAVY * line_ink
        and (
            ends[i] < top - far * core
            or ys[i] > bottom + far * core
            or (ys[i] == 0 and ends[i] <= edge_top)
            or (ends[i] == height and ys[i] >= edge_bottom)
        )
    ]
    if not stray:
        return gray
    paint = cv2.dilate(np.isin(labels, stray).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    out = gray.copy()
    out[paint] = int(np.median(gray[ink == 0]))
    return out


def _core(ink: np.ndarray) -> tuple[int, int]:
    """(top, bottom) of the densest rows of the heaviest run of ink rows: the line's x-height."""
    rows = ink.sum(axis=1).astype(np.float64)
    start, end = max(_runs(rows >= INK_ROW * rows.max()), key=lambda run: rows[run[0] : run[1]].sum())
    width = max(1, ink.shape[0] // 10)
    smooth = np.convolve(rows, np.ones(width) / width, mode="same")[start:end]
    dense = np.flatnonzero(smooth >= CORE_LEVEL * smooth.max())
    return start + int(dense[0]), start + int(dense[-1]) + 1


def line_band(gray: np.ndarray) -> tuple[int, int]:
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
    return (top, bottom) if bottom - top <= LOOSE * height else (0, height)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True rows."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))
