"""Invoices and lists as tables: a title, an optional sender/meta block, ruled or open rows of cells."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ocrkit.data.synth import fonts, vocabulary
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice
from ocrkit.data.synth.layouts.typeset import (
    ascent,
    body_face,
    em,
    fit_words,
    page_dpi,
    paragraph,
    text_frame,
)
from ocrkit.data.synth.text import TextGen


@dataclass(frozen=True)
class TableKnobs:
    """Probabilities (p_*) and ranges of one table page; sizes in points or ems, margins in page shares."""

    faces: Choice = Choice(("sans", "serif", "condensed", "mono"))
    size_pt: tuple[float, float] = (7, 12)
    margin: tuple[float, float] = (0.05, 0.1)
    top: tuple[float, float] = (0.04, 0.1)
    title_pt: tuple[float, float] = (13, 24)
    p_head_block: float = 0.6  # sender block left, invoice meta right
    sender_lines: tuple[int, int] = (2, 5)
    meta_lines: tuple[int, int] = (2, 5)
    columns: tuple[int, int] = (3, 8)
    cell_kinds: Choice = Choice(("num", "price", "date", "id", "text", "short"))
    column_width: tuple[float, float] = (0.6, 1.5)  # relative; the first (text) column twice that
    rows: tuple[int, int] = (5, 30)
    p_ruled: float = 0.6
    row_pitch: tuple[float, float] = (1.4, 2.0)  # ems
    p_large_number: float = 0.5  # a "num" cell up to 5000, else up to 20
    p_empty_cell: float = 0.05


TABLE = TableKnobs()


def table(cv: Canvas, tg: TextGen, k: TableKnobs = TABLE) -> None:
    rng = tg.rng
    font, size = body_face(cv, rng, k.faces, k.size_pt)
    x0, x1, y = text_frame(cv, rng, k.margin, k.top)
    ts = em(rng.uniform(*k.title_pt), page_dpi(cv))
    y = paragraph(cv, tg.heading(), fonts.pick("sans_bold", rng), ts, x0, x1, y, cv.h, 1.2) + ts * 0.5
    if tg.chance(k.p_head_block):
        yl = yr = y
        for _ in range(int(rng.integers(*k.sender_lines))):
            fk = tg.fk
            sender = tg.choice((fk.company(), fk.street_address(), fk.city(), fk.phone_number()))
            yl = paragraph(cv, sender, font, size, x0, (x0 + x1) / 2 - size * 2, yl, cv.h, 1.3)
        for _ in range(int(rng.integers(*k.meta_lines))):
            key, value = tg.field_label(), tg.field_value()
            cv.text(x1 - (x1 - x0) * 0.3, yr + ascent(font, size), key, font, size)
            cv.text(x1, yr + ascent(font, size), value, font, size, "right")
            yr += size * 1.4
        y = max(yl, yr) + size
    ncol = int(rng.integers(*k.columns))
    kinds = ["text"] + [str(kind) for kind in k.cell_kinds.draw(rng, ncol - 1)]
    widths = rng.uniform(*k.column_width, ncol)
    widths[0] *= 2
    edges = x0 + np.concatenate([[0], np.cumsum(widths / widths.sum() * (x1 - x0))])
    pad = size * 0.6
    rows = int(rng.integers(*k.rows))
    ruled = tg.chance(k.p_ruled)
    pitch = size * rng.uniform(*k.row_pitch)
    head = [tg.words(1, 3).title() if kind == "text" else tg.choice(vocabulary.TABLE_HEADS) for kind in kinds]
    cells = {
        "num": lambda: str(int(rng.integers(0, 5000 if tg.chance(k.p_large_number) else 20))),
        "short": tg.short_cell,
        "price": tg.price,
        "date": tg.date,
        "id": tg.ident,
        "text": lambda: tg.words(1, 4),
    }
    for r in range(rows + 1):
        if y + pitch > cv.h * 0.95:
            break
        base = y + (pitch + size * 0.7) / 2
        for c, kind in enumerate(kinds):
            cw = edges[c + 1] - edges[c] - 2 * pad
            if r == 0:
                val, st = head[c], Style(stroke=1 if size > 13 else 0)
            else:
                val, st = cells[kind](), Style()
            if tg.chance(k.p_empty_cell) and r > 0:
                continue
            val = fit_words(cv, val, font, size, cw)
            if cv.measure(val, font, size) > cw:
                continue
            right = kind in ("num", "price", "short")
            x = edges[c + 1] - pad if right else edges[c] + pad
            cv.text(x, base, val, font, size, "right" if right else "left", st)
        if ruled:
            cv.rule(x0, y + pitch, x1, y + pitch, 1)
        y += pitch
    if ruled:
        for e in edges:
            cv.rule(e, y - pitch * min(rows + 1, (y - cv.h * 0.04) // pitch), e, y, 1)
