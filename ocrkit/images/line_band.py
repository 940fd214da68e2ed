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


def line_band(gray: np.ndarray) -> tuple[int, int]:
    """(top, bottom) rows of the line in a 2-D uint8 crop; the whole crop where no ink stands out."""
    height = gray.shape[0]
    if height < 8 or int(gray.max()) - int(gray.min()) < 32:
        return 0, height
    _, ink = cv2.threshold(gray, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if ink.mean() > 0.5:  # Otsu marks the lighter class 1: dark ink on light paper is the 0 class
        ink = 1 - ink
    rows = ink.sum(axis=1).astype(np.float64)
    if rows.max() <= 0:
        return 0, height
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
