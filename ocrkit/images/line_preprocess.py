"""Line-crop preprocessing shared by training, evaluation, torch and ONNX inference.

numpy/OpenCV only (no torch) so the torch-free runtime can import it. The settings travel with the
model in the folder's settings (ocrkit.hub.model_folder), so inference can never resize differently from
training.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ocrkit.images.line_band import cut_to_line
from ocrkit.images.preprocess import letterbox, padded_size, to_rgb_uint8


@dataclass(frozen=True)
class LinePreprocess:
    longest: int = 512  # long side scaled to this (up or down), aspect kept
    divisor: int = 16  # both sides padded to a multiple of this (= ViT patch size)
    max_height: int = 0  # >0: also cap the scaled height (short words are not blown up to L wide); 0 = off
    # with max_height: a line wider than `longest` keeps max_height and is read in overlapping windows of
    # `longest` px (ocrkit.decode.read) instead of being shrunk below the height the model reads best at
    windowed: bool = False
    grayscale: bool = True  # colour carries no text information; gray narrows the synthetic→real gap
    # cut a loosely framed crop (blank margins, a neighbour's descenders) to its line's rows before
    # scaling, the neighbours' pieces of ink painted over (ocrkit.images.line_band); tight crops keep
    # their rows
    trim_margins: bool = False
    pad_value: int = 0  # letterbox and batch padding value (uint8, before normalisation)
    mean: float = 0.5  # pixel = (x / 255 - mean) / std
    std: float = 0.5

    def target_longest(self, height: int, width: int, fit_width: bool = False) -> int:
        """The `longest` handed to letterbox for a crop of this size (differs from L only with max_height).
        `fit_width`: shrink a line wider than L to L even when the settings are `windowed` (training)."""
        if self.max_height <= 0:
            return self.longest
        scale = self.max_height / height
        if fit_width or not self.windowed:
            scale = min(self.longest / max(height, width), scale)
        return max(self.divisor, int(scale * max(height, width)) // self.divisor * self.divisor)

    def padded_shape(self, height: int, width: int, fit_width: bool = False) -> tuple[int, int]:
        """(H, W) `apply` will return for a crop of this size, without touching pixels (for bucketing;
        with `trim_margins` a loose crop comes out smaller)."""
        return padded_size(height, width, self.target_longest(height, width, fit_width), self.divisor)

    def apply(self, crop: np.ndarray, fit_width: bool = False) -> np.ndarray:
        """Crop (any dtype/channels) → letterboxed HxWx3 uint8, both sides multiples of `divisor`; wider
        than `longest` only when `windowed` and not `fit_width`."""
        return self.apply_scaled(crop, fit_width)[0]

    def apply_scaled(self, crop: np.ndarray, fit_width: bool = False) -> tuple[np.ndarray, float]:
        """`apply`, and its scale: letterboxed pixels per crop pixel (x of a crop = x letterboxed / scale;
        the margins `trim_margins` cuts are rows, so x keeps its origin)."""
        img = to_rgb_uint8(crop)
        if self.trim_margins:
            img = cut_to_its_line(img)
        if self.grayscale:
            img = np.repeat(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)[:, :, None], 3, axis=2)
        longest = self.target_longest(*img.shape[:2], fit_width)
        out, geometry = letterbox(img, longest=longest, divisor=self.divisor, pad_value=self.pad_value)
        return out, geometry.scale

    def batch(self, images: list[np.ndarray]) -> np.ndarray:
        """Letterboxed uint8 images → float32 NCHW, padded bottom/right to the batch's largest H and W."""
        if not images:
            raise ValueError("empty batch")
        h = max(im.shape[0] for im in images)
        w = max(im.shape[1] for im in images)
        out = np.full((len(images), h, w, 3), self.pad_value, dtype=np.uint8)
        for i, im in enumerate(images):
            out[i, : im.shape[0], : im.shape[1]] = im
        pixels = (out.astype(np.float32) / 255.0 - self.mean) / self.std
        return np.ascontiguousarray(pixels.transpose(0, 3, 1, 2))


def cut_to_its_line(img: np.ndarray) -> np.ndarray:
    """An HxWx3 uint8 crop with its neighbours' ink painted as paper and cut to its line's rows
    (ocrkit.images.line_band.cut_to_line); `img` itself where the cut leaves every pixel as it is, so a
    caller can tell the crops it changes."""
    gray = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    cleaned, top, bottom = cut_to_line(gray)
    if cleaned is gray and (top, bottom) == (0, img.shape[0]):
        return img
    if cleaned is not gray:
        img = np.where((cleaned != gray)[:, :, None], cleaned[:, :, None], img)
    return img[top:bottom]
