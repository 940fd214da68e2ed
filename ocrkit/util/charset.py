"""The characters ocrkit reads and writes by default (shared by the synthetic data and the tokenizer), and
which of them are letters or digits (the not-text filter and the decoder's routing)."""

from __future__ import annotations

import re

_ASCII = "".join(chr(c) for c in range(0x20, 0x7F))  # printable ASCII incl. space
_LATIN1 = "".join(chr(c) for c in range(0xA1, 0x100) if c != 0xAD)  # no soft hyphen
_LATIN_EXT_A = "".join(chr(c) for c in range(0x100, 0x180))
_EXTRA = "€£°§¶–—‘’‚“”„‹›…•·†‡′″ﬁﬂ✓№™ẞ"  # typographic quotes/dashes, ſ is in Extended-A (U+017F)

DEFAULT_CHARSET: str = "".join(dict.fromkeys(_ASCII + _LATIN1 + _LATIN_EXT_A + _EXTRA))

_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def has_letter_or_digit(text: str) -> bool:
    """Whether any character of `text` is a letter or a digit of any script."""
    return bool(_LETTER_OR_DIGIT.search(text))
