"""Characters outside the tokenizer that public ground truth uses for letters it has → those letters.

The OCR-D ground truth of early modern German print writes ligatures and letters with a small e above as
private-use code points of the Medieval Unicode Font Initiative (MUFI, U+E000–U+F8FF): "ni\uf502t" for
"nicht", "wo\uf4f9te" for "wollte". Outside the tokenizer each becomes `<unk>`, which decoding drops, so
a recognizer trained on them learns to write nothing where a page prints "ch", "ck", "ll", "ſt" or
"tz": 71 % of the OCR-D VD book lines held one. The same happens with a few standard characters: the
Fraktur hyphen "⸗" (1 296 VD and 774 archiscribe lines end with it), the "ﬀ" ligature and the r rotunda.

Ligatures become their letters, the Fraktur hyphen a hyphen, and the e-above letters their Unicode
spelling (base letter + U+0364, as the other OCR-D and DTA transcriptions write them). Each reading was
checked against the words it occurs in. Any other private-use character (mostly Latin abbreviation
signs, whose expansion a page does not show) has no plain reading: its line is dropped and counted.
"""

from __future__ import annotations

import re

E_ABOVE = "\u0364"  # COMBINING LATIN SMALL LETTER E

MUFI_READINGS: dict[str, str] = {
    "\ue42c": "a" + E_ABOVE,  # hätte, Händel, täglich
    "\ue644": "o" + E_ABOVE,  # König, könne, öffentlich
    "\ue72b": "u" + E_ABOVE,  # würde, Thüre, hierüber
    "\ueada": "ſt",  # Dorfprieſter, ſelbſt, verſtehen
    "\ueba2": "ſi",  # ſie, ſich
    "\ueba5": "ſp",  # ſuſpicionem, veſperam
    "\ueba6": "ſſ",  # laſſen, eſſen, gewiſſer
    "\ueba7": "ſſi",  # Claſſis, rariſſima, paſſim
    "\ueec4": "ck",  # Stricke, erblicken, Ackerbauen
    "\ueec5": "ct",  # dictum, pectines
    "\ueedc": "tz",  # jetzt, Spitze, nutzen
    "\uf4f9": "ll",  # wollte, Collegen
    "\uf502": "ch",  # nicht, ſchrieb, welcher
}

# Standard characters outside the tokenizer with a plain spelling inside it.
UNICODE_READINGS: dict[str, str] = {
    "\u2e17": "-",  # ⸗ DOUBLE OBLIQUE HYPHEN, the Fraktur hyphen
    "\ufb00": "ff",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "ſt",
    "\ufb06": "st",
    "\ua75b": "r",  # ꝛ r rotunda
    # modifier (superscript) letters of abbreviations printed raised, "Mʳ", "Mᵉ", "Sᵗ": the letters
    "\u02b3": "r",
    "\u02e2": "s",
    "\u1d49": "e",
    "\u1d4d": "g",
    "\u1d57": "t",
    "\u1d58": "u",
    "\u207f": "n",
    "\u1d52": "o",
}

_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def plain_text(text: str) -> tuple[str, str | None]:
    """(text with the readings above substituted, None) or (text, the first private-use character left)."""
    for code, reading in (*MUFI_READINGS.items(), *UNICODE_READINGS.items()):
        text = text.replace(code, reading)
    left = _PRIVATE_USE.search(text)
    return text, (None if left is None else f"U+{ord(left.group()):04X}")
