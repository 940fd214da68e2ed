"""Private-use characters of the Medieval Unicode Font Initiative (MUFI) in public ground truth → plain text.

The OCR-D ground truth of early modern German print writes ligatures and letters with a small e above as
MUFI private-use code points (U+E000–U+F8FF): "ni\\uF502t" for "nicht", "wo\\uF4F9te" for "wollte". They
are outside the tokenizer, so a recognizer trained on them learns to write nothing where a page prints
"ch", "ck", "ll", "ſt" or "tz"; 71 % of the OCR-D VD book lines held one. Ligatures become their
letters and the e-above letters their Unicode spelling (base letter + U+0364, as the OCR-D and DTA
transcriptions of other pages write them). Each reading here was checked against the words it occurs in.
Any other private-use character (mostly Latin abbreviation signs, whose expansion a page does not show)
has no plain reading: its line is dropped and counted.
"""

from __future__ import annotations

import re

E_ABOVE = "\u0364"  # COMBINING LATIN SMALL LETTER E

READINGS: dict[str, str] = {
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

_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def plain_text(text: str) -> tuple[str, str | None]:
    """(text with MUFI readings substituted, None) or (text, the first private-use character left)."""
    for code, reading in READINGS.items():
        text = text.replace(code, reading)
    left = _PRIVATE_USE.search(text)
    return text, (None if left is None else f"U+{ord(left.group()):04X}")
