"""An overlay picture: the page with its line boxes, and beside it a panel with each reading where its
line is, so the reading can be checked against the print without covering it (labels painted over a
dense page hide the line above). Lines dropped as read too unsure (`min_confidence`) are drawn dashed
and grey, in both halves, so the page shows where they were."""

from __future__ import annotations

import io
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ocrkit.pages.document import Line, Page
from ocrkit.pages.text_faces import FACES, face_for

MAX_SIDE = 2000  # the page half is scaled to at most this: overlays are for looking at
GAP = 8  # pixels between the page and the panel
KEPT, UNSURE, PANEL_BOX = (220, 0, 0), (150, 150, 150), (215, 215, 215)
TEXT, UNSURE_TEXT = (0, 0, 170), (130, 130, 130)
MIN_FONT, MAX_FONT = 8, 48


def draw_overlay(image: np.ndarray, page: Page) -> Image.Image:
    """The page (left) with its line boxes, and a white panel (right) of the same size where each line's
    text stands in its box, fitted to the box's height and width."""
    picture = Image.fromarray(image).convert("RGB")
    scale = min(1.0, MAX_SIDE / max(picture.size))
    if scale < 1.0:
        size = (max(1, round(picture.width * scale)), max(1, round(picture.height * scale)))
        picture = picture.resize(size, Image.Resampling.LANCZOS)  # 1×5000 stays 1 wide
    width, height = picture.size
    canvas = Image.new("RGB", (2 * width + GAP, height), (255, 255, 255))
    canvas.paste(picture, (0, 0))
    draw = ImageDraw.Draw(canvas)
    draw.rectangle([width, 0, width + GAP - 1, height], fill=(90, 90, 90))
    stroke = max(1, round(2 * scale))
    for line, unsure in [(line, False) for line in page.lines] + [(line, True) for line in page.unsure]:
        box = [v * scale for v in line.bbox]
        shifted = [box[0] + width + GAP, box[1], box[2] + width + GAP, box[3]]
        if unsure:
            _dashed(draw, box, UNSURE, stroke)
            _dashed(draw, shifted, UNSURE, 1)
        else:
            draw.rectangle(box, outline=KEPT, width=stroke)
            draw.rectangle(shifted, outline=PANEL_BOX, width=1)
        _text_in_box(draw, line, shifted, UNSURE_TEXT if unsure else TEXT)
    return canvas


def _text_in_box(
    draw: ImageDraw.ImageDraw, line: Line, box: list[float], colour: tuple[int, int, int]
) -> None:
    """The line's text in `box`: as tall as 70 % of the box, smaller if it would run past its right end."""
    if not line.text:
        return
    x0, y0, x1, y1 = box
    size = int(np.clip((y1 - y0) * 0.7, MIN_FONT, MAX_FONT))
    face = face_for(line.text)
    length = draw.textlength(line.text, font=_font(face, size))
    if length > x1 - x0 > 0:
        size = max(MIN_FONT, int(size * (x1 - x0) / length))
    font = _font(face, size)
    draw.text((x0 + 1, (y0 + y1) / 2), line.text, fill=colour, font=font, anchor="lm")


def _dashed(draw: ImageDraw.ImageDraw, box: list[float], colour: tuple[int, int, int], width: int) -> None:
    """A box outline in dashes of 6 px with gaps of 4."""
    x0, y0, x1, y1 = box
    for start, end in (
        ((x0, y0), (x1, y0)),
        ((x1, y0), (x1, y1)),
        ((x1, y1), (x0, y1)),
        ((x0, y1), (x0, y0)),
    ):
        length = max(abs(end[0] - start[0]), abs(end[1] - start[1]))
        for offset in np.arange(0, length, 10):
            a, b = offset / max(length, 1e-9), min(offset + 6, length) / max(length, 1e-9)
            draw.line(
                [
                    (start[0] + (end[0] - start[0]) * a, start[1] + (end[1] - start[1]) * a),
                    (start[0] + (end[0] - start[0]) * b, start[1] + (end[1] - start[1]) * b),
                ],
                fill=colour,
                width=width,
            )


@cache
def _font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FACES[face]), size)


def overlay_png(image: np.ndarray, page: Page) -> bytes:
    buf = io.BytesIO()
    draw_overlay(image, page).save(buf, "PNG", optimize=True)
    return buf.getvalue()
