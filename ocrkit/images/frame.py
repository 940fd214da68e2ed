"""Quarter turns of a page and of boxes: a page is read upright, its boxes reported on the page as sent."""

from __future__ import annotations

import cv2
import numpy as np

ANGLES = (0, 90, 180, 270)  # class k: the page as sent is the upright page turned k quarter turns clockwise


def upright(image: np.ndarray, turns: int) -> np.ndarray:
    """The upright page of one sent turned `turns` quarter turns clockwise."""
    return np.ascontiguousarray(np.rot90(image, turns % 4))  # rot90 turns counter-clockwise


def turned(image: np.ndarray, turns: int) -> np.ndarray:
    """An upright page turned `turns` quarter turns clockwise (what a sideways scan looks like)."""
    return np.ascontiguousarray(np.rot90(image, -(turns % 4)))


def boxes_to_sent(boxes: np.ndarray, turns: int, width: int, height: int) -> np.ndarray:
    """xyxy boxes on the upright page → the same boxes on the page as sent (`width` × `height`, the sent
    page's size), for a page sent turned `turns` quarter turns clockwise. Quarter turns keep boxes
    axis-aligned, so each box maps exactly."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    x0, y0, x1, y1 = b.T
    turns %= 4
    if turns == 0:
        out = b.copy()
    elif turns == 1:  # upright (x, y) sits at (width - y, x) on the sent page
        out = np.stack([width - y1, x0, width - y0, x1], axis=1)
    elif turns == 2:
        out = np.stack([width - x1, height - y1, width - x0, height - y0], axis=1)
    else:
        out = np.stack([y0, height - x1, y1, height - x0], axis=1)
    return out


def points_to_sent(points: np.ndarray, turns: int, width: int, height: int) -> np.ndarray:
    """(..., 2) x, y points on the upright page → on the page as sent (`width` × `height`)."""
    p = np.asarray(points, np.float64)
    x, y = p[..., 0], p[..., 1]
    turns %= 4
    if turns == 0:
        return p.copy()
    if turns == 1:
        return np.stack([width - y, x], axis=-1)
    if turns == 2:
        return np.stack([width - x, height - y], axis=-1)
    return np.stack([y, height - x], axis=-1)


def skewed(gray: np.ndarray, degrees: float) -> np.ndarray:
    """A page turned by a small angle about its centre, its new corners filled with its edge."""
    h, w = gray.shape
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(gray, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
