"""Images/s of one detector training step (forward + CIoU loss + backward + AdamW) per model and size.

Synthetic input (random pixels, `--lines` text-line boxes per image) so only the model step is timed;
data loading is measured separately by the trainer's s/step. Other jobs on the machine distort the
numbers: the script prints the load average next to the table — compare runs at similar load.

  python benchmarks/detector_train_step.py --models dfine:n dfine:n8 dfine:s rtdetr_v2:r18 --size 640
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from ocrkit.detection.config import DEFAULT_NUM_QUERIES
from ocrkit.detection.factory import create_detector


def make_labels(batch: int, lines: int, gen: torch.Generator) -> list[dict[str, torch.Tensor]]:
    """Page-like targets: `lines` thin boxes stacked top to bottom (normalised cxcywh)."""
    labels = []
    for _ in range(batch):
        width = torch.rand(lines, generator=gen) * 0.5 + 0.2
        cy = torch.linspace(0.05, 0.95, lines)
        boxes = torch.stack([0.1 + width / 2, cy, width, torch.full((lines,), 0.6 / lines)], 1)
        labels.append({"class_labels": torch.zeros(lines, dtype=torch.int64), "boxes": boxes})
    return labels


def time_step(arch: str, size: str, args: argparse.Namespace) -> tuple[float, float, int]:
    """Median wall and process-CPU seconds per training step after warm-up, and the parameter count.

    CPU seconds are what a step costs even when other jobs share the cores (with 1 thread they equal
    the wall time of an idle core); wall seconds are what you wait for on this machine right now.
    """
    torch.manual_seed(0)
    overrides = {"decoder_layers": args.decoder_layers} if args.decoder_layers else {}
    model = create_detector(arch, size, args.queries, args.denoising, **overrides)
    memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=memory_format)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=args.fused or None)
    pixels = torch.rand(args.batch, 3, args.size, args.size).contiguous(memory_format=memory_format)
    labels = make_labels(args.batch, args.lines, torch.Generator().manual_seed(0))
    times, cpu_times = [], []
    for i in range(args.warmup + args.steps):
        start, cpu_start = time.perf_counter(), time.process_time()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
            loss = model(pixel_values=pixels, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
    median = len(times) // 2
    return sorted(times)[median], sorted(cpu_times)[median], sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        nargs="+",
        default=["dfine:n", "dfine:n8", "dfine:s", "rtdetr_v2:r18"],
        help="arch:size pairs (see ocrkit.detection.factory.ARCHS)",
    )
    parser.add_argument("--size", type=int, default=640, help="square input side (multiple of 32)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--lines", type=int, default=40, help="ground-truth lines per image")
    parser.add_argument("--queries", type=int, default=DEFAULT_NUM_QUERIES)
    parser.add_argument("--denoising", type=int, default=100)
    parser.add_argument("--decoder-layers", type=int, default=0, help="0 = the size's default")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1 = CPU s equal idle wall s)")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (median reported)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--bf16", action="store_true", help="bf16 autocast")
    parser.add_argument("--fused", action="store_true", help="fused AdamW")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    flags = [f for f in ("channels_last", "bf16", "fused") if getattr(args, f)]
    print(
        f"# {args.size}x{args.size}, batch {args.batch}, {args.lines} lines/image, queries {args.queries}, "
        f"denoising {args.denoising}, threads {args.threads}, {' '.join(flags) or 'fp32'}; "
        f"load average before: {os.getloadavg()[0]:.2f}"
    )
    print("| model | params | wall s/step | images/s (wall) | CPU s/step | images per CPU-s |")
    print("|---|---|---|---|---|---|")
    for spec in args.models:
        arch, size = spec.split(":")
        wall, cpu, params = time_step(arch, size, args)
        print(
            f"| {arch}-{size} | {params / 1e6:.1f}M | {wall:.2f} | {args.batch / wall:.2f} | {cpu:.2f} "
            f"| {args.batch / cpu:.2f} |",
            flush=True,
        )
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
