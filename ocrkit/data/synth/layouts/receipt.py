"""Receipts: a shop header, meta lines, item rows in columns, totals and a footer, in the mixed faces and
cases SROIE prints them in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ocrkit.data.synth import fonts, vocabulary
from ocrkit.data.synth.canvas import Canvas, Style
from ocrkit.data.synth.layouts.choice import Choice
from ocrkit.data.synth.layouts.typeset import MIN_EM_PX, ascent, fit_words
from ocrkit.data.synth.text import TextGen, recase


@dataclass(frozen=True)
class ReceiptKnobs:
    """Probabilities (p_*) and ranges of one receipt; widths as shares of the page, sizes in ems."""

    # SROIE prints most sections in capitals but many in mixed case ("Cash Inv No.:", "Total 6% supplies"):
    # case is drawn per section, so a receipt's lower-case lines come in its own receipt faces (one draw
    # per receipt left 90 % of the synthetic receipt lines without a lower-case letter).
    p_all_caps: float = 0.3
    p_section_caps: float = 0.4
    section_case: tuple[str, ...] = ("title", "sentence", "as is")
    p_keep_acronyms: float = 0.5
    margin: tuple[float, float] = (0.04, 0.1)
    chars_per_line: tuple[float, float] = (28, 44)
    leading: tuple[float, float] = (1.15, 1.6)
    p_dot_matrix: float = 0.25
    p_thin: float = 0.3  # of the receipts not in dot matrix
    strength: tuple[float, float] = (0.55, 1.0)
    p_bold_body: float = 0.15
    # Real receipts mix faces by section (a serif header, a condensed meta block, a thin mono body on one
    # SROIE page), where one face per receipt taught the detector only the face it was drawn in.
    p_meta_in_body_face: float = 0.6
    meta_faces: tuple[str, ...] = ("receipt", "condensed", "sans", "serif_bold")
    top: tuple[float, float] = (0.02, 0.08)
    p_rule: float = 0.75  # a dashed rule between sections (else a gap)
    rule_dash: tuple[float, float] = (0.2, 0.5)
    p_logo: float = 0.35
    logo_size: tuple[float, float] = (0.12, 0.25)
    # Real receipts often print the shop name and the document type in a larger, bolder face than the
    # body (the shipped detector missed such headings on SROIE), so headings may switch font and grow.
    p_head_in_body_face: float = 0.5
    head_faces: tuple[str, ...] = ("condensed", "sans_bold", "serif_bold")
    shop_name_scale: tuple[float, float] = (1.0, 2.8)  # SROIE shop names reach ~2.5x the body
    header_lines: tuple[int, int] = (2, 6)
    p_title_grows: float = 0.5
    title_scale: tuple[float, float] = (1.0, 1.8)
    meta_lines: tuple[int, int] = (1, 4)
    p_meta_two_pairs: float = 0.4
    p_meta_value_column: float = 0.5
    # Short cells get their own columns (a quantity before the name, a tax code after the amount, "2 X"
    # apart from its unit price), as on SROIE receipts: 1-2 character lines were the detector's weakest
    # (recall 0.665 on synthetic validation pages, 0.465 on SROIE's quantity and tax columns).
    p_quantity_column: float = 0.3
    p_tax_code_column: float = 0.3
    number_columns: Choice = Choice((1, 2, 3))  # numeric columns besides the amount
    p_column_heads: float = 0.6
    p_rule_under_heads: float = 0.5
    p_two_row_items: float = 0.35
    p_split_quantity: float = 0.5
    items: tuple[int, int] = (2, 22)
    quantity: tuple[int, int] = (1, 10)
    p_times_sign: float = 0.6  # "2 x 3.50" rather than "2 @ 3.50"
    # a number column's cell: a count, else a short cell (up to p_short_cell), else a price
    p_count_cell: float = 0.45
    p_short_cell: float = 0.6
    count_cell: tuple[int, int] = (1, 20)
    p_free_tax_code: float = 0.3
    p_keys_right: float = 0.35
    totals: tuple[int, int] = (2, 8)
    p_big_total: float = 0.4
    big_total_scale: tuple[float, float] = (1.0, 1.8)
    footer_lines: tuple[int, int] = (1, 5)
    p_footer_phrase: float = 0.5  # else a time stamp (up to p_footer_time), else a sentence
    p_footer_time: float = 0.75
    p_barcode: float = 0.4
    barcode_width: tuple[float, float] = (0.4, 0.8)
    barcode_height: tuple[float, float] = (2, 4)  # ems
    tail: tuple[float, float] = (0.5, 4)  # line pitches below the last line
    min_aspect: tuple[float, float] = (1.8, 2.8)  # the page stays at least this many widths tall


RECEIPT = ReceiptKnobs()


def receipt(cv: Canvas, tg: TextGen, k: ReceiptKnobs = RECEIPT) -> None:
    rng = tg.rng
    all_caps = tg.chance(k.p_all_caps)

    def section_case() -> Callable[[str], str]:
        if all_caps or tg.chance(k.p_section_caps):
            return str.upper
        mode = str(tg.choice(k.section_case))
        keep_acronyms = tg.chance(k.p_keep_acronyms)
        return lambda text: recase(text, mode, keep_acronyms)

    font = fonts.pick("receipt", rng)
    mono = fonts.is_mono(font)
    margin = cv.w * rng.uniform(*k.margin)
    x0, x1 = margin, cv.w - margin
    chars = rng.uniform(*k.chars_per_line)
    size = max(MIN_EM_PX, int((x1 - x0) / (chars * (0.6 if mono else 0.48))))
    leading = rng.uniform(*k.leading)
    pitch = size * leading
    dot = tg.chance(k.p_dot_matrix)
    thin = not dot and tg.chance(k.p_thin)
    style = Style(
        dotmatrix=dot,
        strength=float(rng.uniform(*k.strength)),
        stroke=int(tg.chance(k.p_bold_body)),
        thin=thin,
    )
    bold = Style(dotmatrix=dot, strength=style.strength, stroke=1 if size > 14 else 0)
    meta_font = font if tg.chance(k.p_meta_in_body_face) else fonts.pick(str(tg.choice(k.meta_faces)), rng)
    cv.min_gap = 0.9
    y = cv.h * rng.uniform(*k.top)

    def line(
        x: float, text: str, align: str = "left", st: Style = style, sz: int = size, face: str = font
    ) -> None:
        cv.text(x, y + ascent(face, sz), text, face, sz, align, st)

    def sep() -> None:
        nonlocal y
        if tg.chance(k.p_rule):
            rule_y = y + pitch * 0.4
            cv.rule(x0, rule_y, x1, rule_y, max(1, size // 12), dash=int(size * rng.uniform(*k.rule_dash)))
            y += pitch * 0.8
        else:
            y += pitch * 0.4

    cx = (x0 + x1) / 2
    if tg.chance(k.p_logo):
        s = cv.w * rng.uniform(*k.logo_size)
        cv.logo(cx - s / 2, y, s)
        y += s * 1.1
    head_font = font if tg.chance(k.p_head_in_body_face) else fonts.pick(str(tg.choice(k.head_faces)), rng)

    def heading(text: str, scale: float) -> None:
        nonlocal y
        sz = int(size * scale)
        line(cx, fit_words(cv, text, head_font, sz, x1 - x0), "center", bold, sz, head_font)
        y += sz * leading

    heading(tg.shop_name(), rng.uniform(*k.shop_name_scale))
    up = section_case()
    for _ in range(int(rng.integers(*k.header_lines))):
        line(cx, fit_words(cv, up(tg.receipt_header_line()), font, size, x1 - x0), "center")
        y += pitch
    sep()
    up = section_case()
    title = up(tg.choice(vocabulary.RECEIPT_TITLES))
    heading(title, rng.uniform(*k.title_scale) if tg.chance(k.p_title_grows) else 1.0)
    up = section_case()
    for _ in range(int(rng.integers(*k.meta_lines))):
        key, value = tg.receipt_meta()
        if tg.chance(k.p_meta_two_pairs):
            line(x0, up(f"{key} {value}"), face=meta_font)
            key2, value2 = tg.receipt_meta()
            line(x1, up(f"{key2} {value2}"), "right", face=meta_font)
        elif tg.chance(k.p_meta_value_column):
            line(x0, up(key), face=meta_font)
            line(x0 + (x1 - x0) * 0.38, up(value), face=meta_font)
        else:
            line(x0, up(f"{key} {value}"), face=meta_font)
        y += pitch
    sep()
    qty_left = tg.chance(k.p_quantity_column)
    name_x = x0 + size * 2.5 if qty_left else x0
    tax_code = tg.chance(k.p_tax_code_column)
    amount_x = x1 - size * 3.2 if tax_code else x1
    ncols = int(k.number_columns.draw(rng))
    span = amount_x - x0
    col_x = [amount_x - span * f for f in (0.22, 0.42, 0.58)[:ncols]][::-1] if ncols > 1 else []
    name_w = (col_x[0] if col_x else amount_x) - x0 - size * 1.5 - span * 0.12
    up = section_case()
    if tg.chance(k.p_column_heads):
        item_head = up(tg.choice(vocabulary.ITEM_HEADS))
        for cx_ in col_x:
            line(cx_, up(tg.choice(vocabulary.NUMBER_COLUMN_HEADS)), "right")
        if qty_left:
            line(x0, up(tg.choice(vocabulary.QUANTITY_HEADS)))
        line(name_x, item_head)
        line(amount_x, up(tg.choice(vocabulary.AMOUNT_HEADS)), "right")
        if tax_code:
            line(x1, up(tg.choice(vocabulary.TAX_HEADS)), "right")
        y += pitch
        if tg.chance(k.p_rule_under_heads):
            sep()
    two_row = tg.chance(k.p_two_row_items)
    split_qty = tg.chance(k.p_split_quantity)
    up = section_case()
    for _ in range(int(rng.integers(*k.items))):
        if y > cv.h * 0.7:
            break
        if qty_left:
            line(x0, str(int(rng.integers(*k.quantity))))
        name_width = (name_w if not two_row else x1 - x0) - (name_x - x0)
        line(name_x, fit_words(cv, up(tg.item_name()), font, size, name_width))
        if two_row:
            y += pitch
            qty = int(rng.integers(*k.quantity))
            if split_qty:
                line(x0 + size * 2, up(f"{qty} {tg.choice(vocabulary.QUANTITY_MARKS)}"))
                line(x0 + size * 6, tg.price())
            else:
                sign = "x" if tg.chance(k.p_times_sign) else "@"
                line(x0 + size * 2, f"{qty} {sign} {tg.price()}")
        else:
            for cx_ in col_x:
                line(cx_, _number_cell(tg, k), "right")
        line(amount_x, tg.price(signed=True), "right")
        if tax_code:
            code = tg.short_cell() if tg.chance(k.p_free_tax_code) else str(tg.choice(vocabulary.TAX_CODES))
            line(x1, code, "right")
        y += pitch
    sep()
    key_right = tg.chance(k.p_keys_right)
    up = section_case()
    for i in range(int(rng.integers(*k.totals))):
        big = i == 0 and tg.chance(k.p_big_total)
        st, sz = (bold, int(size * rng.uniform(*k.big_total_scale))) if big else (style, size)
        key = up(tg.receipt_key())
        if key_right:
            line(x0 + (x1 - x0) * 0.62, key, "right", st, sz)
        else:
            line(x0, key, "left", st, sz)
        line(x1, tg.price(), "right", st, sz)
        y += sz * leading
    sep()
    for _ in range(int(rng.integers(*k.footer_lines))):
        if y > cv.h * 0.95:
            break
        r = rng.random()
        if r < k.p_footer_phrase:
            line(cx, section_case()(tg.choice(vocabulary.RECEIPT_FOOTERS)), "center")
        elif r < k.p_footer_time:
            line(cx, tg.date() + " " + tg.moment().strftime("%H:%M:%S"), "center")
        else:
            line(x0, fit_words(cv, tg.sentence(), font, size, x1 - x0))
        y += pitch
    if tg.chance(k.p_barcode) and y < cv.h * 0.9:
        bw = (x1 - x0) * rng.uniform(*k.barcode_width)
        cv.barcode(cx - bw / 2, y + size * 0.5, bw, size * rng.uniform(*k.barcode_height))
        y += size * 5
    cv.trim_height(max(y + pitch * rng.uniform(*k.tail), min(cv.h, cv.w * rng.uniform(*k.min_aspect))))


def _number_cell(tg: TextGen, k: ReceiptKnobs) -> str:
    """A cell of a numeric column: a count, a short code or a price."""
    r = tg.rng.random()
    if r < k.p_count_cell:
        return str(int(tg.rng.integers(*k.count_cell)))
    return tg.short_cell() if r < k.p_short_cell else tg.price()
