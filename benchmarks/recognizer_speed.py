"""Recognizer speed: training lines/s and inference lines/s (batch 1 and batched) on this machine.

    python benchmarks/recognizer_speed.py [--model runs/recognizer_small/model] [--size small]
    python benchmarks/recognizer_speed.py --padding data/synth/lines/train/lines.jsonl --model MODEL_DIR

Without --model a random-init model of --size is timed; it never emits </s>, so inference decodes a fixed
--tokens per line (≈ a 35-character line) to stay comparable with a trained model. Prints the load average:
numbers taken on a busy machine are not comparable.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path

import numpy as np
import torch

from ocrkit.data.sampler import AspectRatioBatchSampler, padding_fraction, random_batches
from ocrkit.decode.ctc import DECODINGS
from ocrkit.decode.read import ReadSettings
from ocrkit.hub.model_folder import read_spec
from ocrkit.images.buckets import same_shape_batches
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.recognition.collate import pad_labels
from ocrkit.recognition.config import RecognizerConfig
from ocrkit.recognition.predictor import Recognizer
from ocrkit.recognition.task import RecognitionTask
from ocrkit.recognition.tokenizer import encode_label

WORDS = "Total Summe MwSt Brot 12,50 € Quittung Kasse 03.11.2024 Artikel Betrag Danke EUR x2 Rabatt".split()


def synthetic_lines(n: int, seed: int = 0) -> list[tuple[np.ndarray, str]]:
    """Black-on-white cv2 text lines, 1-8 words, ~30 px tall (only the shapes matter for speed)."""
    import cv2

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
        (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 1)
        img = np.full((h + base + 8, w + 8, 3), 255, np.uint8)
        cv2.putText(img, text, (4, h + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 0), 1, cv2.LINE_AA)
        out.append((img, text))
    return out


def train_speed(
    task: RecognitionTask, model: torch.nn.Module, lines, batch_size: int, steps: int, bf16: bool = False
) -> float:
    images = [task.preprocess.apply(img) for img, _ in lines]
    labels = [encode_label(task.tokenizer, text) for _, text in lines]
    batches = AspectRatioBatchSampler([im.shape[:2] for im in images], batch_size, seed=0).batches()
    optimizer = torch.optim.AdamW(task.param_groups(model, 1e-4, 0.05), lr=1e-4)
    model.train()
    done, elapsed = 0, 0.0
    for i, idx in enumerate(batches[: steps + 1]):
        batch = {
            "pixel_values": torch.from_numpy(task.preprocess.batch([images[j] for j in idx])),
            "labels": pad_labels([labels[j] for j in idx]),
        }
        start = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = task.loss(model, batch) / task.units(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if i:  # the first step warms up allocators and kernels
            elapsed += time.perf_counter() - start
            done += len(idx)
    return done / elapsed


def infer_speed(rec: Recognizer, crops: list[np.ndarray], batch_size: int, tokens: int | None) -> float:
    start = time.perf_counter()
    if tokens is None:
        rec.recognize(crops, batch_size=batch_size)
    else:  # random-init model: fixed decode length (see module docstring)
        images = [rec.settings.preprocess.apply(c) for c in crops]
        for idx in same_shape_batches([im.shape[:2] for im in images], batch_size):  # as Recognizer does
            pixels = torch.from_numpy(rec.settings.preprocess.batch([images[j] for j in idx]))
            with torch.inference_mode():
                rec.model.generate(
                    pixel_values=pixels,
                    interpolate_pos_encoding=True,
                    min_new_tokens=tokens,
                    max_new_tokens=tokens,
                )
    return len(crops) / (time.perf_counter() - start)


def padding_report(manifest: str, preprocess: LinePreprocess, batch_size: int, limit: int = 4000) -> None:
    """Share of padded patches in batches of a manifest's lines: shuffled vs aspect-ratio buckets."""
    import json

    from PIL import Image

    root = Path(manifest).parent
    shapes = []
    with open(manifest, encoding="utf-8") as f:
        for line, _ in zip(f, range(limit), strict=False):
            with Image.open(root / json.loads(line)["image"]) as im:  # reads the header only
                shapes.append(preprocess.padded_shape(im.height, im.width))
    before = padding_fraction(shapes, random_batches(len(shapes), batch_size))
    after = padding_fraction(shapes, AspectRatioBatchSampler(shapes, batch_size).batches())
    print(
        f"padded patches ({len(shapes)} lines of {manifest}, batch {batch_size}): "
        f"shuffled {before:.1%}, aspect-ratio buckets {after:.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="trained model folder; default: random-init --size")
    parser.add_argument("--size", default="small")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--train-steps", type=int, default=8)
    parser.add_argument("--lines", type=int, default=64, help="lines per inference measurement")
    parser.add_argument("--tokens", type=int, default=36, help="decode length for a random-init model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast in the training measurement")
    parser.add_argument("--padding", metavar="MANIFEST", help="only report batch padding of a lines.jsonl")
    args = parser.parse_args()
    if args.padding:
        preprocess = read_spec(args.model, "recognizer").preprocess if args.model else LinePreprocess()
        padding_report(args.padding, preprocess, args.batch_size)
        return
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), torch threads {torch.get_num_threads()}")

    config = RecognizerConfig()
    config.model.size = args.size
    if args.model:  # its own geometry (the folder's settings), not the config defaults
        config.model.pretrained = args.model
        trained = read_spec(args.model, "recognizer").preprocess
        config.data.longest, config.data.max_height = trained.longest, trained.max_height
    task = RecognitionTask(config)
    model = task.build_model()
    lines = synthetic_lines(max(args.lines, args.batch_size * (args.train_steps + 1)))
    n_params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    print(
        f"model: {args.model or args.size} ({n_params / 1e6:.2f}M params), longest={config.data.longest}, "
        f"max_height={config.data.max_height}, training {'bf16 autocast' if args.bf16 else 'fp32'}"
    )
    speed = train_speed(task, model, lines, args.batch_size, args.train_steps, args.bf16)
    print(f"training:  {speed:6.1f} lines/s (batch {args.batch_size}, forward+backward+AdamW)")

    crops = [img for img, _ in lines[: args.lines]]
    if args.model:  # freshly loaded (the training measurement changed `model`), each decoding it has
        has_head = (Path(args.model) / read_spec(args.model, "recognizer").ctc_head).is_file()
        engines = [
            (d, Recognizer.load(args.model, decoding=d), None) for d in DECODINGS if has_head or d != "ctc"
        ]
    else:
        reader = Recognizer(model.eval(), task.tokenizer, ReadSettings(task.preprocess, "attention"))
        engines = [("attention", reader, args.tokens)]
    for name, rec, tokens in engines:
        for batch_size in (1, args.batch_size):
            subset = crops[:16] if batch_size == 1 else crops
            speed = infer_speed(rec, subset, batch_size, tokens)
            gate = rec.settings.joint.gate if rec.settings.joint is not None else None
            label = name if gate is None else f"{name}, CTC-confidence gate {gate}"
            print(f"inference: {speed:6.1f} lines/s (batch {batch_size}, {label} decoding)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
