"""Line-recognition dataset: a JSONL manifest of `{"image": path, "text": ...}` records (manifest.py).

Optional "width"/"height" keys spare the bucketing sampler from opening every image header.
Items are the (augmented) crop and its text as they are: the recognizer's collator letterboxes and
tokenizes them with the model's own settings, so this module knows nothing about any model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import albumentations as A
import cv2
import numpy as np
from PIL import Image
from torch.utils.data import Dataset

from ocrkit.data.framing import frame_line, paper_level
from ocrkit.data.manifest import read_manifest
from ocrkit.data.mixing import mixture, parse_sources
from ocrkit.data.packed import decode_image, is_packed, read_packed_lines
from ocrkit.images.io import load_image
from ocrkit.util.errors import InputError


def light_augment() -> A.Compose:
    """Scan-like variation that never changes which characters are legible."""
    return A.Compose(
        [
            A.Affine(
                rotate=(-1.0, 1.0),
                shear={"x": (-6.0, 6.0), "y": (0.0, 0.0)},
                scale=(0.95, 1.05),
                fit_output=True,
                border_mode=cv2.BORDER_REPLICATE,
                p=0.5,
            ),
            A.RandomBrightnessContrast(brightness_limit=0.2, contrast_limit=0.3, p=0.5),
            A.OneOf(
                [A.GaussianBlur(blur_limit=(3, 3), sigma_limit=(0.3, 1.0)), A.MotionBlur(blur_limit=(3, 3))],
                p=0.2,
            ),
            A.Morphological(scale=(1, 2), operation="erosion", p=0.05),
            A.Morphological(scale=(1, 2), operation="dilation", p=0.05),
            A.GaussNoise(std_range=(0.01, 0.06), p=0.2),
            A.Downscale(scale_range=(0.5, 0.9), p=0.15),
            A.ImageCompression(quality_range=(40, 95), p=0.2),
        ]
    )


def scan_augment(p: float) -> A.Compose:
    """With probability `p`, what real scans do and our renderer does not: faces wider or narrower than
    any bundled font (horizontal stretch), thinner or bolder strokes, faded or over-inked print, sharpened
    or warped scans. The synthetic-to-real gap, not the step count, limits the shipped recognizer."""
    return A.Compose(
        [
            A.Affine(
                scale={"x": (0.75, 1.3), "y": (1.0, 1.0)},
                fit_output=True,
                border_mode=cv2.BORDER_REPLICATE,
                p=0.6,
            ),
            A.OneOf(
                [
                    A.Morphological(scale=(1, 2), operation="erosion"),
                    A.Morphological(scale=(1, 2), operation="dilation"),
                ],
                p=0.3,
            ),
            A.OneOf([A.RandomGamma(gamma_limit=(50, 200)), A.RandomToneCurve(scale=0.3)], p=0.4),
            A.OneOf(
                [A.Sharpen(alpha=(0.2, 0.5)), A.GridDistortion(num_steps=4, distort_limit=0.15)],
                p=0.25,
            ),
        ],
        p=p,
    )


def training_augment(scan_share: float) -> A.Compose:
    """The light block on every crop, plus the scan block on `scan_share` of them (0: light only)."""
    return A.Compose([light_augment(), scan_augment(scan_share)]) if scan_share > 0 else light_augment()


def read_line_sources(spec: str | list, total: int = 0, seed: int = 0) -> list[dict[str, Any]]:
    """One manifest / Parquet shard glob, or a weighted list of them (ocrkit/data/mixing.py)."""
    sources = parse_sources(spec, "data.train")
    loaded = [(read_packed_lines(path) if is_packed(path) else read_manifest(path), w) for path, w in sources]
    if len(loaded) == 1 and not total:
        return loaded[0][0]
    return mixture(loaded, total, seed)


class LinesDataset(Dataset):
    """Items: {"image": HxWx3 uint8 crop (augmented when training), "text": str, "case_sensitive": bool}."""

    def __init__(
        self,
        manifest: str | Path | list,
        augment: bool = False,
        scan_augment_p: float = 0.0,
        limit: int = 0,
        max_chars: int = 0,
        epoch_lines: int = 0,
        glue_share: float = 0.0,
        box_jitter: float = 0.0,
        frame_share: float = 0.0,
    ) -> None:
        self.manifest = manifest
        self.box_jitter = box_jitter if augment else 0.0
        self.frame_share = frame_share if augment else 0.0
        self.records = read_line_sources(
            manifest if isinstance(manifest, list) else str(manifest), epoch_lines
        )
        if glue_share > 0:
            self.records += glued_records(self.records, glue_share, max_chars)
        if max_chars:  # a truncated label would teach the decoder to stop while text remains
            self.records = [r for r in self.records if len(r["text"]) <= max_chars]
            if not self.records:
                raise InputError(manifest, f"no line has <= {max_chars} characters (data.max_chars)")
        if 0 < limit < len(self.records):  # a seeded sample over the whole manifest: its first lines
            # come from a handful of pages (manifests are in page order), a noisy, layout-biased selector
            picked = np.random.default_rng(0).choice(len(self.records), limit, replace=False)
            self.records = [self.records[i] for i in sorted(picked)]
        self.augment = training_augment(scan_augment_p) if augment else None
        self._sizes: list[tuple[int, int]] | None = None

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: int) -> dict[str, Any]:
        rec = self.records[index]
        image = _record_pixels(rec)
        if self.box_jitter > 0:
            image = jitter_edges(image, self.box_jitter)
        if self.frame_share > 0 and np.random.random() < self.frame_share:
            rng = np.random.default_rng(np.random.randint(2**31))
            above, below = (_record_pixels(self.records[i]) for i in rng.integers(0, len(self.records), 2))
            image = frame_line(image, above, below, rng)
        if self.augment is not None:
            image = self.augment(image=image)["image"]
        return {
            "image": image,
            "text": rec["text"],
            "case_sensitive": rec.get("case_sensitive", True) is not False,
        }

    def image_sizes(self) -> list[tuple[int, int]]:
        """(H, W) of each crop before augmentation, from manifest width/height or the image header (cached):
        enough for a sampler to bucket lines by their letterboxed shape without decoding pixels."""
        if self._sizes is None:
            self._sizes = [_original_size(r) for r in self.records]
        return self._sizes


def jitter_edges(image: np.ndarray, sd: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """The crop as a detector might have cut it: each edge moved in (trimmed) or out (padded with the
    paper colour) by a normal shift of `sd` line heights, clipped to 2.5 sd.

    Why: annotated crops are cut at the polygon's box, detected boxes are not. On the real validation
    pages, detector 0.5.0's left edge sits more than 0.1 line heights inside the annotated box on 25 % of
    matched receipt lines and 51 % of typewritten ones, and the recognizer then misreads the first
    character ("2" as "7") that it reads right at the annotated box."""
    height, width = image.shape[:2]
    left, top, right, bottom = np.round(
        np.clip((rng or np.random).normal(0.0, sd, 4), -2.5 * sd, 2.5 * sd) * height
    ).astype(int)
    # trims never take more than a quarter of the crop's height or width
    left, right = (min(v, width // 4) for v in (left, right))
    top, bottom = (min(v, height // 4) for v in (top, bottom))
    image = image[max(top, 0) : height - max(bottom, 0), max(left, 0) : width - max(right, 0)]
    pads = (max(-top, 0), max(-bottom, 0), max(-left, 0), max(-right, 0))
    if not any(pads):
        return image
    return cv2.copyMakeBorder(image, *pads, cv2.BORDER_CONSTANT, value=(_paper([image]),) * 3)


def glued_records(records: list[dict[str, Any]], share: float, max_chars: int = 0) -> list[dict[str, Any]]:
    """`share` × len(records) extra lines, each two random lines side by side (text joined by a space).

    Why: real lines run to 150 characters (a full-width line of a 300-dpi page, two columns read as one
    box), far longer than most training lines; glued lines teach the model long inputs with real glyphs.
    Seeded, so a run and its resume see the same records; sizes are known without decoding pixels."""
    rng = np.random.default_rng(len(records))
    out = []
    for _ in range(int(share * len(records))):
        first, second = (records[i] for i in rng.integers(0, len(records), 2))
        text = f"{first['text']} {second['text']}".strip()
        if not first["text"] or not second["text"] or (max_chars and len(text) > max_chars):
            continue
        (h1, w1), (h2, w2) = _original_size(first), _original_size(second)
        out.append(
            {
                "parts": [first, second],
                "text": text,
                "case_sensitive": all(r.get("case_sensitive", True) is not False for r in (first, second)),
                "height": h1,
                "width": w1 + _gap(h1) + max(1, round(w2 * h1 / h2)),
            }
        )
    return out


def glue_images(images: list[np.ndarray]) -> np.ndarray:
    """Crops side by side at the first one's height, separated by a word gap of paper colour."""
    height = images[0].shape[0]
    paper = _paper(images)
    pieces = []
    for i, image in enumerate(images):
        if i:
            pieces.append(np.full((height, _gap(height), 3), paper, dtype=np.uint8))
        width = max(1, round(image.shape[1] * height / image.shape[0]))
        pieces.append(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA))
    return np.concatenate(pieces, axis=1)


def _paper(images: list[np.ndarray]) -> int:
    """The paper's gray level of crops glued together: over all their first and last columns."""
    return paper_level(np.concatenate([im[:, [0, -1]] for im in images]))


def _gap(height: int) -> int:
    return max(2, height // 2)


def _record_pixels(rec: dict[str, Any]) -> np.ndarray:
    parts = rec.get("parts")
    return _pixels(rec) if parts is None else glue_images([_pixels(p) for p in parts])


def _pixels(rec: dict[str, Any]) -> np.ndarray:
    data = rec.get("image_bytes")
    return load_image(rec["image"]) if data is None else decode_image(data, rec["image"])


def _original_size(rec: dict[str, Any]) -> tuple[int, int]:
    if isinstance(rec.get("width"), int) and isinstance(rec.get("height"), int):
        return rec["height"], rec["width"]
    try:
        with Image.open(rec["image"]) as img:  # reads the header only
            return img.height, img.width
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(rec["image"], f"cannot read image size ({exc})") from None
