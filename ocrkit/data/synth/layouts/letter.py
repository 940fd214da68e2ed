"""Typewritten and office letters: sender and recipient blocks, place and date, subject, body, closing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ocrkit.data.synth import vocabulary
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice
from ocrkit.data.synth.layouts.typeset import ascent, body_face, paragraph, text_frame
from ocrkit.data.synth.text import TextGen


@dataclass(frozen=True)
class LetterKnobs:
    """Probabilities (p_*) and ranges of one letter; sizes in points or ems, margins in page shares."""

    faces: Choice = Choice(("typewriter", "serif", "sans"), (0.55, 0.3, 0.15))
    sender_lines: tuple[int, int] = (2, 5)
    recipient_lines: tuple[int, int] = (2, 4)
    p_indent: float = 0.3  # a paragraph's first line indented
    size_pt: tuple[float, float] = (9, 13)
    leading: tuple[float, float] = (1.2, 2.0)
    align: Choice = Choice(("left", "justify"))
    margin: tuple[float, float] = (0.08, 0.15)
    top: tuple[float, float] = (0.05, 0.12)
    # typebars strike unevenly: each line's ink strength ~ N(mean, sd) clipped to a range
    strength_mean: float = 0.85
    strength_sd: float = 0.12
    strength_range: tuple[float, float] = (0.45, 1.0)


LETTER = LetterKnobs()


def letter(cv: Canvas, tg: TextGen, k: LetterKnobs = LETTER) -> None:
    rng = tg.rng
    fk = tg.fk
    font, size = body_face(cv, rng, k.faces, k.size_pt)
    lead = rng.uniform(*k.leading)
    x0, x1, y = text_frame(cv, rng, k.margin, k.top)
    y_max = cv.h * 0.92

    def block(count: int, lines: Callable[[], tuple[str, ...]]) -> None:
        """`count` address lines, each one of the candidates `lines()` draws."""
        nonlocal y
        for _ in range(count):
            y = paragraph(cv, tg.choice(lines()), font, size, x0, x1, y, y_max, 1.25)

    sender = (fk.name, fk.street_address, lambda: f"{fk.postcode()} {fk.city()}", fk.phone_number, fk.email)
    block(int(rng.integers(*k.sender_lines)), lambda: tuple(f() for f in sender))
    y += size
    cv.text(x1, y + ascent(font, size), f"{fk.city()}, {tg.date()}", font, size, "right")
    y += size * 2.5
    recipient = (fk.name, fk.company, fk.street_address, fk.city)
    block(int(rng.integers(*k.recipient_lines)), lambda: tuple(f() for f in recipient))
    y += size * 2
    subject = tg.choice(vocabulary.SUBJECT_PREFIXES) + tg.sentence(3, 8).rstrip(".")
    bold = Style(stroke=1 if size > 14 else 0)
    y = paragraph(cv, subject, font, size, x0, x1, y, y_max, 1.3, style=bold) + size

    def typebar() -> Style:
        return Style(strength=float(np.clip(rng.normal(k.strength_mean, k.strength_sd), *k.strength_range)))

    while y < y_max - size * 6:
        body = tg.paragraph()
        align = str(k.align.draw(rng))
        indent = size * 4 if tg.chance(k.p_indent) else 0.0
        bottom = y_max - size * 5
        y = paragraph(cv, body, font, size, x0, x1, y, bottom, lead, align, indent, style_fn=typebar)
        y += size * lead * 0.5
    y = paragraph(cv, tg.choice(vocabulary.CLOSINGS), font, size, x0, x1, y + size, cv.h, 1.3)
    cv.scribble(x0, y, cv.w * 0.25, size * 2.5)
    paragraph(cv, fk.name(), font, size, x0, x1, y + size * 3, cv.h, 1.3)
