"""Check the detectors and the shipped models against the installed transformers (4.57 or 5.x).

  python tools/check_transformers.py                  # each detector arch: build, train, save, load, ONNX
  python tools/check_transformers.py --shipped        # + the shipped models on samples/*.jpg vs tests/golden
  PYTHONPATH=DIR python tools/check_transformers.py   # another transformers, installed in DIR with
                                                      #   pip install --no-deps --target DIR ...

Each detector (D-FINE n, RT-DETR r18, RT-DETRv2 r18, at tiny widths) is built from scratch, trained two
steps (on CUDA in bf16 when a GPU is there), saved as a page-shaped model folder, loaded back and exported
to ONNX, which must read every page. --shipped reads the samples with the shipped detector and recognizer
(same text, boxes within 0.5 px of the stored expectation) and compares the shipped detector's ONNX export
with torch. Prints one JSON line per check; exit code 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the copied tree may not be pip-installed where the GPU is

ARCHS = (("dfine", "n"), ("rtdetr", "r18"), ("rtdetr_v2", "r18"))
# tiny widths: the same code paths as the real sizes, built and trained in seconds
TINY = dict(
    num_queries=30,
    num_denoising=4,
    encoder_positives=2,  # the one-to-many encoder term too
    decoder_layers=1,
    encoder_hidden_dim=32,
    d_model=32,
    encoder_ffn_dim=64,
    decoder_ffn_dim=64,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
)
LONGEST = 128
PAGES = ((300, 200), (200, 300), (128, 128))  # (height, width) of the pages read after export
ONNX_BOX, ONNX_SCORE = 0.05, 1e-4  # page pixels and scores, ONNX vs torch (tests/runtime)
GOLDEN_BOX, GOLDEN_SCORE = 0.5, 1e-3  # as tests/test_golden_outputs.py


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", help="only these archs (dfine, rtdetr, rtdetr_v2)")
    parser.add_argument(
        "--shipped", action="store_true", help="also read the samples with the shipped models"
    )
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="training device")
    parser.add_argument("--out", type=Path, help="folder for the model folders (default: a temporary one)")
    args = parser.parse_args(argv)
    import transformers

    device = (
        "cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu"
    )
    torch.manual_seed(0)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        for arch, size in ARCHS:
            if args.arch and arch not in args.arch:
                continue
            results.append(guarded(check_detector, arch, size, out / arch, device, arch=arch))
        if args.shipped:
            results.append(guarded(check_shipped))
            results.append(guarded(check_shipped_onnx, out / "shipped_onnx"))
    for result in results:
        print(json.dumps({"transformers": transformers.__version__, **result}), flush=True)
    return 0 if results and all(r["ok"] for r in results) else 1


def guarded(check, *args: Any, **labels: Any) -> dict[str, Any]:
    """The check's findings with ok=True, or ok=False and the error (the other checks still run)."""
    try:
        return {"check": check.__name__.removeprefix("check_"), **labels, **check(*args), "ok": True}
    except Exception as exc:  # noqa: BLE001 - reported as a failed check
        traceback.print_exc()
        return {"check": check.__name__.removeprefix("check_"), **labels, "ok": False, "error": repr(exc)}


def check_detector(arch: str, size: str, folder: Path, device: str) -> dict[str, Any]:
    """Build, train two steps, save, load (the same weights), export to ONNX and read pages with it."""
    from ocrkit.detection import create_detector, load_detector
    from ocrkit.detection.factory import detector_config
    from ocrkit.export.detector import export_detector
    from ocrkit.hub.model_folder import DetectorSpec, write_spec
    from ocrkit.images.postprocess import PostConfig
    from ocrkit.images.preprocess import PageSizing
    from ocrkit.runtime import OnnxDetector

    levels = len(detector_config(arch, size).decoder_in_channels)
    model = create_detector(arch, size, decoder_in_channels=[32] * levels, **TINY).to(device)
    losses = train_steps(model, device, steps=2)
    model = model.float().cpu().eval()
    model.save_pretrained(folder, safe_serialization=True)
    post = PostConfig(score_threshold=0.0, nms_iou=0.5, contain_threshold=0.8)
    write_spec(folder, DetectorSpec(PageSizing(LONGEST, 32, False), model.config.model_type, post))

    detector = load_detector(folder)
    trained, loaded = model.state_dict(), detector.model.state_dict()
    weight_diff = max(
        float((trained[k] - loaded[k]).abs().max()) for k in trained if trained[k].is_floating_point()
    )
    rng = np.random.default_rng(0)
    pages = [(rng.random((h, w, 3)) * 255).astype(np.uint8) for h, w in PAGES]
    export_detector(folder, folder / "onnx")
    # a barely trained model scores many queries alike, which torch and onnxruntime rank apart: here the
    # graph must load and read every page; `--shipped` compares the numbers on a trained detector
    read = OnnxDetector(folder / "onnx", threads=1).predict(pages)
    if weight_diff > 0 or not all(len(boxes) for boxes, _ in read):
        raise AssertionError(f"loaded weights differ by {weight_diff}, lines read by ONNX {read}")
    return {
        "size": size,
        "device": device,
        "params": sum(p.numel() for p in model.parameters()),
        "losses": [round(x, 4) for x in losses],
        "onnx_lines": [len(boxes) for boxes, _ in read],
    }


def train_steps(model, device: str, steps: int) -> list[float]:
    """A few AdamW steps on white pages with dark bars (bf16 autocast on CUDA); the losses, all finite."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    pixels = torch.ones(2, 3, LONGEST, LONGEST)
    labels = []
    for i in range(2):
        cy = torch.tensor([0.2, 0.5, 0.8]) + 0.05 * i
        boxes = torch.stack([torch.full((3,), 0.5), cy, torch.full((3,), 0.6), torch.full((3,), 0.06)], 1)
        for cx, y, w, h in boxes.tolist():
            y0, y1 = int((y - h / 2) * LONGEST), int((y + h / 2) * LONGEST)
            x0, x1 = int((cx - w / 2) * LONGEST), int((cx + w / 2) * LONGEST)
            pixels[i, :, y0:y1, x0:x1] = 0.1
        labels.append(
            {"class_labels": torch.zeros(3, dtype=torch.long, device=device), "boxes": boxes.to(device)}
        )
    model.train()
    losses = []
    for _ in range(steps):
        with torch.autocast(device, dtype=torch.bfloat16, enabled=device == "cuda"):
            loss = model(pixel_values=pixels.to(device), labels=labels).loss
        if not torch.isfinite(loss):
            raise AssertionError(f"non-finite training loss {loss.item()}")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return losses


def check_shipped_onnx(folder: Path) -> dict[str, Any]:
    """The shipped detector exported to ONNX finds the lines torch finds on samples/*.jpg."""
    from ocrkit.detection import load_detector
    from ocrkit.export.detector import export_detector
    from ocrkit.images.io import load_image
    from ocrkit.runtime import OnnxDetector

    shipped = ROOT / "ocrkit/models/detector"
    pages = [load_image(path) for path in sorted((ROOT / "samples").glob("*.jpg"))]
    ours = load_detector(shipped).predict(pages)
    export_detector(shipped, folder)
    theirs = OnnxDetector(folder, threads=1).predict(pages)
    box = max(line_difference(a, b) for a, b in zip(ours, theirs, strict=True))
    if box > ONNX_BOX:
        raise AssertionError(f"ONNX boxes differ from torch by {box} px")
    return {"lines": sum(len(b) for b, _ in ours), "max_box_diff_px": box}


def line_difference(ours: tuple, theirs: tuple) -> float:
    """Largest box difference (page pixels) between two (boxes, scores) results of one page; lines of equal
    score may come in either order, so each box is compared with its twin of the same score."""
    (tb, ts), (ob, os_) = ours, theirs
    if len(tb) != len(ob) or np.abs(np.sort(ts) - np.sort(os_)).max(initial=0) > ONNX_SCORE:
        raise AssertionError(f"torch found {len(tb)} lines, ONNX {len(ob)} (or their scores differ)")
    if not len(tb):
        return 0.0
    far = np.abs(ob[:, None] - tb[None]).max(-1) + 1e9 * (np.abs(os_[:, None] - ts[None]) > ONNX_SCORE)
    return float(max(far.min(0).max(), far.min(1).max()))


def check_shipped() -> dict[str, Any]:
    """The shipped detector and recognizer read samples/*.jpg as tests/golden/infer stores it."""
    from ocrkit.pipeline import OCR

    ocr = OCR(threads=1)
    lines = same = 0
    box = det = rec = 0.0
    for path in sorted((ROOT / "samples").glob("*.jpg")):
        expected = json.loads((ROOT / "tests/golden/infer" / f"{path.name}.json").read_text(encoding="utf-8"))
        got = ocr.read(path).lines
        if len(got) != len(expected):
            raise AssertionError(f"{path.name}: {len(got)} lines, expected {len(expected)}")
        for g, w in zip(got, expected, strict=True):
            lines += 1
            same += g.text == w["text"]
            box = max(box, *(abs(a - b) for a, b in zip(g.bbox, w["bbox"], strict=True)))
            det, rec = (
                max(det, abs(g.det_score - w["det_score"])),
                max(rec, abs(g.rec_score - w["rec_score"])),
            )
    if same != lines or box > GOLDEN_BOX or max(det, rec) > GOLDEN_SCORE:
        raise AssertionError(f"{same}/{lines} texts equal, boxes off by {box} px, scores by {max(det, rec)}")
    return {
        "lines": lines,
        "same_text": same,
        "max_box_diff_px": box,
        "max_det_diff": det,
        "max_rec_diff": rec,
    }


if __name__ == "__main__":
    sys.exit(main())
