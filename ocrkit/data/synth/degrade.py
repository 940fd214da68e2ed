"""Turns a drawn canvas into a scan/photo-like image: paper, ink, bleed-through, geometry, camera noise.

Geometry is applied to the image and to every line's ink hull, so boxes follow the ink after rotation and
perspective. Photometric effects come from albumentations (seeded per page for determinism).
"""

from __future__ import annotations

from functools import lru_cache

import albumentations as A
import cv2
import numpy as np

from ocrkit.data.synth import office
from ocrkit.data.synth.canvas import INK_THRESHOLD, Canvas
from ocrkit.data.synth.layouts.plan import PagePlan
from ocrkit.data.synth.noise import smooth_noise

_PAPER = {
    "white": ((238, 238, 238), 14),
    "thermal": ((232, 232, 228), 14),
    "old": ((222, 205, 170), 22),
    "tinted": ((228, 228, 214), 22),
}
_INK = {
    "black": ((25, 25, 28), 20),
    "blue": ((35, 45, 125), 25),
    "faded": ((85, 85, 90), 30),
    "brown": ((70, 48, 30), 20),
}
_STAMP = ((170, 40, 45), (40, 60, 160), (110, 50, 130))
MAX_PAGE_ANGLE = 0.6  # degrees
MAX_TILT = 0.003  # perspective corner jitter, fraction of the page side
_BOOK_KINDS = ("fraktur", "prose", "letter")  # pages that come from bound books and files
_BACKGROUND = ((60, 50, 40), (150, 120, 85), (90, 90, 95), (200, 200, 195), (25, 25, 25), (120, 140, 160))


def _colour(base: tuple[int, int, int], spread: float, rng: np.random.Generator) -> np.ndarray:
    """Base colour shifted mostly in lightness, only slightly in hue (paper is rarely pink)."""
    shift = rng.uniform(-spread, spread) + rng.uniform(-spread / 4, spread / 4, 3)
    return np.clip(np.array(base, np.float32) + shift, 0, 255)


def compose(cv: Canvas, plan: PagePlan, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Paper x ink -> float32 RGB image (0-255), and the paper colour (used to fill borders)."""
    h, w = cv.h, cv.w
    paper = _colour(*_PAPER[plan.paper], rng)
    if plan.paper == "white" and rng.random() < 0.5:
        paper = np.clip(paper + 12, 0, 255)
    tex = smooth_noise(h, w, rng, int(rng.integers(3, 24))) * np.float32(rng.uniform(2, 14))
    grain = np.empty((h, w), np.float32)
    cv2.setRNGSeed(int(rng.integers(2**31)))  # OpenCV has its own generator: seed it from ours
    cv2.randn(grain, 0.0, float(rng.uniform(0.5, 4)))  # much faster than numpy's normal at page size
    tex += grain
    ink = cv.ink
    if rng.random() < 0.5:
        ink = cv2.GaussianBlur(ink, (0, 0), rng.uniform(0.3, 0.8))
    if rng.random() < 0.4:  # uneven toner / ink density
        ink = ink * np.clip(1 - 0.35 * np.abs(smooth_noise(h, w, rng, 8)), 0, 1)
    is_office = plan.kind in office.OFFICE_KINDS
    carbon = False
    if is_office:
        ink, carbon = office.wear(ink, cv, rng)
    paper_part = 1.0 - ink
    if rng.random() < (0.5 if plan.kind in _BOOK_KINDS else 0.2):
        paper_part *= 1 - show_through(cv.ink, rng)
    ink_col = _colour(*(office.CARBON_INK if carbon else _INK[plan.ink]), rng)
    tex *= paper_part
    # per channel: (paper + texture) * paper_part + ink colour * ink, without HxWx3 temporaries
    channels = [paper_part * np.float32(paper[c]) + tex + ink * np.float32(ink_col[c]) for c in range(3)]
    ruled = office.ruled_paper(cv, rng) if is_office else None
    if ruled is not None:  # printed under the text: the ink covers it
        alpha, rule_col = ruled * paper_part, office.rule_colour(rng)
        channels = [ch * (1 - alpha) + alpha * rule_col[c] for c, ch in enumerate(channels)]
    if cv.stamp.any():
        sc = _STAMP[int(rng.integers(len(_STAMP)))] if plan.kind != "handwriting" else (150, 170, 200)
        alpha = cv.stamp * np.float32(rng.uniform(0.5, 0.85))
        channels = [ch * (1 - alpha) + alpha * np.float32(sc[c]) for c, ch in enumerate(channels)]
    img = cv2.merge(channels)
    if plan.kind in _BOOK_KINDS and rng.random() < 0.3:
        book_edge(img, cv, rng)
    return img, paper


def show_through(ink: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Faint unlabelled text from the other side of the sheet (0..1 darkening), to learn not to box it.

    The reverse page's lines do not sit behind this page's lines: on the real book scans they fill the
    white space of headings and margins, fairly sharp, and the detector boxed them. So the mirrored ink is
    shifted by up to a quarter of the page (wrapping round), not just a few lines. On those scans the
    darkest ghost strokes reach 0.23-0.33 of the ink's contrast, so the ghost reaches 0.4 before blurring."""
    h, w = ink.shape
    ghost = cv2.GaussianBlur(ink[:, ::-1], (0, 0), rng.uniform(0.6, 2.5))
    shift = (int(rng.integers(-h // 4, h // 4 + 1)), int(rng.integers(-w // 20, w // 20 + 1)))
    return np.roll(ghost, shift, axis=(0, 1)) * np.float32(rng.uniform(0.1, 0.4))


def _text_span(cv: Canvas) -> tuple[int, int, int, int]:
    boxes = np.array([ln.label_box for ln in cv.lines]) if cv.lines else np.array([[cv.w, cv.h, 0, 0]])
    return (
        int(boxes[:, 0].min()),
        int(boxes[:, 1].min()),
        int(np.ceil(boxes[:, 2].max())),
        int(np.ceil(boxes[:, 3].max())),
    )


def book_edge(img: np.ndarray, cv: Canvas, rng: np.random.Generator) -> None:
    """Paint the edge of a photographed book into one page margin (in place, never over a line): the stack
    of page edges as fine stripes, then the cover or table beyond it, with a ragged border and grit.

    Real book scans show this beside the text and the detector boxed its stripes and the bright flecks in
    the dark beyond as one-digit lines (OCR-D pages). A smooth cover band did not cure that (a detector
    fine-tuned on it still boxed them), so the cover is textured and strewn with character-sized specks:
    things to learn not to box.
    """
    x0, y0, x1, y1 = _text_span(cv)
    h, w = img.shape[:2]
    side = str(rng.choice(["left", "right", "top", "bottom"], p=[0.35, 0.35, 0.15, 0.15]))
    room = {"left": x0, "right": w - x1, "top": y0, "bottom": h - y1}[side] - 4
    length = h if side in ("left", "right") else w
    depth = int(min(room, length * rng.uniform(0.015, 0.08)))
    if depth < 8:
        return
    band = _edge_view(img, side, depth)  # depth x length x 3, inner side first
    stripes = np.repeat(rng.uniform(0.45, 1.0, depth), rng.integers(1, 4, depth))[:depth]
    shade = stripes * np.linspace(1.0, rng.uniform(0.5, 0.9), depth)  # darker toward the outer edge
    along = 1 + 0.15 * smooth_noise(1, length, rng, 8)[0]  # uneven light along the edge
    band *= (shade[:, None] * along[None, :]).astype(np.float32)[:, :, None]
    if rng.random() < 0.4:  # sprinkled or coloured edges (red-speckled bindings)
        n = depth * length // 300
        rows, cols = rng.integers(0, depth, n), rng.integers(0, length, n)
        band[rows, cols] = _colour((170, 70, 60), 40, rng)
    if rng.random() < 0.2:  # no cover or table in view
        return
    cover = depth * rng.uniform(0.2, 0.7)
    edge = depth - cover * (1 + 0.3 * smooth_noise(1, length, rng, max(4, length // 40))[0])
    beyond = np.arange(depth)[:, None] >= edge[None, :]  # ragged border between pages and cover
    band[beyond] = _rough_surface(depth, length, rng)[beyond]


def _rough_surface(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A dark cloth, board or table seen past the page: blotchy, grainy, with light and dark specks the
    size of printed characters."""
    base = _colour(_BACKGROUND[int(rng.integers(len(_BACKGROUND)))], 20, rng)
    tone = smooth_noise(h, w, rng, 4) * 12 + smooth_noise(h, w, rng, max(4, max(h, w) // 12)) * rng.uniform(
        5, 25
    )
    grit = np.zeros((h, w), np.float32)
    for _ in range(int(h * w * rng.uniform(0.3, 3.0) / 2000)):
        centre = (int(rng.integers(w)), int(rng.integers(h)))
        axes = (int(rng.integers(1, 8)), int(rng.integers(1, 8)))
        value = float(rng.uniform(40, 140) * rng.choice([-0.6, 1.0]))
        cv2.ellipse(grit, centre, axes, float(rng.uniform(0, 180)), 0, 360, value, -1)
    tone += cv2.GaussianBlur(grit, (0, 0), 0.8)
    return np.clip(base[None, None, :] + tone[:, :, None], 0, 255)


def _edge_view(img: np.ndarray, side: str, depth: int) -> np.ndarray:
    """The band `depth` px deep along one side of an image, as a writable (depth, length, 3) view whose
    first row lies innermost."""
    h, w = img.shape[:2]
    if side == "left":
        return img[:, :depth][:, ::-1].transpose(1, 0, 2)
    if side == "right":
        return img[:, w - depth :].transpose(1, 0, 2)
    return img[:depth][::-1] if side == "top" else img[h - depth :]


def _hull(mask: np.ndarray, x0: int, y0: int) -> np.ndarray:
    pts = cv2.findNonZero((mask >= INK_THRESHOLD).astype(np.uint8))
    return (cv2.convexHull(pts).reshape(-1, 2) + (x0, y0)).astype(np.float32)


def geometry(
    img: np.ndarray,
    cv: Canvas,
    plan: PagePlan,
    paper: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """Rotate slightly, tilt and sometimes lay the page on a background; boxes follow the ink.

    Angles stay small (deskewed-scan range): axis-aligned line boxes grow by width * sin(angle), so at
    2 degrees a 1500-px line's box is ~50 px taller than its ink and swallows the neighbouring lines,
    which teaches the detector overlapping boxes and gives the recognizer crops of three lines.
    """
    h, w = img.shape[:2]
    m = np.eye(3)
    if rng.random() < 0.6:
        r = np.vstack(
            [
                cv2.getRotationMatrix2D(
                    (w / 2, h / 2), float(rng.uniform(-MAX_PAGE_ANGLE, MAX_PAGE_ANGLE)), 1.0
                ),
                [0, 0, 1],
            ]
        )
        m = r @ m
    if rng.random() < 0.3:
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        dst = src + rng.uniform(-MAX_TILT, MAX_TILT, (4, 2)).astype(np.float32) * [w, h]
        m = cv2.getPerspectiveTransform(src, dst.astype(np.float32)) @ m
    on_background = rng.random() < (0.5 if plan.kind == "receipt" else 0.12)
    corners = cv2.perspectiveTransform(np.float32([[[0, 0], [w, 0], [w, h], [0, h]]]), m)[0]
    hulls = [_hull(ln.mask, ln.x0, ln.y0) for ln in cv.lines]
    warped = [cv2.perspectiveTransform(hl[None], m)[0] for hl in hulls]
    pts = np.concatenate([corners] + warped) if on_background else np.concatenate(warped or [corners])
    if on_background:
        # SROIE photographs some receipts with a third of the frame or more around the paper, which makes
        # their lines far smaller after the letterbox than any page drawn edge to edge
        wide = plan.kind == "receipt" and rng.random() < 0.4
        margin = np.array([w, h]) * rng.uniform(0.03, 0.4 if wide else 0.15, 2)
        lo, hi = pts.min(0) - margin, pts.max(0) + margin
    else:  # grow the canvas only as far as rotated ink needs, so no line is ever cut off
        lo, hi = np.minimum(pts.min(0) - 2, 0), np.maximum(pts.max(0) + 2, [w, h])
    m = np.array([[1, 0, -lo[0]], [0, 1, -lo[1]], [0, 0, 1]]) @ m
    out_w, out_h = int(np.ceil(hi[0] - lo[0])), int(np.ceil(hi[1] - lo[1]))
    if on_background:
        bg = _colour(_BACKGROUND[int(rng.integers(len(_BACKGROUND)))], 20, rng)
        base = bg[None, None, :] + smooth_noise(out_h, out_w, rng, 6)[..., None] * rng.uniform(5, 30)
        out = cv2.warpPerspective(
            img,
            m,
            (out_w, out_h),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=(0, 0, 0),
        )
        cover = cv2.warpPerspective(np.ones((h, w), np.float32), m, (out_w, out_h), flags=cv2.INTER_LINEAR)
        out = out + base * (1 - cover[..., None])
    else:
        out = cv2.warpPerspective(
            img,
            m,
            (out_w, out_h),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=tuple(float(v) for v in paper),
        )
    boxes = []
    for hl in hulls:
        p = cv2.perspectiveTransform(hl[None], m)[0]
        boxes.append(
            (float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max() + 1), float(p[:, 1].max() + 1))
        )
    return out, boxes


@lru_cache(maxsize=1)
def _photometric() -> A.Compose:
    return A.Compose(
        [
            A.Illumination(mode="linear", intensity_range=(0.05, 0.2), effect_type="darken", p=0.25),
            A.Illumination(mode="corner", intensity_range=(0.05, 0.2), effect_type="darken", p=0.15),
            A.PlasmaShadow(shadow_intensity_range=(0.1, 0.35), roughness=2.5, p=0.1),
            A.RandomBrightnessContrast(brightness_limit=(-0.15, 0.1), contrast_limit=(-0.3, 0.15), p=0.5),
            A.OneOf(
                [
                    A.GaussianBlur(blur_limit=(3, 5), sigma_limit=(0.3, 1.1)),
                    A.MotionBlur(blur_limit=(3, 5)),
                    A.Defocus(radius=(1, 2), alias_blur=(0.1, 0.3)),
                ],
                p=0.3,
            ),
            A.Downscale(scale_range=(0.5, 0.9), p=0.2),
            A.OneOf(
                [
                    A.GaussNoise(std_range=(0.01, 0.06)),
                    A.ISONoise(intensity=(0.05, 0.3)),
                ],
                p=0.35,
            ),
            A.ToGray(p=0.2),
            A.ImageCompression(quality_range=(35, 95), p=0.4),
        ]
    )


def photometric(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Lighting, blur, noise, low resolution, grey, JPEG; sometimes a hard binarisation (bitonal scans)."""
    img = np.clip(img, 0, 255).astype(np.uint8)
    aug = _photometric()
    aug.set_random_seed(int(rng.integers(2**31)))
    img = aug(image=img)["image"]
    if rng.random() < 0.07:
        gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        _, bw = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        img = cv2.cvtColor(bw, cv2.COLOR_GRAY2RGB)
    return img
