"""Typesetting the layouts share: em sizes from points, word wrap, paragraphs, columns that truncate."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ocrkit.data.synth import fonts
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice

MIN_EM_PX = 12  # smallest em in page pixels: keeps lines >= ~8 px tall after a 1024 letterbox


def em(pt: float, dpi: float) -> int:
    """A font size in pixels from points at this resolution (never below MIN_EM_PX)."""
    return max(MIN_EM_PX, int(round(pt * dpi / 72)))


def page_dpi(cv: Canvas) -> float:
    """Pixels per inch if the page were A4 (or its landscape) at this pixel size."""
    return max(cv.w, cv.h) / 11.69


def body_face(
    cv: Canvas, rng: np.random.Generator, faces: Choice, size_pt: tuple[float, float]
) -> tuple[str, int]:
    """(font, size in pixels) of a sheet's body text: a style class drawn from `faces`, a size in points."""
    font = fonts.pick(str(faces.draw(rng)), rng)
    return font, em(rng.uniform(*size_pt), page_dpi(cv))


def text_frame(
    cv: Canvas, rng: np.random.Generator, margin: tuple[float, float], top: tuple[float, float]
) -> tuple[float, float, float]:
    """(x0, x1, y) where a sheet's text starts: side margins and a top as shares of the page."""
    m = cv.w * rng.uniform(*margin)
    return m, cv.w - m, cv.h * rng.uniform(*top)


def ascent(font_rel: str, size: int) -> int:
    return fonts.load(font_rel, size).getmetrics()[0]


def wrap(cv: Canvas, words: list[str], font_rel: str, size: int, width: float) -> list[list[str]]:
    font = fonts.load(font_rel, size)
    space = font.getlength(" ")
    lines: list[list[str]] = []
    cur: list[str] = []
    cur_w = 0.0
    for wd in words:
        ww = font.getlength(cv.fit(wd, font_rel))
        if cur and cur_w + space + ww > width:
            lines.append(cur)
            cur, cur_w = [], 0.0
        cur_w = ww if not cur else cur_w + space + ww
        cur.append(wd)
    if cur:
        lines.append(cur)
    return lines


def paragraph(
    cv: Canvas,
    text: str,
    font_rel: str,
    size: int,
    x0: float,
    x1: float,
    y: float,
    y_max: float,
    leading: float,
    align: str = "left",
    indent: float = 0.0,
    style: Style | None = None,
    style_fn: Callable[[], Style] | None = None,
) -> float:
    """Wrap and draw a paragraph; returns the y below it. `align` may be "justify"."""
    pitch = size * leading
    lines = wrap(cv, text.split(), font_rel, size, x1 - x0 - indent)
    base = y + ascent(font_rel, size)
    font = fonts.load(font_rel, size)
    for i, words in enumerate(lines):
        if base + size * 0.3 > y_max:
            break
        lx0 = x0 + (indent if i == 0 else 0.0)
        st = style_fn() if style_fn else (style or Style())
        line = " ".join(words)
        if align == "justify" and i < len(lines) - 1 and len(words) > 2:
            natural = font.getlength(cv.fit(line, font_rel))
            extra = (x1 - lx0 - natural) / (len(words) - 1)
            if 0 < extra < 0.6 * size:
                st = Style(**{**st.__dict__, "word_extra": extra})
            cv.text(lx0, base, line, font_rel, size, "left", st)
        elif align in ("left", "justify"):
            cv.text(lx0, base, line, font_rel, size, "left", st)
        elif align == "right":
            cv.text(x1, base, line, font_rel, size, "right", st)
        else:
            cv.text((lx0 + x1) / 2, base, line, font_rel, size, "center", st)
        base += pitch
    return base - ascent(font_rel, size)


def fit_words(cv: Canvas, text: str, font_rel: str, size: int, width: float) -> str:
    """Drop trailing words until the run fits into a column (receipts truncate long item names)."""
    words = text.split()
    while len(words) > 1 and cv.measure(" ".join(words), font_rel, size) > width:
        words.pop()
    return " ".join(words)
