"""What the tests build for themselves: pages, line manifests, tiny model widths and a toy training task.

Everything here is made locally and fast, so no test downloads or waits for a real model.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import torch
from safetensors.torch import save_model
from torch.utils.data import Dataset

from ocrkit.cli import main
from ocrkit.engine.settings import TrainSettings

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
# scripts that tests run in a subprocess: they import this module, so they sit below this folder
SCRIPTS = Path(__file__).resolve().parent / "scripts"


# --- recognizer line manifests (cv2.putText: fast, no fonts needed) ---


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


# --- detector COCO sets: dark bars ("lines") on white pages ---

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


# --- engine: linear regression with variable-length targets (units = rows) ---


class ToyData(Dataset):
    def __init__(self, n: int = 64) -> None:
        g = torch.Generator().manual_seed(0)
        self.items = []
        for i in range(n):
            rows = 1 + i % 5  # variable "length"
            x = torch.randn(rows, 4, generator=g)
            self.items.append((x, x @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        x, y = self.items[i]
        return x + 0.01 * torch.randn_like(x), y  # uses the global RNG like a data augmentation


class ToyTask:
    def __init__(self, out: Path | None = None) -> None:
        self.evaluated = 0

    def build_model(self) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1), torch.nn.Linear(8, 1))

    def train_dataset(self):
        return ToyData()

    def collate(self, items):
        return {"x": torch.cat([x for x, _ in items]), "y": torch.cat([y for _, y in items])}

    def batch_sampler(self, dataset, batch_size, seed):
        return None

    def units(self, batch) -> int:
        return len(batch["y"])

    def loss(self, model, batch) -> torch.Tensor:
        return ((model(batch["x"]).squeeze(-1) - batch["y"]) ** 2).sum()

    def param_groups(self, model, lr, weight_decay):
        return [{"params": list(model.parameters()), "lr": lr, "weight_decay": weight_decay}]

    def evaluate(self, model):
        self.evaluated += 1
        data = ToyData(16)
        batch = self.collate([data.items[i] for i in range(16)])
        return {"mse": float(self.loss(model, batch) / len(batch["y"]))}

    def save_pretrained(self, model, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        save_model(model, str(out_dir / "model.safetensors"))


def toy_settings(out: Path, **overrides) -> TrainSettings:
    """The engine tests' run: 12 steps, accumulation 2, EMA, checkpoints every 4, evaluation every 6."""
    base = dict(
        out_dir=str(out),
        steps=12,
        batch_size=4,
        grad_accum=2,
        lr=1e-2,
        warmup_steps=3,
        eval_every=6,
        save_every=4,
        log_every=2,
        ema_decay=0.9,
        ema_warmup_steps=2,
        best_metric="mse",
        best_mode="min",
        torch_threads=1,
    )
    return TrainSettings(**{**base, **overrides})


# --- pages for the commands and the pipeline ---


ROW_HEIGHT = 40  # the line boxes of `row_box` are 40 px tall: rows 100-140


def page_with_words(*words: tuple[int, int], width: int = 600, height: int = 240) -> np.ndarray:
    """A white gray page with one row of print: each word (left, right) is letters 10 px wide, 4 px apart,
    filling rows 108-132 (the middle rows of a `row_box`)."""
    page = np.full((height, width), 250, np.uint8)
    for left, right in words:
        for x in range(left, right, 14):
            page[108:132, x : min(x + 10, right)] = 20
    return page


def row_box(x0: float, x1: float) -> list[float]:
    """An xyxy line box of the row `page_with_words` prints."""
    return [x0, 100.0, x1, 100.0 + ROW_HEIGHT]


def page_image(h: int = 180, w: int = 260, seed: int = 0) -> np.ndarray:
    """A grey page with four dark bars of random length: lines the tiny detector can find."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 240, np.uint8)
    for r in range(4):
        img[20 + 35 * r : 36 + 35 * r, 20 : 20 + int(rng.integers(80, 220))] = 30
    return img


def run_cli(args: list, capsys) -> tuple[int, str, str]:
    """`ocrkit ARGS` in-process: exit code, stdout and stderr."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def without_loading_line(err: str) -> str:
    """stderr of a page command without its first line saying which models load."""
    first, _, rest = err.partition("\n")
    assert first.startswith("ocrkit: loading "), first
    return rest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for servers started by the tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- image files that decoders choke on ---


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def thin_png(width: int) -> bytes:
    """A valid 1-bit PNG of `width` × 1 px: a few KB on disk, a row the decoder cannot hold."""
    ihdr = struct.pack(">IIBBBBB", width, 1, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" + b"\xff" * (width // 8), 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def dds_header() -> bytes:
    """A DDS header with pixel-format flags Pillow's DDS plugin does not implement (it raises
    NotImplementedError); the content decides the format, whatever the file is named."""
    fields = [b"DDS ", 124, 0x1007, 16, 16, 0, 0, 0, b"\0" * 44, 32, 0, b"\0" * 4, 0, 0, 0, 0, 0, 0x1000]
    return struct.pack("<4sIIIIIII44sII4sIIIIIIIIII", *fields, 0, 0, 0, 0) + b"\0" * 1024


def tiny_page_tiff(pages: int) -> bytes:
    """A TIFF of `pages` 1×1 bilevel pages sharing one strip: about 100 bytes a page, so a file within
    any upload limit can hold a hundred thousand pages."""
    tags = [
        (256, 4, 1),
        (257, 4, 1),
        (258, 3, 1),
        (259, 3, 1),
        (262, 3, 1),
        (273, 4, 8),
        (278, 4, 1),
        (279, 4, 1),
    ]
    out = bytearray(b"II*\0" + struct.pack("<I", 10) + b"\xff\0")
    for i in range(pages):
        start = len(out)
        out += struct.pack("<H", len(tags))
        for tag, kind, value in tags:
            out += (
                struct.pack("<HHIHH", tag, kind, 1, value, 0)
                if kind == 3
                else struct.pack("<HHII", tag, kind, 1, value)
            )
        out += struct.pack("<I", start + 2 + 12 * len(tags) + 4 if i < pages - 1 else 0)
    return bytes(out)


# --- a web app under uvicorn in this process ---


@contextlib.contextmanager
def serving(app, root_path: str = "") -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on a free local port; yields its base URL."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", root_path=root_path)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


# --- annotated pages (PAGE-XML) and tiny start models for `ocrkit finetune` ---

WORDS = ["Total", "Brot", "Milch", "Kasse", "Datum", "Summe", "Preis", "Euro", "Beleg", "Nr"]


def text_pages(folder: Path, n: int, seed: int = 0) -> list[Path]:
    """`n` pages (240 x 160 PNG) of 3 typed lines each, with a PAGE-XML 2019 file beside each image."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    images = []
    for i in range(n):
        img = np.full((160, 240, 3), 255, np.uint8)
        lines = []
        for row in range(3):
            text = " ".join(rng.choice(WORDS, 2)) + f" {int(rng.integers(10, 99))}"
            y = 20 + 45 * row
            (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
            cv2.putText(img, text, (10, y + h), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
            lines.append((text, (8, y - 2, 12 + w, y + h + 6)))
        image = folder / f"page{i:02d}.png"
        cv2.imwrite(str(image), img)
        body = "".join(
            f'<TextLine id="l{k}"><Coords points="{x0},{y0} {x1},{y0} {x1},{y1} {x0},{y1}"/>'
            f"<TextEquiv><Unicode>{text}</Unicode></TextEquiv></TextLine>"
            for k, (text, (x0, y0, x1, y1)) in enumerate(lines)
        )
        (folder / f"page{i:02d}.xml").write_text(
            '<?xml version="1.0" encoding="UTF-8"?><PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/'
            f'pagecontent/2019-07-15"><Page imageFilename="{image.name}" imageWidth="240" imageHeight="160">'
            f'<TextRegion id="r"><Coords points="0,0 240,0 240,160 0,160"/>{body}</TextRegion>'
            "</Page></PcGts>",
            encoding="utf-8",
        )
        images.append(image)
    return images


def tiny_start_models(folder: Path) -> tuple[Path, Path]:
    """A tiny detector and a tiny recognizer (with a CTC head, joint decoding) saved as model folders."""
    from ocrkit.detection.config import DetectorConfig
    from ocrkit.detection.task import DetectionTask
    from ocrkit.recognition.config import RecognizerConfig
    from ocrkit.recognition.task import RecognitionTask
    from ocrkit.util.config import load_config

    det = DetectionTask(load_config(DetectorConfig, REPO / "configs/detector/tiny.yaml"))
    det.save_pretrained(det.build_model(), folder / "detector")
    cfg = load_config(
        RecognizerConfig,
        REPO / "configs/recognizer/tiny.yaml",
        ["model.ctc_weight=0.5", "model.decoding=joint"],
    )
    rec = RecognitionTask(cfg)
    rec.save_pretrained(rec.build_model(), folder / "recognizer")
    return folder / "detector", folder / "recognizer"
