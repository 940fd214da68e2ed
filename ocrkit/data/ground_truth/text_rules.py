"""Transcription clean-up: Unicode NFC, collapsed whitespace, plain readings of characters outside the
tokenizer (ocrkit.data.ground_truth.plain_readings), and a source's own markup rules.

Transcription guidelines mark things a recognizer must not learn to write (crossed-out text, editorial
brackets, superscript carets). Each source names its markup as data (`TextRules`); a line that still
holds markup after the rules is dropped and counted, never kept silently.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ocrkit.data.ground_truth.plain_readings import E_ABOVE, plain_text
from ocrkit.util.charset import DEFAULT_CHARSET

# Editorial markup seen in public ground truth that no printed page shows as such.
DEFAULT_MARKUP = r"[⟦⟧]"
_SPACES = re.compile(r"\s+")
# control characters left after whitespace is collapsed (NUL, DEL, C1): no page prints them
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# what the tokenizer can write: a line with anything else would teach the model to write nothing there
# (an unknown token, which decoding drops), e.g. the abbreviation signs of early modern print "q̃", "⁊"
_READABLE = frozenset(DEFAULT_CHARSET + E_ABOVE)


@dataclass
class TextRules:
    replace: dict[str, str] = field(default_factory=dict)  # literal substring → replacement
    strip: list[str] = field(default_factory=list)  # regexes removed from the text
    drop: list[str] = field(default_factory=list)  # regexes: a line matching any is dropped
    markup: str = DEFAULT_MARKUP  # regex: what still counts as markup after the rules
    case_sensitive: bool = True  # False: the transcriptions do not follow the print's case

    def __post_init__(self) -> None:
        self._strip = [re.compile(p) for p in self.strip]
        self._drop = [re.compile(p) for p in self.drop]
        self._markup = re.compile(self.markup) if self.markup else None

    def apply(self, text: str | None) -> tuple[str | None, str | None]:
        """(clean text, None) or (None, reason the line is dropped); None text stays None (box only)."""
        if text is None:
            return None, None
        text, private = plain_text(normalize(text))
        if private is not None:
            return None, f"private-use character without a plain reading ({private})"
        text = normalize(text)
        for pattern in self._drop:
            if pattern.search(text):
                return None, "dropped by a source rule"
        for old, new in self.replace.items():
            text = text.replace(old, new)
        for pattern in self._strip:
            text = pattern.sub("", text)
        text = normalize(text)
        if self._markup is not None and self._markup.search(text):
            return None, "markup left after the rules"
        if _CONTROL.search(text):
            return None, "control characters in the text"
        if not text:
            return None, "empty text"
        unreadable = next((ch for ch in text if ch not in _READABLE), None)
        if unreadable is not None:
            return None, f"character outside the tokenizer (U+{ord(unreadable):04X})"
        return text, None


def normalize(text: str) -> str:
    """NFC with runs of whitespace collapsed to one space and the ends trimmed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()
