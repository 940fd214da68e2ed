"""Office-page wear: each effect changes the ink the way a typewriter, carbon paper, ruled paper or a copier
does, and leaves shapes and ranges alone."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from ocrkit.data.synth import office
from ocrkit.data.synth.canvas import Canvas


def _rings(h: int = 120, w: int = 240) -> np.ndarray:
    """Letters 'o' of 24 px: rings whose 5-px counters a wet ribbon fills."""
    ink = np.zeros((h, w), np.float32)
    for cx in range(20, w - 20, 30):
        cv2.circle(ink, (cx, h // 2), 4, 1.0, 3)
    return ink


def test_ribbon_fills_counters_where_wet_and_keeps_range() -> None:
    ink = _rings()
    counters = np.zeros_like(ink, bool)
    for cx in range(20, ink.shape[1] - 20, 30):
        counters[ink.shape[0] // 2 - 1 : ink.shape[0] // 2 + 2, cx - 1 : cx + 2] = True
    assert ink[counters].max() == 0
    filled = [office.ribbon(ink, 24, np.random.default_rng(s))[counters].mean() for s in range(8)]
    out = office.ribbon(ink, 24, np.random.default_rng(0))
    assert out.shape == ink.shape and out.dtype == np.float32
    assert 0 <= out.min() and out.max() <= 1
    assert max(filled) > 0.3  # some pages fill the counters of their small letters


def test_carbon_copy_spreads_and_lightens_ink() -> None:
    ink = _rings()
    soft = office.carbon(ink, 24, np.random.default_rng(1))
    assert soft.max() <= 0.9 + 1e-6
    assert (soft > 0.05).sum() > (ink > 0.05).sum()


def test_rules_run_at_the_line_pitch() -> None:
    k = replace(office.OFFICE, rule_pitch=(2.0, 2.0))
    mark = office.rules(400, 300, 20, np.random.default_rng(3), k)
    rows = np.flatnonzero(mark[:, 150] > 0)
    starts = rows[np.r_[True, np.diff(rows) > 1]]
    assert np.allclose(np.diff(starts), 40)
    assert 0 < mark.max() <= 0.8


def test_copy_of_a_page_is_bitonal_grey_and_the_same_size() -> None:
    rng = np.random.default_rng(4)
    page = np.full((200, 150, 3), 235, np.uint8)
    cv2.putText(page, "Text", (10, 100), cv2.FONT_HERSHEY_SIMPLEX, 2, (30, 30, 30), 4)
    out = office.copy_of(page, rng)
    assert out.shape == page.shape
    assert set(np.unique(out)) <= {0, 255}
    assert (out[..., 0] == out[..., 2]).all()
    assert (out[90:100, 20:120] == 0).any()  # the text survives the copy


def test_wear_picks_carbon_or_ribbon_by_its_probabilities() -> None:
    cv = Canvas(200, 100, np.random.default_rng(0), "abc")
    ink = _rings(100, 200)
    rng = np.random.default_rng(5)
    assert office.wear(ink, cv, rng, replace(office.OFFICE, p_carbon=1.0))[1] is True
    none = replace(office.OFFICE, p_carbon=0.0, p_ribbon=0.0)
    same, is_carbon = office.wear(ink, cv, rng, none)
    assert same is ink and is_carbon is False
    assert office.ruled_paper(cv, rng, replace(office.OFFICE, p_ruled=0.0)) is None
