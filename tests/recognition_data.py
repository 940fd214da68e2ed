"""Tiny rendered text-line manifests for the recognizer tests (cv2.putText: fast, no fonts needed)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np


def render_line(text: str, height: int = 24) -> np.ndarray:
    scale = height / 30
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    img = np.full((h + base + 6, w + 6, 3), 255, np.uint8)
    cv2.putText(img, text, (3, h + 3), cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), 1, cv2.LINE_AA)
    return img


def write_manifest(folder: Path, texts: list[str], sizes: bool = False) -> Path:
    """images/NNN.png + lines.jsonl with relative paths (optionally with width/height)."""
    (folder / "images").mkdir(parents=True, exist_ok=True)
    with (folder / "lines.jsonl").open("w", encoding="utf-8") as fh:
        for i, text in enumerate(texts):
            img = render_line(text)
            cv2.imwrite(str(folder / "images" / f"{i:03d}.png"), img)
            rec = {"image": f"images/{i:03d}.png", "text": text}
            if sizes:
                rec.update(width=img.shape[1], height=img.shape[0])
            fh.write(json.dumps(rec) + "\n")
    return folder / "lines.jsonl"
