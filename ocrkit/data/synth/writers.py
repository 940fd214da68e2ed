"""Files on disk: images, the COCO detection file, the JSONL line manifest, and preview overlays."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw

from ocrkit.data.synth import fonts

CATEGORY = {"id": 1, "name": "text_line"}
PREVIEW_FONT = "dejavu/DejaVuSans.ttf"


def write_image(path: Path, img: np.ndarray) -> None:
    """RGB or grayscale uint8 -> JPEG (q 92) or PNG by suffix."""
    arr = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    params = [cv2.IMWRITE_JPEG_QUALITY, 92] if path.suffix.lower() in (".jpg", ".jpeg") else []
    if not cv2.imwrite(str(path), arr, params):
        raise OSError(f"{path}: could not write image")


def coco_record(
    image_id: int, file_name: str, width: int, height: int, boxes, texts, first_ann_id: int, kind: str
) -> tuple[dict, list[dict]]:  # noqa: ANN001 - sequences of boxes/texts
    image = {"id": image_id, "file_name": file_name, "width": width, "height": height, "layout": kind}
    anns = []
    for k, ((x0, y0, x1, y1), text) in enumerate(zip(boxes, texts, strict=True)):
        w, h = x1 - x0, y1 - y0
        anns.append(
            {
                "id": first_ann_id + k,
                "image_id": image_id,
                "category_id": CATEGORY["id"],
                "bbox": [round(x0, 2), round(y0, 2), round(w, 2), round(h, 2)],
                "area": round(w * h, 2),
                "iscrowd": 0,
                "text": text,
            }
        )
    return image, anns


def write_coco(path: Path, images: list[dict], annotations: list[dict], info: dict) -> None:
    data = {"info": info, "images": images, "annotations": annotations, "categories": [CATEGORY]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def write_jsonl(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def draw_preview(img: np.ndarray, boxes, texts, path: Path, max_side: int = 1400) -> None:  # noqa: ANN001
    """Boxes (red) with their texts (blue) so a person can check one tight box per line."""
    pil = Image.fromarray(img).convert("RGB")
    scale = min(1.0, max_side / max(pil.size))
    if scale < 1:
        pil = pil.resize((round(pil.width * scale), round(pil.height * scale)), Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(pil)
    font = fonts.load(PREVIEW_FONT, 9)
    for (x0, y0, x1, y1), text in zip(boxes, texts, strict=True):
        draw.rectangle([x0 * scale, y0 * scale, x1 * scale, y1 * scale], outline=(230, 0, 0), width=1)
        draw.text((x0 * scale, max(0, y0 * scale - 11)), text[:60], fill=(0, 0, 200), font=font)
    pil.save(path)


def draw_line_sheet(crops: list[np.ndarray], texts: list[str], path: Path, width: int = 900) -> None:
    """The first line crops stacked with their labels underneath."""
    font = fonts.load(PREVIEW_FONT, 13)
    rows = []
    for crop, text in zip(crops, texts, strict=True):
        pil = Image.fromarray(crop).convert("RGB")
        if pil.width > width:
            pil = pil.resize((width, max(1, round(pil.height * width / pil.width))))
        rows.append((pil, text))
    sheet = Image.new("RGB", (width, sum(p.height + 22 for p, _ in rows) + 4), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    y = 2
    for pil, text in rows:
        sheet.paste(pil, (0, y))
        draw.text((2, y + pil.height + 2), text, fill=(0, 0, 200), font=font)
        y += pil.height + 22
    sheet.save(path)
