"""Words placed on the page from where the recognizer read their characters (ocrkit.pages.words)."""

import numpy as np
import pytest

from ocrkit.decode.read import PlacedReading
from ocrkit.pages.words import PlacedText, place_words, placed_text

BOX = [100.0, 50.0, 300.0, 70.0]


def test_words_run_half_a_pitch_around_their_characters():
    # "ab cd": centres 10 px apart in the crop, which starts at page x 100
    placed = PlacedText("ab cd", 0.9, list("ab cd"), [5.0, 15.0, 25.0, 35.0, 45.0], [0.9, 0.7, 1.0, 0.8, 0.6])
    first, second = place_words(placed, BOX, crop_left=100.0)
    assert (first.text, second.text) == ("ab", "cd")
    assert first.bbox == pytest.approx([100.0, 50.0, 120.0, 70.0])
    assert second.bbox == pytest.approx([130.0, 50.0, 150.0, 70.0])
    assert (first.score, second.score) == pytest.approx((0.8, 0.7))


def test_words_whose_half_pitches_overlap_meet_halfway_and_stay_in_the_box():
    placed = PlacedText("ab c", 0.9, list("ab c"), [-4.0, 6.0, 10.0, 16.0], None)
    first, second = place_words(placed, BOX, crop_left=100.0)
    assert first.bbox[0] == 100.0  # clipped to the line's box
    assert first.bbox[2] == second.bbox[0] == pytest.approx((111.0 + 111.0) / 2)
    assert second.bbox[2] <= BOX[2] and second.score == 0.9


def test_without_positions_characters_spread_evenly_over_the_box():
    words = place_words(PlacedText("abc  de", 0.5, ["abc  de"]), BOX, crop_left=0.0)
    assert [w.text for w in words] == ["abc", "de"]
    assert words[0].bbox[0] == pytest.approx(100.0) and words[1].bbox[2] == pytest.approx(300.0)
    assert place_words(PlacedText("  ", 0.5, ["  "]), BOX, 0.0) == []


def test_placed_text_keeps_positions_only_where_the_tokens_spell_the_text():
    table = ["", "", "a", "b", " "]
    reading = PlacedReading([2, 4, 3], 0.8, np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.6, 0.7]))
    placed = placed_text(reading, "a b", table)
    assert placed.glyphs == ["a", " ", "b"] and placed.centres == [1.0, 2.0, 3.0]
    assert placed_text(reading, "A B", table).centres is None  # decoded text differs: no positions
    assert placed_text(PlacedReading([2], 0.8), "a", table).centres is None
