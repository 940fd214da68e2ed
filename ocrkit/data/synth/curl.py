"""Curled pages: lines bowed or waved as on a book page that does not lie flat or a photographed sheet.

Rendered lines are straight, scanned and photographed ones often are not: near a book's gutter or on a
bent receipt a line rises and falls by a fraction of its height along its length, so its box holds more
of the neighbouring lines and the recognizer must follow the baseline. The page is resampled with a
smooth vertical displacement that varies along x (a bow or a slow wave) and slowly along y; each line's
box grows by the displacement's range over its width, so it still holds all its ink.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class CurlKnobs:
    """How often a page curls and how far (in median line heights, peak to peak along a line)."""

    p_curl: float = 0.15
    depth: tuple[float, float] = (0.15, 0.6)
    waves: tuple[float, float] = (0.5, 1.5)  # periods across the page width for a wave; else a bow


CURL = CurlKnobs()


def displacement(h: int, w: int, depth: float, rng: np.random.Generator, k: CurlKnobs = CURL) -> np.ndarray:
    """(h, w) float32 vertical displacement in px whose range along any row is at most `depth`."""
    u = np.linspace(0.0, 1.0, w, dtype=np.float32)
    if rng.random() < 0.5:  # a bow: the middle of each line higher or lower than its ends
        along = (2 * u - 1) ** 2
    else:
        periods, phase = rng.uniform(*k.waves), rng.uniform(0, 2 * np.pi)
        along = 0.5 + 0.5 * np.sin(2 * np.pi * periods * u + phase)
    along = (along - along.min()) / max(float(np.ptp(along)), 1e-6)  # 0..1 along every row
    start, end = rng.uniform(0.5, 1.0, 2)
    down = np.linspace(start, end, h, dtype=np.float32)  # the curl fades or grows down the page
    sign = 1.0 if rng.random() < 0.5 else -1.0
    return (sign * depth * down[:, None] * along[None, :]).astype(np.float32)


def curl(
    img: np.ndarray, boxes: list[Box], fill: np.ndarray, rng: np.random.Generator, k: CurlKnobs = CURL
) -> tuple[np.ndarray, list[Box]]:
    """The page resampled with a curl `k.p_curl` of the time (else as it is), and its xyxy ink boxes
    grown to hold their bowed lines; corners uncovered at the edges take the `fill` colour."""
    if not boxes or rng.random() >= k.p_curl:
        return img, boxes
    h, w = img.shape[:2]
    line_height = float(np.median([y1 - y0 for _, y0, _, y1 in boxes]))
    dy = displacement(h, w, rng.uniform(*k.depth) * line_height, rng, k)
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    out = cv2.remap(
        img,
        xs,
        ys + dy,
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=tuple(map(float, fill)),
    )
    grown = []
    for x0, y0, x1, y1 in boxes:
        row = dy[int(np.clip((y0 + y1) / 2, 0, h - 1)), int(max(0, x0)) : int(min(w, np.ceil(x1))) + 1]
        low, high = (float(row.min()), float(row.max())) if row.size else (0.0, 0.0)
        # ink drawn at y shows at y - dy: the box spans its ink moved by every displacement along it
        grown.append((x0, max(0.0, y0 - high - 1), x1, min(float(h), y1 - low + 1)))
    return out, grown
