"""The faces ocrkit writes readings in (searchable PDFs, overlays), and which one a text needs.

DejaVu Sans holds every character the shipped recognizer writes but the combining small e above (U+0364)
of early German print, which Liberation Sans has (and it lacks "✓"): a text takes the first face that
holds all its characters, so neither shows an empty box where the other has the glyph.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fontTools.ttLib import TTFont

FONT_DIR = Path(__file__).resolve().parent.parent / "fonts"
FACES: dict[str, Path] = {
    "dejavu": FONT_DIR / "dejavu/DejaVuSans.ttf",
    "liberation": FONT_DIR / "liberation/LiberationSans-Regular.ttf",
}


@cache
def characters(face: str) -> frozenset[int]:
    """The code points `face` has glyphs for."""
    return frozenset(TTFont(FACES[face], fontNumber=0).getBestCmap())


def face_for(text: str) -> str:
    """The first face of FACES that holds every character of `text` (the first where none does)."""
    needed = {ord(c) for c in text}
    return next((face for face in FACES if needed <= characters(face)), next(iter(FACES)))
