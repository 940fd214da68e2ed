"""The default page filter: what is not text goes, every line with letters stays however unsure."""

from __future__ import annotations

import pytest

from ocrkit.pages.not_text import distinct_share, is_text


@pytest.mark.parametrize(
    "reading",
    ["", "   ", "- - - - - -", "......", "|", "___", "Marcher en ma ma ma famille ma ma ma famille ma ma"],
)
def test_readings_that_are_not_text(reading):
    assert not is_text(reading)


@pytest.mark.parametrize(
    "reading",
    ["x5", "0.19", "Jé", "ſ", "de la ma femme de Marchel Marchel", "Halleluia, Halleluia.", "TOTAL 12,50"],
)
def test_hard_or_short_lines_with_letters_are_text(reading):
    assert is_text(reading)


def test_distinct_share_counts_case_folded_four_grams():
    assert distinct_share("abcdabcd") == pytest.approx(4 / 5)
    assert distinct_share("ABCDabcd") == pytest.approx(4 / 5)
    assert distinct_share("abc") == 1.0
