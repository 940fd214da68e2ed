"""Word boxes: how well the words ocrkit places match rendered words, and what placing them costs.

    python benchmarks/words.py [--pages 8] [--backend onnx] [--rounds 5]

Renders pages of printed lines (the shipped training faces: serif, sans, typewriter, mono, condensed,
Fraktur) whose every word's box is known, reads them with the shipped models, and prints per face the share
of rendered words that a placed word covers with IoU >= 0.5, then times reading the same line crops with
and without positions (`recognize` against `read_placed`, interleaved rounds, one process).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from PIL import Image, ImageDraw

from ocrkit.data.synth import fonts
from ocrkit.pages.document import Page

FACES = ("serif", "sans", "typewriter", "mono", "condensed", "fraktur")
WORDS = (
    "the of and invoice total 12.50 Rechnung Straße München 1784 page 03/11/2024 café naïve Zürich "
    "Quittung Betrag EUR 4,99 report chapter Société Générale No. 17 letter Oktober, déjà révision "
    "Hamburg London (see above) item price amount 2× paid; signed: account 0043-2219 rue des Lilas"
).split()


def render_page(
    seed: int, face_style: str
) -> tuple[np.ndarray, list[tuple[str, list[float]]], list[list[float]]]:
    """A white page of 10 printed lines in one face; every word's text and ink box, and every line's box
    (its words' boxes joined, a quarter of the font size around them)."""
    rng = np.random.default_rng(seed)
    page = Image.new("RGB", (1400, 900), "white")
    draw = ImageDraw.Draw(page)
    face = fonts.pick(face_style, rng)
    words: list[tuple[str, list[float]]] = []
    lines: list[list[float]] = []
    y = 40
    for _ in range(10):
        size = int(rng.integers(24, 40))
        font = fonts.load(face, size)
        space = draw.textlength(" ", font=font)
        x = float(rng.integers(30, 120))
        first = len(words)
        for word in rng.choice(WORDS, size=int(rng.integers(3, 8))):
            word = "".join(c for c in str(word) if c in fonts.coverage(face))
            width = draw.textlength(word, font=font)
            if not word or x + width > 1370:
                break
            draw.text((x, y), word, font=font, fill="black")
            words.append((word, list(draw.textbbox((x, y), word, font=font))))
            x += width + space
        if len(words) > first:
            boxes = np.array([box for _, box in words[first:]])
            pad = size / 4
            lines.append(
                [
                    boxes[:, 0].min() - pad,
                    boxes[:, 1].min() - pad,
                    boxes[:, 2].max() + pad,
                    boxes[:, 3].max() + pad,
                ]
            )
        y += int(size * 2.0)
    return np.asarray(page), words, lines


def iou(a: list[float], b: list[float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(w, 0.0) * max(h, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def matched_share(page: Page, rendered: list[tuple[str, list[float]]], threshold: float = 0.5) -> float:
    """Share of rendered words that some placed word overlaps with IoU >= threshold."""
    placed = [w.bbox for line in page.lines for w in line.words]
    hits = sum(any(iou(box, p) >= threshold for p in placed) for _, box in rendered)
    return hits / max(len(rendered), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8, help="pages per face")
    parser.add_argument("--backend", choices=("torch", "onnx"), default="torch")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="timing rounds of each way of reading")
    args = parser.parse_args()
    from ocrkit import OCR
    from ocrkit.images.line_crops import crop_lines

    ocr = OCR(backend=args.backend, threads=args.threads)
    print(f"load average {os.getloadavg()[0]:.2f}; backend {args.backend}, {args.threads} threads")
    print("share of rendered words a placed word covers with IoU >= 0.5, in lines found by the detector")
    print("and in the rendered lines' own boxes (word placement alone)")
    print(f"{'face':12s} {'words':>6s} {'detected':>9s} {'given':>9s}")
    crops, total, hits = [], 0, np.zeros(2)
    for k, style in enumerate(FACES):
        words, share = 0, np.zeros(2)
        for n in range(args.pages):
            image, rendered, line_boxes = render_page(1000 * k + n, style)
            found, given = ocr.read(image), ocr.read_boxes(image, np.array(line_boxes))
            crops += crop_lines(image, given.boxes())
            words += len(rendered)
            share += [matched_share(page, rendered) * len(rendered) for page in (found, given)]
        print(f"{style:12s} {words:6d} {share[0] / words:9.3f} {share[1] / words:9.3f}")
        total, hits = total + words, hits + share
    print(f"{'all':12s} {total:6d} {hits[0] / total:9.3f} {hits[1] / total:9.3f}")
    timings: dict[str, list[float]] = {"recognize": [], "read_placed": []}
    for _ in range(args.rounds):
        for name in timings:
            started = time.perf_counter()
            getattr(ocr.recognizer, name)(crops)
            timings[name].append(time.perf_counter() - started)
    plain, placed = (min(timings[k]) for k in ("recognize", "read_placed"))
    cost = placed / plain - 1
    print(f"{len(crops)} lines: recognize {plain:.3f} s, with positions {placed:.3f} s ({cost:+.1%})")


if __name__ == "__main__":
    main()
