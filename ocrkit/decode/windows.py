"""Reading a line wider than the model's width in overlapping windows, joined at the CTC frames.

Why: shrinking a long line until it fits the width the model was trained on also shrinks its height:
two 70-character lines side by side (~2300 x 39 px) came out 17 px tall under a 1024-px cap and read as
garbage (CER 0.97). Each window instead keeps the model's line height; the CTC head's frames map to fixed
patch columns, so the windows' frames are joined column by column, each column taken from the window in
which it lies farthest from an edge (where the encoder saw the most context on both sides).
"""

from __future__ import annotations

import numpy as np


def window_starts(width: int, window: int, overlap: int) -> list[int]:
    """Left edges of windows `window` px wide covering `width` px, neighbours sharing >= `overlap` px;
    the last window ends at the right edge. All are multiples of the step's divisor when the sizes are."""
    if width <= window:
        return [0]
    if not 0 <= overlap < window:
        raise ValueError(f"overlap={overlap} must be in [0, window={window})")
    step = window - overlap
    starts = list(range(0, width - window, step))
    return [*starts, width - window]


def stitch_columns(logits: np.ndarray, starts: list[int], window: int, width: int, patch: int) -> np.ndarray:
    """(N windows, T, V) CTC logits of windows starting at `starts` px → (T_line, V) logits of the whole
    line, T_line = its patch columns × the frames each column emits."""
    columns_per_window = window // patch
    frames_per_column = logits.shape[1] // columns_per_window
    first = np.asarray(starts) // patch
    pieces = []
    for column in range(width // patch):
        inside = column - first  # the column's index in each window
        margin = np.minimum(inside, columns_per_window - 1 - inside)
        best = int(np.argmax(margin))  # negative margins (outside) never win: one window always holds it
        at = int(inside[best]) * frames_per_column
        pieces.append(logits[best, at : at + frames_per_column])
    return np.concatenate(pieces)
