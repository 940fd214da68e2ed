"""Which readings are not text: the one filter pages apply by default.

A detector's false box (a rule, a speck, a page edge, a blot) is read as nothing, as punctuation alone
("- - - - - -"), or, by the decoder, as a run of repeated words ("Marcher en ma ma ma famille ma ma ma
famille"). A real line that is hard to read is none of these: it is read unsure, with letters. So the
default drops what is not text and keeps every line with letters or digits, however unsure; the
reading confidence cut (`min_confidence`) stays an opt-in for callers who prefer fewer false lines to
every real one (on the handwritten development pages a cut of 0.6 removed 4 real lines in 10).
"""

from __future__ import annotations

from ocrkit.util.charset import has_letter_or_digit

REPEAT_MIN_CHARS = 20  # shorter readings are too short to call repetitive
# share of distinct 4-grams below which a reading is a decoder loop: 2 of 10 914 real validation lines of
# 20+ characters fall below it ("Danzig . . . . . . -" and a line quoting itself), decoder loops do
REPEAT_DISTINCT_SHARE = 0.6


def is_text(reading: str) -> bool:
    """False for a reading with no letter or digit, or one that repeats itself like a decoder loop."""
    if not has_letter_or_digit(reading):
        return False
    return distinct_share(reading) >= REPEAT_DISTINCT_SHARE or len(reading) < REPEAT_MIN_CHARS


def distinct_share(reading: str, n: int = 4) -> float:
    """Distinct character n-grams over all n-grams, case-folded (1.0 for readings shorter than n)."""
    folded = reading.casefold()
    grams = [folded[i : i + n] for i in range(len(folded) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 1.0
