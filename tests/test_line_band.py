"""Loose line crops are cut to their line's rows; tight crops and touching ink are left alone."""

from __future__ import annotations

import numpy as np

from ocrkit.images.line_band import line_band
from ocrkit.images.line_preprocess import LinePreprocess

PAPER, INK = 230, 20


def _text_rows(height: int, width: int = 300, ascender: int = 0) -> np.ndarray:
    """A 'line': an x-height band of strokes, with a few ascenders above it."""
    rows = np.full((height, width), PAPER, np.uint8)
    for col in range(5, width - 5, 9):
        rows[ascender:, col : col + 4] = INK
    return rows


def _paper(height: int, width: int = 300) -> np.ndarray:
    return np.full((height, width), PAPER, np.uint8)


def test_a_blank_line_height_above_or_below_is_cut_off():
    line = np.concatenate([_paper(3), _text_rows(26), _paper(3)])
    for framed, offset in ((np.concatenate([_paper(32), line]), 32), (np.concatenate([line, _paper(32)]), 0)):
        top, bottom = line_band(framed)
        assert offset <= top <= offset + 3 and offset + 29 <= bottom <= offset + 32


def test_a_neighbours_descenders_above_a_gap_are_cut_off():
    descenders = np.full((20, 300), PAPER, np.uint8)
    descenders[:, 40:44] = INK  # two thin descenders of the line above
    descenders[:, 200:204] = INK
    crop = np.concatenate([descenders, _paper(8), _text_rows(26), _paper(3)])
    top, bottom = line_band(crop)
    assert top >= 20 and bottom == crop.shape[0]


def test_a_tight_crop_and_ink_touching_the_line_are_kept_whole():
    tight = np.concatenate([_paper(3), _text_rows(26), _paper(3)])
    assert line_band(tight) == (0, tight.shape[0])
    touching = np.concatenate([_text_rows(10), _text_rows(26), _paper(3)])
    assert line_band(touching) == (0, touching.shape[0])
    assert line_band(_paper(40)) == (0, 40)  # no ink: nothing to find


def test_the_preprocessing_applies_it_only_when_the_folder_asks():
    crop = np.concatenate([_paper(40), _paper(3), _text_rows(26), _paper(3)])
    cut = LinePreprocess(longest=512, max_height=32, trim_margins=True).apply(crop)
    kept = LinePreprocess(longest=512, max_height=32).apply(crop)
    assert cut.shape[0] == kept.shape[0] == 32  # both scaled to the model's height...
    assert (cut[:, :, 0] < 128).mean() > 2 * (
        kept[:, :, 0] < 128
    ).mean()  # ...the cut one with the line filling it
