"""Wear of typewritten and office pages that clean renders lack: ribbon ink, carbon copies, ruled paper,
photocopies and faxes.

Typewritten pages of collections no model trains on are read at several times the error of the print
the models were trained on; their typebars fill the counters of small letters and leave dry strokes, and
many survive only as carbon copies (soft, violet) or as photocopies and faxes (hard threshold, low
resolution, speckle). Ruled and squared paper puts long straight marks under the text that are not text.
Each effect is drawn with its own probability, so most office pages still show none or one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ocrkit.data.synth.canvas import Canvas
from ocrkit.data.synth.noise import smooth_noise

OFFICE_KINDS = ("letter", "form", "table", "prose")
CARBON_INK = ((70, 50, 120), 25)  # violet-blue of carbon paper and spirit duplicators
_RULE_COLOURS = ((150, 175, 205), (175, 175, 180), (200, 150, 150))  # blue, grey and red rules


@dataclass(frozen=True)
class OfficeKnobs:
    """Probability of each effect on an office page, and its strength ranges (sizes in font heights)."""

    p_ribbon: float = 0.35  # typebar ink: counters filled in places, strokes dry in others
    p_carbon: float = 0.12  # a carbon copy: blurred, lighter, violet
    p_ruled: float = 0.12  # ruled or squared paper under the text
    p_copy: float = 0.15  # a photocopy or fax of the page
    fill: tuple[float, float] = (0.1, 0.2)  # closing kernel of filled counters
    carbon_blur: tuple[float, float] = (0.03, 0.07)
    rule_pitch: tuple[float, float] = (1.3, 2.2)  # rule spacing in line heights
    copy_scale: tuple[float, float] = (0.45, 0.8)  # resolution of the copy relative to the page


OFFICE = OfficeKnobs()


def _font_height(cv: Canvas) -> float:
    """Median font size of the page's lines in px (16 when the page has none)."""
    return float(np.median([ln.size for ln in cv.lines])) if cv.lines else 16.0


def ribbon(ink: np.ndarray, size: float, rng: np.random.Generator, k: OfficeKnobs = OFFICE) -> np.ndarray:
    """Typebar ink: closed counters where the ribbon is wet, strokes broken by dry specks where it is not."""
    h, w = ink.shape
    side = max(2, int(round(size * rng.uniform(*k.fill))))
    closed = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((side, side), np.uint8))
    field = smooth_noise(h, w, rng, int(rng.integers(3, 9))).clip(-1, 1)
    wet = np.clip(field * 2.0, 0, 1)
    dry = np.clip(-field * 2.0, 0, 1)
    holes = (rng.random((h, w), dtype=np.float32) < rng.uniform(0.15, 0.4)).astype(np.float32)
    holes = cv2.GaussianBlur(holes, (0, 0), max(0.5, size * 0.02))
    out = ink + wet * (closed - ink)
    return np.clip(out * (1 - dry * holes), 0, 1)


def carbon(ink: np.ndarray, size: float, rng: np.random.Generator, k: OfficeKnobs = OFFICE) -> np.ndarray:
    """A carbon copy's ink: spread by the paper between key and copy, and lighter."""
    soft = cv2.GaussianBlur(ink, (0, 0), max(0.6, size * rng.uniform(*k.carbon_blur)))
    return np.clip(soft * np.float32(rng.uniform(1.0, 1.6)), 0, 1) * np.float32(rng.uniform(0.55, 0.9))


def wear(
    ink: np.ndarray, cv: Canvas, rng: np.random.Generator, k: OfficeKnobs = OFFICE
) -> tuple[np.ndarray, bool]:
    """An office page's ink after ribbon wear or as a carbon copy (never both: a copy keeps no typebar
    detail); True when it became a carbon copy, whose ink colour the caller sets."""
    size = _font_height(cv)
    if rng.random() < k.p_carbon:
        return carbon(ink, size, rng, k), True
    if rng.random() < k.p_ribbon:
        return ribbon(ink, size, rng, k), False
    return ink, False


def ruled_paper(cv: Canvas, rng: np.random.Generator, k: OfficeKnobs = OFFICE) -> np.ndarray | None:
    """Coverage of rules on the page, or None when this sheet is plain."""
    return rules(cv.h, cv.w, _font_height(cv), rng, k) if rng.random() < k.p_ruled else None


def rules(h: int, w: int, size: float, rng: np.random.Generator, k: OfficeKnobs = OFFICE) -> np.ndarray:
    """Coverage (0..1) of printed rules: horizontal lines at a line pitch, on squared paper also vertical."""
    mark = np.zeros((h, w), np.float32)
    pitch = max(6, int(round(size * rng.uniform(*k.rule_pitch))))
    thickness = max(1, int(round(size / 16)))
    start = int(rng.integers(0, pitch))
    for y in range(start, h, pitch):
        cv2.line(mark, (0, y), (w - 1, y), 1.0, thickness)
    if rng.random() < 0.4:  # squared paper
        for x in range(start, w, pitch):
            cv2.line(mark, (x, 0), (x, h - 1), 1.0, thickness)
    return mark * np.float32(rng.uniform(0.3, 0.8))


def rule_colour(rng: np.random.Generator) -> np.ndarray:
    return np.array(_RULE_COLOURS[int(rng.integers(len(_RULE_COLOURS)))], np.float32)


def copy_of(img: np.ndarray, rng: np.random.Generator, k: OfficeKnobs = OFFICE) -> np.ndarray:
    """A photocopy or fax of an RGB uint8 page: grey, low resolution, noisy hard threshold, speckle."""
    h, w = img.shape[:2]
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
    scale = rng.uniform(*k.copy_scale)
    small = cv2.resize(gray, (max(1, int(w * scale)), max(1, int(h * scale))), interpolation=cv2.INTER_AREA)
    noise = rng.normal(0.0, rng.uniform(4, 20), small.shape).astype(np.float32)
    level = float(cv2.threshold(small.astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[0])
    bw = np.where(small + noise > level * rng.uniform(0.85, 1.1), 255, 0).astype(np.uint8)
    specks = rng.random(small.shape) < rng.uniform(0.0, 0.002)
    bw[specks] = 0
    page = cv2.resize(bw, (w, h), interpolation=cv2.INTER_NEAREST)
    return cv2.cvtColor(page, cv2.COLOR_GRAY2RGB)
