"""Line crops cut from rendered pages the way a detector would cut them: jittered margins, some tight,
some loose (neighbours intrude), slight skew, and grayscale/bitonal variety (returned as 2-D arrays)."""

from __future__ import annotations

import cv2
import numpy as np

MAX_BITONAL_INK = 0.3  # a binarised line crop with more black than this is unreadable
MIN_STRETCH_RANGE = 24  # grey levels; a flatter crop (blank or all ink) is left as it is
STRAY_INK_CONTRAST = 40  # grey levels below the paper's median that count as ink for blank crops


def stretch_contrast(gray: np.ndarray) -> np.ndarray:
    """Map the 1st-99th percentile grey levels to 0-255: scanners and receipt photos in the real sets give
    near-black ink on near-white paper, where faded ink on thermal paper renders grey on grey."""
    lo, hi = np.percentile(gray, (1, 99))
    if hi - lo < MIN_STRETCH_RANGE:
        return gray
    return np.clip((gray.astype(np.float32) - lo) * (255.0 / (hi - lo)), 0, 255).astype(np.uint8)


def crop_line(
    img: np.ndarray, box: tuple[float, float, float, float], rng: np.random.Generator
) -> np.ndarray:
    x0, y0, x1, y1 = box
    h = y1 - y0
    r = rng.random()
    if r < 0.15:  # tight
        mx, my = rng.uniform(0, 0.06, 2) * h, rng.uniform(0, 0.06, 2) * h
    elif r < 0.85:  # detector-like
        mx, my = rng.uniform(0.05, 0.4, 2) * h, rng.uniform(0.04, 0.3, 2) * h
    else:  # loose
        mx, my = rng.uniform(0.3, 1.0, 2) * h, rng.uniform(0.3, 0.7, 2) * h
    cx0, cy0, cx1, cy1 = x0 - mx[0], y0 - my[0], x1 + mx[1], y1 + my[1]
    cw, ch = max(2, int(round(cx1 - cx0))), max(2, int(round(cy1 - cy0)))
    angle = float(rng.uniform(-0.5, 0.5)) if rng.random() < 0.3 else 0.0  # larger cuts off long lines' ends
    m = cv2.getRotationMatrix2D(((cx0 + cx1) / 2, (cy0 + cy1) / 2), angle, 1.0)
    m[:, 2] -= (cx0, cy0)
    crop = cv2.warpAffine(img, m, (cw, ch), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    r = rng.random()
    if r < 0.45:  # returned 2-D: saved as a grayscale PNG, half of them contrast-stretched
        gray = cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)
        return stretch_contrast(gray) if rng.random() < 0.5 else gray
    if r < 0.55:
        _, bw = cv2.threshold(
            cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU
        )
        if (bw < 128).mean() < MAX_BITONAL_INK:  # Otsu on a dark or textured crop gives noise, not text
            return bw
        return cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY)
    return crop


def blank_crop(
    img: np.ndarray, boxes: list[tuple[float, float, float, float]], rng: np.random.Generator, tries: int = 20
) -> np.ndarray | None:
    """A line-shaped crop of the page that holds no labelled text: paper, specks, rules, stamps.

    A detector's false boxes land on such places, and a recognizer that never saw one reads text into
    it; taught to read them as "", it lets the pipeline drop them. Half the crops are placed over
    unlabelled ink (a rule, stamp, speck or blot; the detector boxes ink, not bare paper), the others
    anywhere. The size is a random line's (half the time cut to a short box, as on single specks);
    returned 2-D like most crops. None if no free place was found."""
    if not boxes:
        return None
    h_img, w_img = img.shape[:2]
    taken = np.asarray(boxes, np.float32)
    stray_ink = _unlabelled_ink(img, taken) if rng.random() < 0.5 else None
    for _ in range(tries):
        x0, y0, x1, y1 = taken[int(rng.integers(len(taken)))]
        h = float(y1 - y0) * rng.uniform(0.7, 1.3)
        w = float(x1 - x0) if rng.random() < 0.5 else h * rng.uniform(0.8, 3.0)
        if h < 4 or w < 4 or w >= w_img or h >= h_img:
            continue
        if stray_ink is not None and len(stray_ink[0]):
            k = int(rng.integers(len(stray_ink[0])))  # that ink pixel somewhere inside the crop
            cy0 = float(np.clip(stray_ink[0][k] - rng.uniform(0, h), 0, h_img - h))
            cx0 = float(np.clip(stray_ink[1][k] - rng.uniform(0, w), 0, w_img - w))
        else:
            cx0, cy0 = rng.uniform(0, w_img - w), rng.uniform(0, h_img - h)
        margin = 0.3 * h  # keep neighbouring lines' ascenders and descenders out
        clear = (
            (taken[:, 0] > cx0 + w + margin)
            | (taken[:, 2] < cx0 - margin)
            | (taken[:, 1] > cy0 + h + margin)
            | (taken[:, 3] < cy0 - margin)
        )
        if clear.all():
            crop = img[int(cy0) : int(cy0 + h), int(cx0) : int(cx0 + w)]
            return cv2.cvtColor(crop, cv2.COLOR_RGB2GRAY) if rng.random() < 0.6 else crop
    return None


def _unlabelled_ink(img: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of pixels clearly darker than the paper that lie in no labelled line box."""
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY) if img.ndim == 3 else img
    dark = gray < np.median(gray) - STRAY_INK_CONTRAST
    for x0, y0, x1, y1 in boxes.astype(int):
        dark[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)] = False
    return np.nonzero(dark)
