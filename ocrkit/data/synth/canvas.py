"""A page being drawn: an ink layer, the text lines placed on it (with their exact ink masks) and distractors.

Each text line is rendered into its own mask first, so its box is the tight box of its ink, whatever the
font metrics say. Lines that would break the one-line-one-box rule (outside the page, or so close beside
another line on the same row that the two would read as one run) are not drawn at all.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw

from ocrkit.data.synth import fonts
from ocrkit.data.synth.text import fit_text

INK_THRESHOLD = 64  # mask value (0-255) from which a pixel counts as ink for the box
# Line labels are the ink box grown by these fractions of the font size (x, y): annotators draw line boxes
# with a margin (real SROIE / OCR-D boxes hold their ink in ~83-88 % of their height), and ink-tight labels
# also vary with content (capitals vs descenders), which taught the detector boxes too short to reach IoU 0.5.
LABEL_PAD = (0.05, 0.10)
THIN_MIN_PX = 18  # below this font size a 1-px erosion breaks strokes apart instead of thinning them


@dataclass
class TextLine:
    """One labelled line: its text and its ink mask placed at (x0, y0) on the page."""

    text: str
    x0: int
    y0: int
    mask: np.ndarray  # uint8 coverage, cropped to the ink
    size: int  # font size in px: sets the label's margin

    @property
    def box(self) -> tuple[int, int, int, int]:
        """The ink box (layout and collisions)."""
        h, w = self.mask.shape
        return self.x0, self.y0, self.x0 + w, self.y0 + h

    @property
    def pad(self) -> tuple[float, float]:
        """(x, y) margin of the label box around the ink, in px."""
        return LABEL_PAD[0] * self.size, LABEL_PAD[1] * self.size

    @property
    def label_box(self) -> tuple[float, float, float, float]:
        """The ink box grown by `pad`, unclipped (collisions; render.py clips the labels it writes)."""
        return _grow(self.box, self.pad)


def _grow(box: tuple[float, ...], pad: tuple[float, float]) -> tuple[float, float, float, float]:
    (x0, y0, x1, y1), (px, py) = box, pad
    return x0 - px, y0 - py, x1 + px, y1 + py


@dataclass
class Style:
    """How a line is drawn; the defaults give plain text."""

    stroke: int = 0  # faux bold
    char_spacing: float = 0.0  # extra px between letters (letter-spaced emphasis); label stays unspaced
    word_extra: float = 0.0  # extra px per word gap (justified lines)
    baseline_jitter: float = 0.0  # per-word vertical wobble in px (handwriting)
    rotate: float = 0.0  # degrees, whole line (handwriting drift)
    dotmatrix: bool = False  # thermal/dot-matrix printer look
    strength: float = 1.0  # ink density 0..1 (faded print)
    thin: bool = False  # strokes eroded by ~1 px: light faces, worn printer heads (SROIE has both)


def _ink_bbox(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(mask >= INK_THRESHOLD)
    if len(xs) == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def _dot_disk(cell: int) -> np.ndarray:
    yy, xx = np.mgrid[:cell, :cell] + 0.5 - cell / 2
    return ((xx**2 + yy**2) <= (0.5 * cell) ** 2).astype(np.float32)


class Canvas:
    """Page under construction. Coordinates are pixels, origin top-left."""

    def __init__(self, width: int, height: int, rng: np.random.Generator, charset: str) -> None:
        self.w, self.h = width, height
        self.rng = rng
        self.charset = frozenset(charset)
        self.ink = np.zeros((height, width), np.float32)  # main ink coverage 0..1
        self.stamp = np.zeros((height, width), np.float32)  # coloured stamps/logos (no labels)
        self.lines: list[TextLine] = []
        self.min_gap = 1.0  # same-row gap between label boxes (in label heights) below which runs merge

    # --- text ----------------------------------------------------------------------------------------
    def allowed(self, font_rel: str) -> frozenset[str]:
        return self.charset & fonts.coverage(font_rel)

    def fit(self, text: str, font_rel: str) -> str:
        if font_rel in fonts.CAPS_ONLY:
            text = text.upper()
        return fit_text(text, self.allowed(font_rel))

    def measure(self, text: str, font_rel: str, size: int) -> float:
        return fonts.load(font_rel, size).getlength(self.fit(text, font_rel))

    def render(self, text: str, font_rel: str, size: int, style: Style) -> tuple[np.ndarray, int, int] | None:
        """Mask of `text` cropped to its ink, and the ink's (left, top) relative to pen origin/baseline."""
        font = fonts.load(font_rel, size)
        ascent, descent = font.getmetrics()
        pieces: list[tuple[str, float]]  # (string, x advance after it)
        if style.char_spacing:
            pieces = [(c, font.getlength(c) + style.char_spacing) for c in text]
        elif style.word_extra or style.baseline_jitter:
            space = font.getlength(" ") + style.word_extra
            pieces = [(wd, font.getlength(wd) + space) for wd in text.split(" ")]
        else:
            pieces = [(text, 0.0)]
        total = sum(a for _, a in pieces) + font.getlength(pieces[-1][0]) + 2 * size
        pad = size // 2 + style.stroke + 2
        width, height = int(total) + 2 * pad, ascent + descent + 2 * pad + int(2 * style.baseline_jitter)
        img = Image.new("L", (width, height), 0)
        draw = ImageDraw.Draw(img)
        x, base = float(pad), pad + ascent + style.baseline_jitter
        for piece, adv in pieces:
            dy = self.rng.normal(0, style.baseline_jitter) if style.baseline_jitter else 0.0
            draw.text(
                (x, base + dy),
                piece,
                font=font,
                fill=255,
                anchor="ls",
                stroke_width=style.stroke,
                stroke_fill=255,
            )
            x += adv
        mask = np.asarray(img)
        if style.rotate:
            m = cv2.getRotationMatrix2D((width / 2, height / 2), style.rotate, 1.0)
            mask = cv2.warpAffine(mask, m, (width, height), flags=cv2.INTER_LINEAR)
        if style.thin and size >= THIN_MIN_PX:
            mask = cv2.erode(mask, np.ones((2, 2), np.uint8))
        if style.dotmatrix and size >= 16:  # below that a dot pitch of 3 px no longer reads as letters
            cell = max(3, round(size / 7))
            grid = np.tile(_dot_disk(cell), (height // cell + 1, width // cell + 1))[:height, :width]
            grown = cv2.dilate(mask, np.ones((2, 2), np.uint8))
            mask = (grown.astype(np.float32) * grid).astype(np.uint8)
        if style.strength < 1.0:  # before cropping: the box must hold the ink as faint as it is drawn
            mask = (mask.astype(np.float32) * style.strength).astype(np.uint8)
        bb = _ink_bbox(mask)
        if bb is None:
            return None
        left, top, right, bottom = bb
        return mask[top:bottom, left:right], left - pad, top - int(base)

    def text(
        self,
        x: float,
        baseline: float,
        text: str,
        font_rel: str,
        size: int,
        align: str = "left",
        style: Style | None = None,
    ) -> tuple[int, int, int, int] | None:
        """Draw one line run; `x` is its left, centre or right edge per `align`. Returns the box or None."""
        style = style or Style()
        text = self.fit(text, font_rel)
        if not text:
            return None
        rendered = self.render(text, font_rel, size, style)
        if rendered is None:
            return None
        mask, dx, dy = rendered
        h, w = mask.shape
        x0 = {"left": x + dx, "right": x - w, "center": x - w / 2}[align]
        x0, y0 = int(round(x0)), int(round(baseline + dy))
        inside = x0 >= 1 and y0 >= 1 and x0 + w <= self.w - 1 and y0 + h <= self.h - 1
        if not inside or self._collides(x0, y0, w, h, size):
            return None
        region = self.ink[y0 : y0 + h, x0 : x0 + w]
        np.maximum(region, mask.astype(np.float32) / 255.0, out=region)
        self.lines.append(TextLine(text, x0, y0, mask, size))
        return x0, y0, x0 + w, y0 + h

    def _collides(self, x0: int, y0: int, w: int, h: int, size: int) -> bool:
        """True if the run overlaps a line's ink or sits so close beside one on its row that they would merge.

        The same-row gap is measured between label boxes (ink plus LABEL_PAD), the boxes the detector learns
        to keep apart: a lower-case run's ink is short, so an ink-height rule let its label nearly touch."""
        run = _grow((x0, y0, x0 + w, y0 + h), (LABEL_PAD[0] * size, LABEL_PAD[1] * size))
        for ln in self.lines:
            a0, b0, a1, b1 = ln.box
            v_overlap = min(b1, y0 + h) - max(b0, y0)
            if v_overlap <= 0:
                continue
            if v_overlap > 0.25 * min(h, b1 - b0) and max(a0 - (x0 + w), x0 - a1) < 0:
                return True
            la0, lb0, la1, lb1 = ln.label_box
            label_h, other_h = run[3] - run[1], lb1 - lb0
            same_row = min(lb1, run[3]) - max(lb0, run[1]) > 0.5 * min(label_h, other_h)
            label_gap = max(la0 - run[2], run[0] - la1)
            if same_row and label_gap < self.min_gap * max(label_h, other_h):
                return True
        return False

    def trim_height(self, height: float) -> None:
        """Cut the page below `height` (receipts end where the printing ends), never through a line."""
        bottom = max((ln.box[3] for ln in self.lines), default=0) + 2
        self.h = int(min(self.h, max(height, bottom)))
        self.ink, self.stamp = self.ink[: self.h], self.stamp[: self.h]

    # --- distractors (never labelled) -----------------------------------------------------------------
    def rule(
        self,
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        thickness: int = 1,
        dash: int = 0,
        layer: str = "ink",
    ) -> None:
        arr = self.ink if layer == "ink" else self.stamp
        p0, p1 = np.array([x0, y0], float), np.array([x1, y1], float)
        if not dash:
            cv2.line(arr, tuple(int(v) for v in p0), tuple(int(v) for v in p1), 1.0, thickness)
            return
        length = float(np.hypot(*(p1 - p0)))
        for s in np.arange(0, length, 2 * dash):
            a = p0 + (p1 - p0) * s / length
            b = p0 + (p1 - p0) * min(s + dash, length) / length
            cv2.line(arr, tuple(int(v) for v in a), tuple(int(v) for v in b), 1.0, thickness)

    def barcode(self, x0: float, y0: float, w: float, h: float) -> None:
        x = x0
        while x < x0 + w:
            bw = self.rng.integers(1, 5)
            if self.rng.random() < 0.55:
                self.ink[int(y0) : int(y0 + h), int(x) : int(x + bw)] = 1.0
            x += bw

    def stamp_mark(self, cx: float, cy: float, r: float) -> None:
        """Round rubber stamp: rings and spokes in a second colour (no text, so nothing to label)."""
        t = max(2, int(r / 12))
        cv2.circle(self.stamp, (int(cx), int(cy)), int(r), 1.0, t)
        cv2.circle(self.stamp, (int(cx), int(cy)), int(r * 0.72), 1.0, max(1, t // 2))
        for a in self.rng.uniform(0, 2 * np.pi, int(self.rng.integers(3, 9))):
            cv2.line(
                self.stamp,
                (int(cx + 0.75 * r * np.cos(a)), int(cy + 0.75 * r * np.sin(a))),
                (int(cx + 0.95 * r * np.cos(a)), int(cy + 0.95 * r * np.sin(a))),
                1.0,
                t,
            )

    def logo(self, x0: float, y0: float, size: float) -> None:
        """Abstract logo (filled shapes) so detectors learn that dark blobs are not text lines."""
        arr = self.ink if self.rng.random() < 0.6 else self.stamp
        for _ in range(int(self.rng.integers(1, 4))):
            cx, cy = x0 + self.rng.uniform(0.2, 0.8) * size, y0 + self.rng.uniform(0.2, 0.8) * size
            r = int(self.rng.uniform(0.15, 0.45) * size)
            if self.rng.random() < 0.5:
                cv2.circle(arr, (int(cx), int(cy)), r, 1.0, -1 if self.rng.random() < 0.6 else max(2, r // 6))
            else:
                pts = (
                    np.array([cx, cy]) + self.rng.uniform(-r, r, (int(self.rng.integers(3, 6)), 2))
                ).astype(np.int32)
                cv2.fillPoly(arr, [pts], 1.0)

    def scribble(self, x0: float, y0: float, w: float, h: float) -> None:
        """Signature-like stroke."""
        n = int(self.rng.integers(4, 9))
        xs = np.linspace(x0, x0 + w, n * 8)
        ys = y0 + h / 2 + np.cumsum(self.rng.normal(0, h / 6, n * 8))
        ys = np.clip(ys, y0, y0 + h)
        pts = np.stack([xs, cv2.GaussianBlur(ys.reshape(-1, 1), (1, 7), 0).ravel()], 1).astype(np.int32)
        cv2.polylines(self.ink, [pts], False, 1.0, max(1, int(h / 25)), cv2.LINE_AA)

    def checkbox(self, x0: float, y0: float, s: float, ticked: bool) -> None:
        cv2.rectangle(self.ink, (int(x0), int(y0)), (int(x0 + s), int(y0 + s)), 1.0, max(1, int(s / 10)))
        if ticked:
            cv2.line(
                self.ink,
                (int(x0 + 0.2 * s), int(y0 + 0.5 * s)),
                (int(x0 + 0.45 * s), int(y0 + 0.8 * s)),
                1.0,
                2,
            )
            cv2.line(
                self.ink,
                (int(x0 + 0.45 * s), int(y0 + 0.8 * s)),
                (int(x0 + 0.85 * s), int(y0 + 0.15 * s)),
                1.0,
                2,
            )
