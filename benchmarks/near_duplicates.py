"""Near-duplicate refusal: how many copies of reserved pages an import refuses, and how near distinct
pages come (false refusals).

    python benchmarks/near_duplicates.py RESERVED_PAGES... --distinct COCO... [--limit N]

RESERVED_PAGES are folders of images or COCO files (the pages an evaluation list would reserve). Each is
listed twice, as `ocrkit data reserve` writes it (the page's hash and those of its cropped, brightened
and turned copies, `reserve_hashes`) and with the page's own hash only (as lists made by other tools, or
before those copies were added, hold it). Copies are made of every page the way pipelines make them —
margins cut evenly and unevenly, a white border, turns with white corners, brightened paper, and two of
those at once — off the steps `reserve_hashes` lists, and the table gives, per kind of copy, how many an
import refuses with either list (`NearDuplicates.matches_picture`). Then every page of the --distinct
COCO files (pages that are not copies: the imported training pages, say) is checked in all its frames
against the full list: their nearest distances and how many the threshold would refuse (should be 0).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from ocrkit.data.ground_truth.phash import NEAR_BITS, NearDuplicates, frame_hashes, phash, reserve_hashes
from ocrkit.images.io import IMAGE_SUFFIXES, load_image

WHITE = (255, 255, 255)


def cut(image: np.ndarray, left: float, top: float, right: float, bottom: float) -> np.ndarray:
    h, w = image.shape[:2]
    return image[round(h * top) : h - round(h * bottom), round(w * left) : w - round(w * right)]


def turned(image: np.ndarray, degrees: float) -> np.ndarray:
    h, w = image.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    return cv2.warpAffine(image, turn, (w, h), borderValue=WHITE)


def brightened(image: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(image.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def bordered(image: np.ndarray, share: float) -> np.ndarray:
    h, w = image.shape[:2]
    dy, dx = round(h * share), round(w * share)
    return cv2.copyMakeBorder(image, dy, dy, dx, dx, cv2.BORDER_CONSTANT, value=WHITE)


COPIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "margins cut 2 %": lambda im: cut(im, 0.02, 0.02, 0.02, 0.02),
    "margins cut 2.5 %": lambda im: cut(im, 0.025, 0.025, 0.025, 0.025),
    "margins cut 5 %": lambda im: cut(im, 0.05, 0.05, 0.05, 0.05),
    "margins cut 5.5 %": lambda im: cut(im, 0.055, 0.055, 0.055, 0.055),
    "cut unevenly (1, 4, 2, 3 %)": lambda im: cut(im, 0.01, 0.04, 0.02, 0.03),
    "5 % white border": lambda im: bordered(im, 0.05),
    "turned 1°": lambda im: turned(im, 1.0),
    "turned -1.3°": lambda im: turned(im, -1.3),
    "brightened 25 %": lambda im: brightened(im, 1.25),
    "brightened 30 %": lambda im: brightened(im, 1.3),
    "cut 3 %, turned 1°": lambda im: turned(cut(im, 0.03, 0.03, 0.03, 0.03), 1.0),
    "cut 2 %, brightened 30 %": lambda im: brightened(cut(im, 0.02, 0.02, 0.02, 0.02), 1.3),
}


def pages_of(source: Path) -> list[Path]:
    """Image files in a folder (recursively), or the pages of a COCO file."""
    if source.is_dir():
        return sorted(p for p in source.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    coco = json.loads(source.read_text(encoding="utf-8"))
    return [source.parent / image["file_name"] for image in coco["images"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reserved", nargs="+", type=Path, help="folders of pages or COCO files to reserve")
    parser.add_argument("--distinct", nargs="*", type=Path, default=[], help="COCO files of other pages")
    parser.add_argument("--limit", type=int, default=0, help="at most this many distinct pages (0: all)")
    args = parser.parse_args()
    reserved = [load_image(p) for source in args.reserved for p in pages_of(source)]
    full = NearDuplicates([h for image in reserved for h in reserve_hashes(image)])
    own = NearDuplicates([phash(image) for image in reserved])
    print(f"{len(reserved)} reserved pages; {len(full)} hashes listed with their copies, {len(own)} without")
    print("| copy | refused, page's hash only | refused, with its copies' hashes |\n|---|---|---|")
    for name, make in COPIES.items():
        copies = [make(image) for image in reserved]
        refused = [sum(index.matches_picture(c) for c in copies) for index in (own, full)]
        print(f"| {name} | {refused[0]} / {len(copies)} | {refused[1]} / {len(copies)} |")
    distinct = [p for source in args.distinct for p in pages_of(source)]
    if args.limit:
        distinct = distinct[: args.limit]
    if distinct:
        nearest = sorted(
            (min(full.nearest(v) for v in frame_hashes(load_image(p))), p.name) for p in distinct
        )
        refused = sum(bits <= NEAR_BITS for bits, _ in nearest)
        print(
            f"\n{len(distinct)} distinct pages: nearest {[bits for bits, _ in nearest[:5]]} bits "
            f"({', '.join(name for _, name in nearest[:3])}); refused at {NEAR_BITS} bits: {refused}"
        )


if __name__ == "__main__":
    main()
