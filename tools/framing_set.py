"""Build the framing test set: validation lines cut tight, with a blank line height above or below, and
with the real neighbouring lines' ascenders and descenders in the crop.

  python tools/framing_set.py data/real/lines/group_val.jsonl data/unseen/lines/val.jsonl \
      --per-manifest 60 --out benchmarks/framing
  ocrkit recognize benchmarks/framing/lines.jsonl --out preds.jsonl
  ocrkit evaluate rec --gt benchmarks/framing/lines.jsonl --pred preds.jsonl   # one row per framing

A second set to tune on, disjoint from the first (other lines, so that what is tuned is not judged on
the lines it was tuned on): `--seed 1 --skip benchmarks/framing/lines.jsonl --out data/framing_tune`.

Each line keeps its subset name with the framing appended (`…/tight`, `…/blank_above`, `…/blank_below`,
`…/neighbours`), so the CER of each framing is read beside the tight crop's. Neighbours are the lines
just above and below on the same page (the manifests list a page's lines in order, named `<page>_NNN`),
scaled to the line's height; 35 % of their height shows, as in dense print with tight leading.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

import cv2
import numpy as np

from ocrkit.data.framing import paper_level
from ocrkit.images.io import load_image

SHOWN = 0.35  # share of a neighbour's height inside the crop
LINE_NAME = re.compile(r"^(?P<page>.+)_(?P<n>\d{3})\.\w+$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifests", nargs="+", type=Path)
    parser.add_argument("--per-manifest", type=int, default=60)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--seed", type=int, default=0, help="order the lines are drawn in (0: the test set's)"
    )
    parser.add_argument("--skip", type=Path, help="a framing set's lines.jsonl whose lines are left out")
    args = parser.parse_args()
    skipped = _line_stems(args.skip) if args.skip else frozenset()
    args.out.mkdir(parents=True, exist_ok=True)
    records = []
    for manifest in args.manifests:
        records += build(manifest, args.per_manifest, args.out, args.seed, skipped)
    with open(args.out / "lines.jsonl", "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"{len(records)} crops in {args.out}")
    return 0


def _line_stems(framing_lines: Path) -> frozenset[str]:
    """The names (without folder and suffix) of the lines a framing set was built from."""
    rows = framing_lines.read_text(encoding="utf-8").splitlines()
    return frozenset(Path(json.loads(row)["image"]).stem for row in rows if row.strip())


def build(
    manifest: Path, count: int, out: Path, seed: int = 0, skipped: frozenset[str] = frozenset()
) -> list[dict]:
    lines = [json.loads(x) for x in manifest.read_text(encoding="utf-8").splitlines() if x.strip()]
    by_name = {rec["image"]: rec for rec in lines}
    candidates = [
        rec
        for rec in lines
        if _neighbour(rec, by_name, -1)
        and _neighbour(rec, by_name, 1)
        and Path(rec["image"]).stem not in skipped
    ]
    random.Random(seed).shuffle(candidates)
    records = []
    for rec in candidates[:count]:
        line = _gray(manifest.parent / rec["image"])
        above = _gray(manifest.parent / _neighbour(rec, by_name, -1)["image"])
        below = _gray(manifest.parent / _neighbour(rec, by_name, 1)["image"])
        height, width = line.shape
        paper = paper_level(line[..., None])
        blank = np.full((height, width), paper, np.uint8)
        variants = {
            "tight": line,
            "blank_above": np.concatenate([blank, line]),
            "blank_below": np.concatenate([line, blank]),
            "neighbours": np.concatenate(
                [_edge(above, height, width, "bottom"), line, _edge(below, height, width, "top")]
            ),
        }
        stem = Path(rec["image"]).stem
        for name, image in variants.items():
            rel = f"{name}/{stem}.jpg"
            (out / name).mkdir(exist_ok=True)
            cv2.imwrite(str(out / rel), _at_line_height(image, height), [cv2.IMWRITE_JPEG_QUALITY, 90])
            records.append(
                {
                    "image": rel,
                    "text": rec["text"],
                    "subset": f"{rec.get('subset', manifest.stem)}/{name}",
                    "case_sensitive": rec.get("case_sensitive", True),
                    "source": rec.get("source", ""),
                    "license": rec.get("license", ""),
                }
            )
    return records


def _neighbour(rec: dict, by_name: dict, step: int) -> dict | None:
    match = LINE_NAME.match(Path(rec["image"]).name)
    if match is None:
        return None
    name = f"{match['page']}_{int(match['n']) + step:03d}{Path(rec['image']).suffix}"
    return by_name.get(str(Path(rec["image"]).with_name(name)))


def _gray(path: Path) -> np.ndarray:
    return cv2.cvtColor(load_image(path), cv2.COLOR_RGB2GRAY)


def _edge(neighbour: np.ndarray, height: int, width: int, side: str) -> np.ndarray:
    """The neighbour's `side` rows at the line's scale, cut or padded with paper to the line's width."""
    scale = height / neighbour.shape[0]
    scaled = cv2.resize(
        neighbour, (max(1, round(neighbour.shape[1] * scale)), height), interpolation=cv2.INTER_AREA
    )
    scaled = scaled[:, :width]
    if scaled.shape[1] < width:
        pad = np.full((height, width - scaled.shape[1]), paper_level(scaled[..., None]), np.uint8)
        scaled = np.concatenate([scaled, pad], axis=1)
    rows = max(1, round(SHOWN * height))
    return scaled[height - rows :] if side == "bottom" else scaled[:rows]


def _at_line_height(image: np.ndarray, line_height: int) -> np.ndarray:
    """Scaled so that the line is at most 32 px tall: the height the model reads a tight crop at, so
    every framing keeps the line's pixels, and the set stays small enough for the repository."""
    if line_height <= 32:
        return image
    scale = 32 / line_height
    size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


if __name__ == "__main__":
    raise SystemExit(main())
