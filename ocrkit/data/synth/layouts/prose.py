"""Book and periodical pages: running heads, titles, 1-3 columns of paragraphs, lists and page numbers;
Fraktur pages are the same with German text, long s and old periodical heads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ocrkit.data.synth import fonts, vocabulary
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice
from ocrkit.data.synth.layouts.typeset import MIN_EM_PX, ascent, em, page_dpi, paragraph, text_frame
from ocrkit.data.synth.text import TextGen, long_s


@dataclass(frozen=True)
class ProseKnobs:
    """Probabilities (p_*) and ranges of one prose page; sizes in points or ems, margins in page shares."""

    faces: Choice = Choice(("serif", "sans", "typewriter", "condensed"), (0.5, 0.3, 0.12, 0.08))
    size_pt: tuple[float, float] = (7, 13)
    leading: tuple[float, float] = (1.05, 1.6)
    margin: tuple[float, float] = (0.06, 0.14)
    top: tuple[float, float] = (0.04, 0.1)
    bottom: tuple[float, float] = (0.05, 0.1)
    p_long_s: float = 0.7  # Fraktur pages spelt with ſ
    p_running_head: float = 0.5
    p_head_rule: float = 0.6
    p_double_head_rule: float = 0.5  # Fraktur pages
    p_issue_head: float = 0.08
    p_issue_head_fraktur: float = 0.35
    p_title: float = 0.8
    title_pt: tuple[float, float] = (14, 28)
    p_bold_title: float = 0.5
    p_spaced_title: float = 0.4  # Fraktur pages
    title_align: Choice = Choice(("center", "left"), (0.6, 0.4))
    columns: Choice = Choice((1, 2, 3), (0.6, 0.3, 0.1))
    columns_fraktur: Choice = Choice((1, 2), (0.8, 0.2))
    column_gap: tuple[float, float] = (1.8, 3.5)  # ems
    align: Choice = Choice(("left", "justify", "center", "right"), (0.45, 0.45, 0.06, 0.04))
    p_indent: float = 0.5
    p_heading: float = 0.12  # per block: a heading, a list (up to p_list), else a paragraph
    p_list: float = 0.22
    heading_scale: tuple[float, float] = (1.1, 1.5)
    p_bold_heading: float = 0.5
    list_items: tuple[int, int] = (2, 6)
    list_item_words: tuple[int, int] = (3, 10)
    paragraph_gap: tuple[float, float] = (0, 0.8)  # line pitches
    p_page_number: float = 0.6
    page_number_position: Choice = Choice(("center", "right", "left"))
    page_numbers: tuple[int, int] = (1, 400)


@dataclass(frozen=True)
class IssueHeadKnobs:
    title_scale: tuple[float, float] = (1.8, 3.2)
    title_spacing: tuple[float, float] = (0.0, 0.15)  # of the title size
    year_scale: tuple[float, float] = (1.1, 1.7)
    years: tuple[int, int] = (1650, 1900)
    year_spacing: tuple[float, float] = (0.3, 0.9)  # of the year size
    issue_scale: tuple[float, float] = (1.1, 1.6)
    p_rule: float = 0.7
    p_numeral: float = 0.7


PROSE = ProseKnobs()
ISSUE_HEAD = IssueHeadKnobs()


def prose(
    cv: Canvas, tg: TextGen, font: str | None = None, fraktur: bool = False, k: ProseKnobs = PROSE
) -> None:
    rng = tg.rng
    dpi = page_dpi(cv)
    font = font or fonts.pick(str(k.faces.draw(rng)), rng)
    size = em(rng.uniform(*k.size_pt), dpi)
    leading = rng.uniform(*k.leading)
    x0, x1, y = text_frame(cv, rng, k.margin, k.top)
    y_max = cv.h - cv.h * rng.uniform(*k.bottom)
    text = (lambda s: long_s(s)) if fraktur and tg.chance(k.p_long_s) else (lambda s: s)
    if tg.chance(k.p_running_head):  # running head: left title, right page number -> two boxes
        hs = max(MIN_EM_PX, int(size * 0.85))
        cv.text(x0, y + ascent(font, hs), text(tg.heading()), font, hs)
        cv.text(x1, y + ascent(font, hs), str(int(rng.integers(*k.page_numbers))), font, hs, "right")
        y += hs * 1.6
        if tg.chance(k.p_head_rule):
            cv.rule(x0, y, x1, y, max(1, size // 10))
            if fraktur and tg.chance(k.p_double_head_rule):
                cv.rule(x0, y + 4, x1, y + 4, 1)
            y += size
    if tg.chance(k.p_issue_head_fraktur if fraktur else k.p_issue_head):
        y = issue_head(cv, tg, font, size, x0, x1, y, y_max, text)
    elif tg.chance(k.p_title):
        ts = em(rng.uniform(*k.title_pt), dpi)
        bold_face = "serif_bold" if "Serif" in font or "Roman" in font else "sans_bold"
        tfont = fonts.pick(bold_face, rng) if not fraktur and tg.chance(k.p_bold_title) else font
        spacing = ts * 0.25 if fraktur and tg.chance(k.p_spaced_title) else 0.0
        align = str(k.title_align.draw(rng))
        title = text(tg.heading())
        y = paragraph(cv, title, tfont, ts, x0, x1, y, y_max, 1.2, align, style=Style(char_spacing=spacing))
        y += ts * 0.6
    ncols = int((k.columns_fraktur if fraktur else k.columns).draw(rng))
    gap = size * rng.uniform(*k.column_gap)
    colw = (x1 - x0 - gap * (ncols - 1)) / ncols
    align = str(k.align.draw(rng))
    indent = size * 1.5 if tg.chance(k.p_indent) else 0.0
    ytop = y
    for c in range(ncols):
        cx0 = x0 + c * (colw + gap)
        y = ytop
        while y < y_max - size * 2:
            r = rng.random()
            if r < k.p_heading:
                hs = int(size * rng.uniform(*k.heading_scale))
                heading = text(tg.heading())
                bold = Style(stroke=int(tg.chance(k.p_bold_heading)))
                y = paragraph(cv, heading, font, hs, cx0, cx0 + colw, y + size * 0.5, y_max, 1.2, style=bold)
                y += size * 0.3
            elif r < k.p_list:
                bullet = tg.choice(vocabulary.BULLETS)
                for j in range(int(rng.integers(*k.list_items))):
                    b = bullet if not bullet[0].isalnum() and bullet != "(i)" else f"{j + 1}."
                    item = f"{b} {text(tg.sentence(*k.list_item_words))}"
                    y = paragraph(cv, item, font, size, cx0 + size, cx0 + colw, y, y_max, leading)
            else:
                body = text(tg.paragraph())
                y = paragraph(cv, body, font, size, cx0, cx0 + colw, y, y_max, leading, align, indent)
                y += size * leading * rng.uniform(*k.paragraph_gap)
    if tg.chance(k.p_page_number):
        fs = max(MIN_EM_PX, int(size * 0.9))
        pos = str(k.page_number_position.draw(rng))
        xx = {"center": (x0 + x1) / 2, "right": x1, "left": x0}[pos]
        number = str(int(rng.integers(*k.page_numbers))) if not fraktur else tg.fk.word()
        cv.text(xx, cv.h - cv.h * 0.03, number, font, fs, pos)


def issue_head(
    cv: Canvas,
    tg: TextGen,
    font: str,
    size: int,
    x0: float,
    x1: float,
    y: float,
    y_max: float,
    text: Callable[[str], str],
) -> float:
    """The head of an 18th/19th-century periodical issue: a large title, a double rule, a letter-spaced year,
    the issue line, a rule and a section numeral, all centred. The shipped detector boxed such a page's
    double rule as text and missed its spaced year and issue line (the Kant sample), as none of these
    shapes was in its training pages. Returns the y below the block."""
    k = ISSUE_HEAD
    rng = tg.rng
    cx = (x0 + x1) / 2
    ts = int(size * rng.uniform(*k.title_scale))
    title = text(tg.heading())
    spaced_title = Style(char_spacing=ts * rng.uniform(*k.title_spacing))
    y = paragraph(cv, title, font, ts, x0, x1, y, y_max, 1.15, "center", style=spaced_title)
    thick = max(2, size // 5)
    cv.rule(x0, y + size * 0.3, x1, y + size * 0.3, thick)
    cv.rule(x0, y + size * 0.3 + thick + 3, x1, y + size * 0.3 + thick + 3, 1)
    y += size * 1.2
    ys = int(size * rng.uniform(*k.year_scale))
    year = f"{int(rng.integers(*k.years))}{tg.choice(vocabulary.YEAR_ENDINGS)}"
    spaced = Style(char_spacing=ys * rng.uniform(*k.year_spacing))
    cv.text(cx, y + ascent(font, ys), year, font, ys, "center", spaced)
    y += ys * 1.8
    issue = text(tg.heading())
    y = paragraph(cv, issue, font, int(size * rng.uniform(*k.issue_scale)), x0, x1, y, y_max, 1.2, "center")
    if tg.chance(k.p_rule):
        cv.rule(x0 + (x1 - x0) * 0.1, y + size * 0.3, x1 - (x1 - x0) * 0.1, y + size * 0.3, max(1, size // 8))
        y += size
    if tg.chance(k.p_numeral):
        numeral = tg.choice(vocabulary.SECTION_NUMERALS)
        cv.text(cx, y + size * 0.5 + ascent(font, size), numeral, font, size, "center")
        y += size * 2.0
    return y + size * 0.5


def fraktur(cv: Canvas, tg: TextGen) -> None:
    tg.__init__(tg.rng, "de_DE")  # Fraktur pages carry German text
    prose(cv, tg, font=fonts.pick("fraktur", tg.rng), fraktur=True)
