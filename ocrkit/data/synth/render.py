"""One synthetic page from one seed: plan -> draw -> degrade. Pure function of (seed, index), so workers
and their scheduling never change the output."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ocrkit.data.synth import layouts, office
from ocrkit.data.synth.canvas import Canvas
from ocrkit.data.synth.curl import curl
from ocrkit.data.synth.degrade import compose, geometry, photometric
from ocrkit.data.synth.text import TextGen
from ocrkit.util.charset import DEFAULT_CHARSET


@dataclass
class RenderedPage:
    image: np.ndarray  # HxWx3 uint8 RGB
    boxes: list[tuple[float, float, float, float]]  # xyxy pixels: ink plus the label margin (LABEL_PAD)
    texts: list[str]  # exactly what each box shows
    kind: str  # layout name


def item_rng(seed: int, index: int, stream: int) -> np.random.Generator:
    """Independent generator per (seed, item, purpose)."""
    return np.random.default_rng([seed, stream, index])


def render_page(
    rng: np.random.Generator,
    charset: str = DEFAULT_CHARSET,
    degrade: bool = True,
    kinds: dict[str, float] | None = None,
    scale: float = 1.0,
) -> RenderedPage:
    """`scale` multiplies the planned page size (fonts follow it): line crops for the recognizer use > 1 so
    their text is as tall in pixels as on real 200-300 dpi scans, where the detector's pages stay at 1."""
    plan = layouts.plan_page(rng, kinds)
    if scale != 1.0:
        plan = replace(plan, width=int(round(plan.width * scale)), height=int(round(plan.height * scale)))
    cv = Canvas(plan.width, plan.height, rng, charset)
    layouts.draw(plan, cv, TextGen(rng))
    if not degrade:
        img = 255.0 - 255.0 * np.repeat(np.clip(cv.ink + cv.stamp, 0, 1)[..., None], 3, axis=2)
        return RenderedPage(
            img.astype(np.uint8),
            [_padded(ln.box, ln.pad, cv.w, cv.h) for ln in cv.lines],
            [ln.text for ln in cv.lines],
            plan.kind,
        )
    img, paper = compose(cv, plan, rng)
    img, boxes = geometry(img, cv, plan, paper, rng)
    img, boxes = curl(img, boxes, paper, rng)
    img = photometric(img, rng)
    if plan.kind in office.OFFICE_KINDS and rng.random() < office.OFFICE.p_copy:
        img = office.copy_of(img, rng)
    h, w = img.shape[:2]
    boxes = [_padded(box, ln.pad, w, h) for box, ln in zip(boxes, cv.lines, strict=True)]
    return RenderedPage(img, boxes, [ln.text for ln in cv.lines], plan.kind)


def _padded(
    box: tuple[float, float, float, float], pad: tuple[float, float], width: int, height: int
) -> tuple[float, float, float, float]:
    """An ink box grown by the label margin (after any page geometry), clipped to the page."""
    x0, y0, x1, y1 = box
    px, py = pad
    return max(0.0, x0 - px), max(0.0, y0 - py), min(float(width), x1 + px), min(float(height), y1 + py)
