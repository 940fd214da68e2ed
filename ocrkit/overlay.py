"""An overlay picture: the page with each line's box and recognised text drawn on it."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ocrkit.document import Page

FONT = Path(__file__).parent / "fonts" / "dejavu" / "DejaVuSans.ttf"
MAX_SIDE = 2000  # overlays are for looking at: cap their size


def draw_overlay(image: np.ndarray, page: Page) -> Image.Image:
    """Boxes in red; the text in blue on a white label just above each box (scaled to the line height)."""
    img = Image.fromarray(image).convert("RGB")
    scale = min(1.0, MAX_SIDE / max(img.size))
    if scale < 1.0:
        size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))  # 1×5000 stays 1 wide
        img = img.resize(size, Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(img)
    for line in page.lines:
        x0, y0, x1, y1 = (v * scale for v in line.bbox)
        draw.rectangle([x0, y0, x1, y1], outline=(220, 0, 0), width=max(1, round(2 * scale)))
        if not line.text:
            continue
        size = int(np.clip((y1 - y0) * 0.7, 8, 28))
        font = ImageFont.truetype(str(FONT), size) if FONT.is_file() else ImageFont.load_default()
        left, top, right, bottom = draw.textbbox((x0, y0 - size - 2), line.text, font=font)
        draw.rectangle([left - 1, top - 1, right + 1, bottom + 1], fill=(255, 255, 255))
        draw.text((x0, y0 - size - 2), line.text, fill=(0, 0, 200), font=font)
    return img


def overlay_png(image: np.ndarray, page: Page) -> bytes:
    buf = io.BytesIO()
    draw_overlay(image, page).save(buf, "PNG", optimize=True)
    return buf.getvalue()
