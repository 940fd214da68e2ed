"""The one place that resizes and pads images (training, evaluation, torch and ONNX inference).

Torch-free on purpose: `deploy/` imports this module without torch installed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from ocrkit.images.albumentations_import import import_albumentations


@dataclass(frozen=True)
class Geometry:
    """What `letterbox` did to an image, so boxes can be mapped back to original pixels."""

    scale: float  # resized = original * scale (same on both axes: aspect is kept)
    pad_right: int
    pad_bottom: int
    orig_width: int
    orig_height: int
    width: int  # output (padded) width
    height: int  # output (padded) height

    @property
    def resized_size(self) -> tuple[int, int]:
        """(width, height) of the image content before padding."""
        return self.width - self.pad_right, self.height - self.pad_bottom

    def map(self, boxes: np.ndarray) -> np.ndarray:
        """Original-pixel xyxy boxes → letterboxed-pixel xyxy boxes."""
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        rw, rh = self.resized_size
        sx, sy = rw / self.orig_width, rh / self.orig_height
        return (b * np.array([sx, sy, sx, sy])).astype(np.float32)

    def unmap(self, boxes: np.ndarray) -> np.ndarray:
        """Letterboxed-pixel xyxy boxes → original-pixel xyxy boxes, clipped to the image."""
        b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        rw, rh = self.resized_size
        sx, sy = self.orig_width / rw, self.orig_height / rh
        out = b * np.array([sx, sy, sx, sy])
        out[:, [0, 2]] = out[:, [0, 2]].clip(0, self.orig_width)
        out[:, [1, 3]] = out[:, [1, 3]].clip(0, self.orig_height)
        return out.astype(np.float32)


def to_rgb_uint8(image: np.ndarray) -> np.ndarray:
    """Any HxW / HxWx1 / HxWx3 / HxWx4 array of uint8/uint16/float → HxWx3 uint8."""
    img = np.asarray(image)
    if img.dtype == np.uint16:
        img = (img >> 8).astype(np.uint8)
    elif img.dtype != np.uint8:
        img = np.clip(img.astype(np.float64) * (255.0 if img.max(initial=0) <= 1.0 else 1.0), 0, 255)
        img = img.astype(np.uint8)
    if img.ndim == 2:
        return np.ascontiguousarray(np.repeat(img[:, :, None], 3, axis=2))
    if img.ndim != 3:
        raise ValueError(f"expected an HxW or HxWxC image, got shape {img.shape}")
    channels = img.shape[2]
    if channels == 1:
        return np.ascontiguousarray(np.repeat(img, 3, axis=2))
    if channels == 3:
        return np.ascontiguousarray(img)
    if channels == 4:  # composite on white: transparent page areas are paper, not ink
        # round((c·a + 255·(255 − a)) / 255) in uint16, in place: a 100 M px page needs ~1 GB, not ~5 GB
        alpha = img[:, :, 3:4].astype(np.uint16)
        rgb = img[:, :, :3].astype(np.uint16)
        rgb *= alpha
        np.subtract(255, alpha, out=alpha)
        alpha *= 255
        rgb += alpha
        rgb += 127
        rgb //= 255
        return rgb.astype(np.uint8)
    raise ValueError(f"unsupported channel count {channels}")


@dataclass(frozen=True)
class PageSizing:
    """How a page is scaled and padded for the line detector. These values travel together from a model
    folder or a training config to every place a page is letterboxed (training, validation, torch and
    ONNX inference, export), so they are one object with one owner."""

    longest: int  # the long side (square: the side of the square)
    divisor: int = 32  # each side padded to a multiple of this (D-FINE/RT-DETR strides go to 32)
    square: bool = True  # pad to longest × longest; False: page-shaped
    min_short: int = 0  # page-shaped: a narrow page's long side grows until its short side has this ...
    max_longest: int = 0  # ... up to this long side (page_longest); 0 turns it off

    def side(self, height: int, width: int) -> int:
        """The long side a page of this size is scaled to."""
        if self.square:
            return self.longest
        return page_longest(height, width, self.longest, self.divisor, self.min_short, self.max_longest)

    def letterbox(self, image: np.ndarray) -> tuple[np.ndarray, Geometry]:
        """The page scaled and padded for the detector, and the Geometry that maps boxes back."""
        return letterbox(
            image,
            self.longest,
            self.divisor,
            self.square,
            min_short=self.min_short,
            max_longest=self.max_longest,
        )


def letterbox(
    image: np.ndarray,
    longest: int,
    divisor: int = 16,
    square: bool = False,
    pad_value: int = 0,
    interpolation: int = cv2.INTER_AREA,
    min_short: int = 0,
    max_longest: int = 0,
) -> tuple[np.ndarray, Geometry]:
    """Scale the long side to `longest` (up or down), keep aspect, pad bottom/right.

    square=True pads to `longest`×`longest` (fixed detector input); otherwise each side is padded only
    up to the next multiple of `divisor` (variable-size recognizer input). `min_short`/`max_longest`
    let a narrow page have a longer side (`page_longest`). Returns the HxWx3 uint8 array and the
    `Geometry` needed to map boxes back.
    """
    if longest <= 0 or longest % divisor:
        raise ValueError(f"longest={longest} must be a positive multiple of divisor={divisor}")
    if max_longest < 0 or max_longest % divisor:
        raise ValueError(f"max_longest={max_longest} must be 0 or a multiple of divisor={divisor}")
    img = to_rgb_uint8(image)
    h, w = img.shape[:2]
    if h == 0 or w == 0:
        raise ValueError(f"empty image of shape {img.shape}")
    if not square:
        longest = page_longest(h, w, longest, divisor, min_short, max_longest)
    resize, pad = _letterbox_transforms(longest, divisor, square, pad_value, interpolation)
    resized = resize(image=img)["image"]
    out = pad(image=resized)["image"]
    rh, rw = resized.shape[:2]
    oh, ow = out.shape[:2]
    geometry = Geometry(
        scale=longest / max(h, w),
        pad_right=ow - rw,
        pad_bottom=oh - rh,
        orig_width=w,
        orig_height=h,
        width=ow,
        height=oh,
    )
    return out, geometry


@functools.lru_cache(maxsize=64)
def _letterbox_transforms(
    longest: int, divisor: int, square: bool, pad_value: int, interpolation: int
) -> tuple[Any, Any]:
    """albumentations (LongestMaxSize, PadIfNeeded) for one geometry, built once: building them validates
    their arguments, which cost more than resizing a line crop."""
    # here, not at the top: `ocrkit --help` must not load it
    A = import_albumentations()

    # LongestMaxSize rounds the short side; a 1-px sliver must still keep at least one pixel.
    resize = A.LongestMaxSize(max_size=longest, interpolation=interpolation, p=1.0)
    size, multiple = (longest, None) if square else (None, divisor)  # a fixed square, or multiples of divisor
    pad = A.PadIfNeeded(
        min_height=size,
        min_width=size,
        pad_height_divisor=multiple,
        pad_width_divisor=multiple,
        position="top_left",
        border_mode=cv2.BORDER_CONSTANT,
        fill=pad_value,
        p=1.0,
    )
    return resize, pad


def page_longest(
    height: int, width: int, longest: int, divisor: int, min_short: int = 0, max_longest: int = 0
) -> int:
    """The long side a page is scaled to: `longest`, raised until its short side reaches `min_short`
    but to at most `max_longest` (a multiple of `divisor`; 0 turns either off). A receipt's print size
    follows its width, not its length: at a fixed long side a long receipt's lines shrink below what a
    detector finds, while pages of book proportions keep `longest`."""
    if min_short <= 0 or max_longest <= longest:
        return longest
    wanted = min_short * max(height, width) / min(height, width)
    return max(longest, min(max_longest, int(wanted) // divisor * divisor))


def padded_size(height: int, width: int, longest: int, divisor: int = 16) -> tuple[int, int]:
    """(H, W) that `letterbox(..., square=False)` would produce, without touching pixels (for bucketing)."""
    scale = longest / max(height, width)
    rh, rw = max(1, round(height * scale)), max(1, round(width * scale))
    return math.ceil(rh / divisor) * divisor, math.ceil(rw / divisor) * divisor


def detector_input(pixels: np.ndarray) -> np.ndarray:
    """Letterboxed HxWx3 uint8 → float32 [3, H, W] in [0, 1]: D-FINE/RT-DETR rescale only (no mean/std),
    and the torch and ONNX detectors take the same array."""
    return np.ascontiguousarray(pixels.transpose(2, 0, 1), dtype=np.float32) / np.float32(255.0)
