"""Forms: labelled fields with printed or handwritten values, checkbox rows, notes, a signature, a stamp."""

from __future__ import annotations

from dataclasses import dataclass

from ocrkit.data.synth import fonts
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice
from ocrkit.data.synth.layouts.typeset import ascent, body_face, em, page_dpi, paragraph, text_frame
from ocrkit.data.synth.text import TextGen


@dataclass(frozen=True)
class FormKnobs:
    """Probabilities (p_*) and ranges of one form; sizes in points or ems, margins in page shares."""

    faces: Choice = Choice(("sans", "serif", "condensed"))
    size_pt: tuple[float, float] = (8, 12)
    margin: tuple[float, float] = (0.06, 0.12)
    top: tuple[float, float] = (0.04, 0.1)
    p_logo: float = 0.5
    p_signature: float = 0.6
    p_stamp: float = 0.25
    title_pt: tuple[float, float] = (14, 26)
    p_field: float = 0.6  # per row: a field, a checkbox row (up to p_checkboxes), else a note
    p_checkboxes: float = 0.8
    value_gap: tuple[float, float] = (1.5, 4)  # ems between a label and its value line
    value_rule_dash: Choice = Choice((0, 0, 3))
    p_filled: float = 0.7
    p_handwritten: float = 0.5
    handwriting_scale: tuple[float, float] = (1.2, 1.8)
    handwriting_tilt: float = 0.8  # degrees (standard deviation)
    field_pitch: tuple[float, float] = (2.2, 3.2)  # ems
    checkboxes: tuple[int, int] = (1, 4)
    p_checked: float = 0.4
    note_words: tuple[int, int] = (8, 25)


FORM = FormKnobs()


def form(cv: Canvas, tg: TextGen, k: FormKnobs = FORM) -> None:
    rng = tg.rng
    font, size = body_face(cv, rng, k.faces, k.size_pt)
    x0, x1, y = text_frame(cv, rng, k.margin, k.top)
    if tg.chance(k.p_logo):
        s = cv.w * 0.1
        cv.logo(x1 - s, y, s)
    ts = em(rng.uniform(*k.title_pt), page_dpi(cv))
    title = tg.heading()
    y = paragraph(cv, title, fonts.pick("sans_bold", rng), ts, x0, x1 - cv.w * 0.12, y, cv.h, 1.2) + ts
    hand = fonts.pick("handwriting", rng)
    while y < cv.h * 0.85:
        r = rng.random()
        base = y + ascent(font, size)
        if r < k.p_field:
            box = cv.text(x0, base, tg.field_label(), font, size)
            vx = (box[2] if box else x0) + size * rng.uniform(*k.value_gap)
            cv.rule(vx, base + size * 0.3, x1, base + size * 0.3, 1, dash=int(k.value_rule_dash.draw(rng)))
            if tg.chance(k.p_filled):
                if tg.chance(k.p_handwritten):
                    hs = int(size * rng.uniform(*k.handwriting_scale))
                    value = tg.field_value()
                    tilt = Style(rotate=float(rng.normal(0, k.handwriting_tilt)))
                    cv.text(vx + size, base, value, hand, hs, style=tilt)
                else:
                    cv.text(vx + size * 0.5, base, tg.field_value(), font, size)
            y += size * rng.uniform(*k.field_pitch)
        elif r < k.p_checkboxes:
            xx = x0
            for _ in range(int(rng.integers(*k.checkboxes))):
                s = size * 0.9
                cv.checkbox(xx, base - s, s, tg.chance(k.p_checked))
                box = cv.text(xx + s * 1.6, base, tg.words(1, 3), font, size)
                xx = (box[2] if box else xx + s * 6) + size * 3
            y += size * 2.4
        else:
            note = tg.sentence(*k.note_words)
            y = paragraph(cv, note, font, int(size * 0.9), x0, x1, y, cv.h, 1.3) + size
    if tg.chance(k.p_signature):
        cv.scribble(x1 - cv.w * 0.3, cv.h * 0.88, cv.w * 0.25, size * 3)
    if tg.chance(k.p_stamp):
        cv.stamp_mark(x0 + cv.w * 0.2, cv.h * 0.9, cv.w * 0.08)
