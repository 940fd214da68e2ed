"""Training crops framed like loose and dense boxes: the line itself is never changed, only surrounded."""

from __future__ import annotations

import numpy as np

from ocrkit.data.framing import MAX_MARGIN, frame_line, paper_level


def _line(height: int = 32, width: int = 160, ink: int = 10, paper: int = 230) -> np.ndarray:
    image = np.full((height, width, 3), paper, np.uint8)
    image[8:24, 10:150] = ink
    return image


def _find(framed: np.ndarray, line: np.ndarray) -> tuple[int, int]:
    """(top, left) where `line` sits unchanged inside `framed`."""
    h, w = line.shape[:2]
    for top in range(framed.shape[0] - h + 1):
        for left in range(framed.shape[1] - w + 1):
            if np.array_equal(framed[top : top + h, left : left + w], line):
                return top, left
    raise AssertionError("the line is not inside the framed crop")


def test_the_line_is_kept_whole_and_margins_stay_within_a_line_height():
    line = _line()
    rng = np.random.default_rng(3)
    grew = 0
    for _ in range(40):
        framed = frame_line(line, None, None, rng)
        top, left = _find(framed, line)
        bottom, right = framed.shape[0] - top - 32, framed.shape[1] - left - 160
        assert max(top, bottom, left, right) <= round(MAX_MARGIN * 32)
        # without neighbours every added pixel is paper
        mask = np.ones(framed.shape[:2], bool)
        mask[top : top + 32, left : left + 160] = False
        assert (framed[mask] == 230).all()
        grew += framed.shape[0] > 32
    assert grew > 10  # most crops get a margin


def test_neighbour_fragments_show_their_ink_at_the_line_scale_and_paper():
    line = _line(paper=230)
    neighbour = np.full((64, 300, 3), 200, np.uint8)  # another scale and a darker paper
    for col in range(10, 290, 8):  # strokes from top to bottom, as ascenders and descenders reach
        neighbour[2:62, col : col + 4] = 0
    rng = np.random.default_rng(0)
    seen_ink = False
    for _ in range(40):
        framed = frame_line(line, neighbour, neighbour, rng)
        top, _ = _find(framed, line)
        assert framed.shape[1] >= 160
        above = framed[:top]
        if above.size:
            seen_ink |= bool((above < 100).any())
            assert paper_level(framed) == 230
    assert seen_ink
