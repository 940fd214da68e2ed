"""Tiny COCO line-detection sets for detector tests: dark bars ("lines") on white pages."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

# Tiny D-FINE widths for tests: built in a second, same code paths as the real sizes.
TINY = dict(
    decoder_layers=1,
    encoder_hidden_dim=32,
    d_model=32,
    decoder_in_channels=[32, 32],
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
)


def make_coco(root: Path, n_images: int = 4, size: tuple[int, int] = (120, 200), seed: int = 0) -> Path:
    """Write `n_images` PNG pages (H, W = size) with 2–4 filled line boxes each + annotations.json."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    images, anns = [], []
    h, w = size
    for i in range(n_images):
        page = np.full((h, w, 3), 255, np.uint8)
        y = 8
        for _ in range(int(rng.integers(2, 5))):
            x0 = int(rng.integers(4, w // 3))
            bw, bh = int(rng.integers(w // 3, w - x0 - 4)), int(rng.integers(6, 14))
            if y + bh > h - 4:
                break
            cv2.rectangle(page, (x0, y), (x0 + bw - 1, y + bh - 1), (30, 30, 30), -1)
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i + 1,
                    "category_id": 1,
                    "bbox": [x0, y, bw, bh],
                    "area": bw * bh,
                    "iscrowd": 0,
                }
            )
            y += bh + int(rng.integers(6, 16))
        name = f"page{i}.png"
        cv2.imwrite(str(root / name), page)
        images.append({"id": i + 1, "file_name": name, "width": w, "height": h})
    path = root / "annotations.json"
    path.write_text(
        json.dumps({"images": images, "annotations": anns, "categories": [{"id": 1, "name": "text_line"}]})
    )
    return path
