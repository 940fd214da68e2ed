"""COCO line-detection dataset: page images from disk → letterboxed pages + their line boxes in pixels.

Pages are pre-rendered once and read from disk every epoch (rendering on the fly would compete
with training for the CPU). Augmentations run on the original page with box tracking, then the
EXACT inference letterbox is applied (DETR detectors are sensitive to resize differences). Turning
pages and boxes into the model's tensors and labels is the detector's job (ocrkit.detection.batch).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import albumentations as A
import cv2
import numpy as np
import torch
from torch.utils.data import Dataset

from ocrkit.data.packed import decode_image, is_packed, read_packed_pages
from ocrkit.data.scan_artefacts import add_scan_artefacts
from ocrkit.images import boxes as B
from ocrkit.images.io import load_image
from ocrkit.images.preprocess import PageSizing
from ocrkit.util.errors import InputError

if TYPE_CHECKING:  # pycocotools is in the train extra: imported where a COCO file is read
    from pycocotools.coco import COCO


@dataclass
class AugmentConfig:
    enabled: bool = True  # False for validation / debugging
    crop_p: float = 0.3  # random crop that keeps every line whole (zoom in)
    zoom_out_p: float = 0.3  # shrink the page on a paper-white canvas (smaller lines)
    zoom_out_min: float = 0.7  # smallest zoom-out scale
    rotate_deg: float = 0.5  # max |rotation|; a long line's axis-aligned box grows by width·sin(angle)
    color_p: float = 0.5  # brightness / contrast / gamma
    blur_p: float = 0.2  # Gaussian or motion blur
    noise_p: float = 0.2  # Gaussian noise
    jpeg_p: float = 0.2  # JPEG artefacts
    # dark page edges, blots, bars and specks drawn on the paper beside the lines, so the detector learns
    # a scan's marks as background (ocrkit.data.scan_artefacts)
    artefacts_p: float = 0.0


def build_augment(cfg: AugmentConfig) -> A.Compose | None:
    """Mild, line-preserving page augmentations (xyxy pixel boxes tracked by albumentations)."""
    if not cfg.enabled:
        return None
    transforms = [
        A.BBoxSafeRandomCrop(erosion_rate=0.0, p=cfg.crop_p),
        A.Affine(
            scale=(cfg.zoom_out_min, 1.0),
            keep_ratio=True,
            border_mode=cv2.BORDER_CONSTANT,
            fill=255,
            p=cfg.zoom_out_p,
        ),
        A.Affine(
            rotate=(-cfg.rotate_deg, cfg.rotate_deg),
            border_mode=cv2.BORDER_CONSTANT,
            fill=255,
            p=1.0 if cfg.rotate_deg > 0 else 0.0,
        ),
        A.OneOf([A.RandomBrightnessContrast(0.25, 0.3), A.RandomGamma((70, 150))], p=cfg.color_p),
        A.OneOf([A.GaussianBlur(blur_limit=(3, 5)), A.MotionBlur(blur_limit=(3, 5))], p=cfg.blur_p),
        A.GaussNoise(std_range=(0.01, 0.05), p=cfg.noise_p),
        A.ImageCompression(quality_range=(40, 90), p=cfg.jpeg_p),
    ]
    return A.Compose(
        transforms,
        bbox_params=A.BboxParams(
            format="pascal_voc",
            label_fields=["labels"],
            min_visibility=0.5,
            clip=True,
            filter_invalid_bboxes=True,
        ),
    )


def load_coco(ann_file: str | Path) -> COCO:
    """pycocotools COCO object; a missing or malformed file raises InputError naming it."""
    ann_file = Path(ann_file)
    if not ann_file.is_file():
        raise InputError(ann_file, "COCO annotation file not found")
    from pycocotools.coco import COCO

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return COCO(str(ann_file))
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(ann_file, f"not a valid COCO detection file ({exc})") from None


class CocoDetectionDataset(Dataset):
    """Items: {"pixels": letterboxed HxWx3 uint8, "boxes": xyxy float32 [N, 4] in the pixels of the
    (augmented) page before the letterbox, "geometry": Geometry (that letterbox), "image_id": int}."""

    def __init__(
        self,
        ann_file: str | Path,
        sizing: PageSizing,
        augment: AugmentConfig | None = None,
        limit: int = 0,
    ) -> None:
        self._packed: dict[int, bytes] = {}
        if is_packed(str(ann_file)):  # Parquet shards (`ocrkit data pack`): the pages' bytes stay in memory
            self.root = Path(".")
            self.coco = self._coco_from_shards(str(ann_file))
        else:
            self.root = Path(ann_file).parent
            self.coco = load_coco(ann_file)
        self.ids = sorted(self.coco.getImgIds())[: limit or None]
        self.sizing = sizing
        self.augment = build_augment(augment) if augment is not None else None
        self.artefacts_p = augment.artefacts_p if self.augment is not None and augment is not None else 0.0

    def __len__(self) -> int:
        return len(self.ids)

    def boxes_xyxy(self, image_id: int) -> np.ndarray:
        """Ground-truth xyxy boxes in original pixels (crowd regions skipped)."""
        anns = [
            a for a in self.coco.loadAnns(self.coco.getAnnIds(imgIds=image_id)) if not a.get("iscrowd", 0)
        ]
        return B.xywh_to_xyxy(np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4))

    def _coco_from_shards(self, spec: str) -> COCO:
        dataset: dict[str, list] = {
            "images": [],
            "annotations": [],
            "categories": [{"id": 1, "name": "text_line"}],
        }
        for n, row in enumerate(read_packed_pages(spec), 1):
            dataset["images"].append(
                {
                    "id": n,
                    "file_name": row.get("file_name") or f"page{n}",
                    "width": row["width"],
                    "height": row["height"],
                }
            )
            for ann in row["annotations"]:
                dataset["annotations"].append({**ann, "id": len(dataset["annotations"]) + 1, "image_id": n})
            self._packed[n] = row["image"]
        from pycocotools.coco import COCO

        coco = COCO()
        coco.dataset = dataset
        with contextlib.redirect_stdout(io.StringIO()):
            coco.createIndex()
        return coco

    def page_sizes(self) -> list[tuple[int, int]]:
        """(height, width) of each page before augmentation, from the annotation file (for bucketing)."""
        return [(img["height"], img["width"]) for img in self.coco.loadImgs(self.ids)]

    def image_path(self, image_id: int) -> Path:
        return self.root / self.coco.loadImgs(image_id)[0]["file_name"]

    def load(self, image_id: int) -> np.ndarray:
        """The page as RGB uint8, from disk or from the shard bytes."""
        data = self._packed.get(image_id)
        return (
            load_image(self.image_path(image_id)) if data is None else decode_image(data, f"page {image_id}")
        )

    def __getitem__(self, index: int) -> dict[str, Any]:
        image_id = self.ids[index]
        image = self.load(image_id)
        xyxy = self.boxes_xyxy(image_id)
        h, w = image.shape[:2]
        xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(0, w)
        xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(0, h)
        xyxy = xyxy[B.area(xyxy) > 0]
        if self.augment is not None:
            # albumentations keeps its own RNG; derive it from torch's so seeded runs (and resumes) repeat
            self.augment.set_random_seed(int(torch.randint(2**31 - 1, ())))
            out = self.augment(image=image, bboxes=xyxy, labels=np.zeros(len(xyxy), np.int64))
            image, xyxy = out["image"], np.asarray(out["bboxes"], np.float32).reshape(-1, 4)
            rng = np.random.default_rng(int(torch.randint(2**31 - 1, ())))
            if rng.random() < self.artefacts_p:
                image = add_scan_artefacts(image, xyxy, rng)
        pixels, geometry = self.sizing.letterbox(image)
        return {"pixels": pixels, "boxes": xyxy, "geometry": geometry, "image_id": image_id}
