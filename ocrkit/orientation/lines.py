"""Which way up a page's lines read: the recognizer's own judgement where the page classifier knows only
the lines' axis. Upside-down print reads as unsure gibberish, upright print as sure text."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

LINES_CHECKED = 8  # the widest lines of a page are read both ways up
# more than this share of the lines must read surer turned to turn the page. A line's CTC confidence
# differs by only 0.01-0.13 between the two ways up (its many blank frames are sure either way), but it
# differs on most lines: of the 8 widest lines, 0-12 % read surer turned on 18 printed validation pages
# upright and 88-100 % upside down; on 10 handwritten development pages 0-38 % and 62-100 %
VOTE = 0.5


def turned_reads_better(
    crops: list[np.ndarray], confidences: Callable[[list[np.ndarray]], list[float]]
) -> bool:
    """Whether more than VOTE of the line crops read surer turned half a turn than as they are."""
    if not crops:
        return False
    turned = [np.ascontiguousarray(c[::-1, ::-1]) for c in crops]
    scores = np.asarray(confidences(crops + turned), np.float64)
    return float((scores[len(crops) :] > scores[: len(crops)]).mean()) > VOTE
