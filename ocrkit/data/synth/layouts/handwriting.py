"""Handwritten notes and letters: a date, drifting and jittered lines, ruled paper, a signature."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ocrkit.data.synth import fonts
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.typeset import ascent, paragraph
from ocrkit.data.synth.text import TextGen


@dataclass(frozen=True)
class HandwritingKnobs:
    """Probabilities (p_*) and ranges of one handwritten page; sizes as shares of the page height."""

    p_french: float = 0.6  # the scored handwriting set is French
    size: tuple[float, float] = (0.022, 0.04)
    leading: tuple[float, float] = (1.3, 2.0)
    left_margin: tuple[float, float] = (0.08, 0.2)
    right_margin: tuple[float, float] = (0.04, 0.1)
    top: tuple[float, float] = (0.05, 0.12)
    p_ruled: float = 0.3
    drift: float = 0.6  # degrees (standard deviation) of the page's slant
    tilt: float = 0.5  # degrees (standard deviation) each line adds
    word_gap: tuple[float, float] = (0, 0.3)  # extra ems between words
    strength: tuple[float, float] = (0.7, 1.0)
    p_date: float = 0.5
    paragraph_sentences: tuple[int, int] = (1, 4)
    p_indent: float = 0.5
    paragraph_gap: tuple[float, float] = (0, 0.6)  # line pitches
    p_signature: float = 0.7


HANDWRITING = HandwritingKnobs()


def handwriting(cv: Canvas, tg: TextGen, k: HandwritingKnobs = HANDWRITING) -> None:
    rng = tg.rng
    if tg.chance(k.p_french):
        tg.__init__(rng, "fr_FR")
    font = fonts.pick("handwriting", rng)
    size = int(cv.h * rng.uniform(*k.size))
    lead = rng.uniform(*k.leading)
    m = cv.w * rng.uniform(*k.left_margin)
    x0, x1, y = m, cv.w - cv.w * rng.uniform(*k.right_margin), cv.h * rng.uniform(*k.top)
    if tg.chance(k.p_ruled):
        for yy in np.arange(y + size, cv.h * 0.95, size * lead):
            cv.rule(0, yy + size * 0.15, cv.w, yy + size * 0.15, 1, layer="stamp")
    drift = float(rng.normal(0, k.drift))

    def style() -> Style:
        return Style(
            rotate=float(drift + rng.normal(0, k.tilt)),
            baseline_jitter=size * 0.04,
            word_extra=float(rng.uniform(k.word_gap[0], size * k.word_gap[1])),
            strength=float(rng.uniform(*k.strength)),
        )

    if tg.chance(k.p_date):
        cv.text(x1, y + ascent(font, size), tg.date(), font, size, "right", style())
        y += size * lead * 1.5
    while y < cv.h * 0.85:
        text = tg.paragraph(*k.paragraph_sentences)
        indent = size * 2 if tg.chance(k.p_indent) else 0.0
        y = paragraph(cv, text, font, size, x0, x1, y, cv.h * 0.9, lead, "left", indent, style_fn=style)
        y += size * lead * rng.uniform(*k.paragraph_gap)
    if tg.chance(k.p_signature):
        cv.scribble(x1 - cv.w * 0.3, min(y, cv.h * 0.88), cv.w * 0.25, size * 2)
