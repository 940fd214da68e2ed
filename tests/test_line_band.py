"""Loose line crops are cut to their line's rows, neighbours' pieces of ink painted over; tight crops,
accents, commas and touching ink are left alone."""

from __future__ import annotations

import numpy as np

from ocrkit.images.line_band import cut_to_line, line_band, without_stray_ink
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


def _line_with_ascenders(height: int = 80) -> np.ndarray:
    """An x-height band at rows 30-45 with a few ascenders reaching up to row 14."""
    crop = _paper(height)
    crop[30:46] = _text_rows(16)
    for col in range(5, 290, 54):
        crop[14:30, col : col + 4] = INK
    return crop


def test_a_neighbours_pieces_that_no_blank_row_separates_are_painted_over():
    crop = _line_with_ascenders()
    for col in (46, 100, 154, 208):  # the line above's descenders, in the rows of the ascenders
        crop[0:16, col : col + 2] = INK
    assert line_band(crop) == (0, crop.shape[0])  # no blank row between them and the line
    cleaned = without_stray_ink(crop)
    assert (cleaned[0:16, 46:48] > 200).all() and (cleaned[0:16, 154:156] > 200).all()
    assert (cleaned[14:30, 5:9] == INK).all()  # the line's own ascenders stay
    assert (cleaned[30:46] == crop[30:46]).all()
    top, bottom = line_band(cleaned)
    assert 8 <= top <= 14 and bottom >= 46


def test_accents_commas_and_a_broken_stroke_of_a_tight_crop_stay():
    tight = _paper(35)
    tight[5:31] = _text_rows(26)
    tight[0:3, 50:54] = INK  # an accent touching the top edge
    tight[31:35, 100:103] = INK  # a comma touching the bottom edge
    assert without_stray_ink(tight) is tight
    glyph = _paper(40)  # one character whose lower stroke the threshold broke off, far below its core
    glyph[5:12, 10:30] = INK
    glyph[30:38, 10:30] = INK
    assert without_stray_ink(glyph) is glyph
    blank = _paper(40)
    assert without_stray_ink(blank) is blank  # no ink: nothing to paint


def _dense_print() -> np.ndarray:
    """A line (ascenders rows 16-28, x-height 28-44) under the bottom of the line above (x-height cut by
    the crop's edge at rows 0-10, descenders to row 22), one descender touching one of the line's
    ascenders: no blank row and no separate piece of ink between them."""
    crop = _paper(56)
    crop[0:10] = _text_rows(10)
    crop[28:44] = _text_rows(16)
    for col in (46, 100, 154, 208):
        crop[10:22, col : col + 2] = INK  # the line above's descenders
    for col in (44, 122, 230):
        crop[16:28, col : col + 4] = INK  # the line's ascenders, the first touching a descender
    return crop


def test_a_neighbour_touching_the_line_is_cut_off_along_the_clearest_path():
    crop = _dense_print()
    assert line_band(crop) == (0, crop.shape[0])
    cleaned, top, bottom = cut_to_line(crop)
    assert (cleaned[0:10] > 200).all()  # the line above's x-height is paper
    assert (cleaned[28:44] == crop[28:44]).all()  # the line's own x-height is untouched
    assert (cleaned[18:28, 122:126] == INK).all() and (cleaned[18:28, 230:234] == INK).all()
    assert 10 <= top <= 18 and bottom >= 44  # and the crop is cut to it


def test_a_tight_crop_comes_back_as_it_was():
    tight = np.concatenate([_paper(3), _text_rows(26), _paper(3)])
    cleaned, top, bottom = cut_to_line(tight)
    assert cleaned is tight and (top, bottom) == (0, tight.shape[0])


def test_a_crop_the_cut_leaves_as_it_is_comes_back_itself():
    # the page pipeline reads again only the crowded crops the cut changes
    from ocrkit.images.line_preprocess import cut_to_its_line

    page = np.full((120, 200, 3), 255, np.uint8)
    for top, bottom in [(16, 42), (44, 70)]:  # two lines of strokes, set tight
        page[top:bottom, 14:186:6] = 0
        page[top + (bottom - top) // 3 : bottom - (bottom - top) // 3, 14:186] = 0
    alone = np.ascontiguousarray(page[14:44])  # the first line and two rows of paper
    assert cut_to_its_line(alone) is alone
    crowded = np.ascontiguousarray(page[10:48])  # ... and the second line's top rows
    cut = cut_to_its_line(crowded)
    assert cut is not crowded and cut.shape[0] < crowded.shape[0]
