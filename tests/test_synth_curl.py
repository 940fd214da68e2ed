"""Curled synthetic pages: lines bow, their boxes still hold all their ink, and most pages stay flat."""

from dataclasses import replace

import numpy as np

from ocrkit.data.synth import curl


def _page_with_line() -> tuple[np.ndarray, tuple[float, float, float, float]]:
    page = np.full((200, 400, 3), 255.0, np.float32)
    page[96:104, 20:380] = 0.0  # one straight line of ink, 8 px tall
    return page, (20.0, 96.0, 380.0, 104.0)


def _ink_rows(img: np.ndarray, x: int) -> np.ndarray:
    return np.flatnonzero(img[:, x, 0] < 128)


def test_a_curled_line_rises_and_falls_and_its_box_holds_it() -> None:
    page, box = _page_with_line()
    always = replace(curl.CURL, p_curl=1.0, depth=(0.6, 0.6))
    moved = 0.0
    for seed in range(6):
        out, (grown,) = curl.curl(
            page, [box], np.array([255.0, 255, 255]), np.random.default_rng(seed), always
        )
        centres = [_ink_rows(out, x).mean() for x in range(24, 376, 16)]
        moved = max(moved, float(np.ptp(centres)))
        ink = np.argwhere(out[..., 0] < 128)
        assert grown[1] <= ink[:, 0].min() and ink[:, 0].max() < grown[3], seed
        assert grown[3] - grown[1] <= 8 + 0.6 * 8 + 3  # grown by the displacement's range, no more
    assert moved >= 3.0  # 0.6 line heights of bow or wave: the line is no longer level


def test_most_pages_stay_flat() -> None:
    page, box = _page_with_line()
    white = np.array([255.0, 255, 255])
    flat = sum(curl.curl(page, [box], white, np.random.default_rng(seed))[0] is page for seed in range(200))
    assert 150 <= flat <= 190  # p_curl 0.15


def test_displacement_range_along_a_row_is_the_depth() -> None:
    rng = np.random.default_rng(0)
    dy = curl.displacement(50, 300, 5.0, rng)
    assert dy.shape == (50, 300)
    assert np.ptp(dy, axis=1).max() <= 5.0 + 1e-4
    assert np.ptp(dy, axis=1).max() >= 2.5
