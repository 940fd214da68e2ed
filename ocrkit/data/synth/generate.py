"""Public entry points: `generate_pages` (COCO detection data) and `generate_lines` (recognition crops).

Each item's randomness comes from (seed, index) alone, so the output is identical for any `workers`.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tqdm import tqdm

from ocrkit.data.synth.crops import blank_crop, crop_line
from ocrkit.data.synth.fonts import use_extra_fonts
from ocrkit.data.synth.render import item_rng, render_page
from ocrkit.data.synth.writers import (
    coco_record,
    draw_line_sheet,
    draw_preview,
    write_coco,
    write_image,
    write_jsonl,
)
from ocrkit.util.charset import DEFAULT_CHARSET

PAGE_STREAM, LINE_STREAM = 0, 1
MIN_LINE_HEIGHT = 6  # px; thinner boxes make unreadable crops
# Line crops come from pages rendered 1-2.6x larger than detector pages: at 1x their median height was
# 21 px (upscaled, blurry at the recognizer's 32 px) where real crops are 27-57 px (SROIE median 36,
# historical 44-50) and get downscaled, crisp. The range reproduces that spread.
LINE_PAGE_SCALE = (1.0, 2.6)
# Share of line crops that hold no text (target ""): a pipeline's recognizer also sees the detector's false
# boxes on specks, rules and stamps, and one trained on text alone read "0.22" or e-mail addresses into them.
BLANK_SHARE = 0.05


def _ordered_map(fn: Callable, jobs: Iterable, workers: int) -> Iterator:
    """map() in order, in a process pool when workers > 1."""
    if workers <= 1:
        yield from map(fn, jobs)
        return
    with mp.get_context("fork").Pool(workers) as pool:
        yield from pool.imap(fn, jobs, chunksize=1)


def _page_job(job: tuple) -> dict:
    index, seed, out_dir, ext, charset, degrade, kinds, preview_dir = job
    page = render_page(item_rng(seed, index, PAGE_STREAM), charset, degrade, kinds)
    name = f"images/{index:06d}.{ext}"
    write_image(Path(out_dir) / name, page.image)
    if preview_dir is not None:
        draw_preview(page.image, page.boxes, page.texts, Path(preview_dir) / f"page_{index:06d}.png")
    h, w = page.image.shape[:2]
    return {
        "index": index,
        "file_name": name,
        "width": w,
        "height": h,
        "boxes": page.boxes,
        "texts": page.texts,
        "kind": page.kind,
    }


def generate_pages(
    out_dir: str | Path,
    n: int,
    seed: int = 0,
    workers: int = 1,
    charset: str = DEFAULT_CHARSET,
    image_format: str = "jpg",
    degrade: bool = True,
    kinds: dict[str, float] | None = None,
    preview_dir: str | Path | None = None,
    preview_count: int = 4,
    progress: bool = True,
) -> dict:
    """Write out_dir/images/*.{jpg,png} and out_dir/coco.json; returns counts and throughput.

    `kinds` reweights layouts (e.g. {"receipt": 1}); `degrade=False` gives clean black-on-white pages.
    """
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    if preview_dir is not None:
        Path(preview_dir).mkdir(parents=True, exist_ok=True)
    jobs = [
        (
            i,
            seed,
            str(out),
            image_format,
            charset,
            degrade,
            kinds,
            str(preview_dir) if preview_dir is not None and i < preview_count else None,
        )
        for i in range(n)
    ]
    images, anns = [], []
    start = time.perf_counter()
    for rec in tqdm(_ordered_map(_page_job, jobs, workers), total=n, unit="page", disable=not progress):
        image, a = coco_record(
            rec["index"] + 1,
            rec["file_name"],
            rec["width"],
            rec["height"],
            rec["boxes"],
            rec["texts"],
            len(anns) + 1,
            rec["kind"],
        )
        images.append(image)
        anns.extend(a)
    seconds = time.perf_counter() - start
    info = {"description": "ocrkit synthetic pages", "seed": seed, "n": n}
    write_coco(out / "coco.json", images, anns, info)
    return {
        "pages": n,
        "lines": len(anns),
        "seconds": round(seconds, 2),
        "pages_per_s": round(n / seconds, 2),
        "lines_per_page": round(len(anns) / max(1, n), 1),
        "out": str(out / "coco.json"),
    }


def _lines_job(job: tuple) -> list[dict]:
    index, seed, out_dir, charset, degrade, kinds, per_page, page_scale, blank_share, extra_fonts = job
    use_extra_fonts(extra_fonts)  # in each worker: the registry is per process
    rng = item_rng(seed, index, LINE_STREAM)
    page = render_page(rng, charset, degrade, kinds, scale=float(rng.uniform(*page_scale)))
    order = rng.permutation(len(page.boxes))[:per_page]
    records = []
    for j, k in enumerate(sorted(order)):
        box = page.boxes[k]
        if box[3] - box[1] < MIN_LINE_HEIGHT or box[2] - box[0] < 2:
            continue
        crop = crop_line(page.image, box, rng)
        name = f"images/{index:06d}_{j:02d}.png"
        write_image(Path(out_dir) / name, crop)
        records.append({"image": name, "text": page.texts[k], "layout": page.kind})
    blanks = int(rng.binomial(len(records), blank_share / (1.0 - blank_share))) if records else 0
    for j in range(blanks):
        crop = blank_crop(page.image, page.boxes, rng)
        if crop is not None:
            name = f"images/{index:06d}_b{j:02d}.png"
            write_image(Path(out_dir) / name, crop)
            records.append({"image": name, "text": "", "layout": "blank"})
    return records


def generate_lines(
    out_dir: str | Path,
    n: int,
    seed: int = 0,
    workers: int = 1,
    charset: str = DEFAULT_CHARSET,
    degrade: bool = True,
    kinds: dict[str, float] | None = None,
    per_page: int = 24,
    page_scale: tuple[float, float] = LINE_PAGE_SCALE,
    blank_share: float = BLANK_SHARE,
    preview_dir: str | Path | None = None,
    preview_count: int = 24,
    progress: bool = True,
    fonts: str | Path | None = None,
) -> dict:
    """Write n line crops to out_dir/images/*.png and out_dir/lines.jsonl; returns counts and throughput.
    `fonts`: a manifest of `ocrkit synth fonts` whose faces join the shipped ones.

    Pages are rendered in index order and at most `per_page` lines are taken from each, so the result
    depends on (seed, n) only. Each page's size is multiplied by a factor drawn from `page_scale`.
    About `blank_share` of the records are text-free crops of the same pages with text "".
    """
    if not 0 < page_scale[0] <= page_scale[1]:
        raise ValueError(f"page_scale must be 0 < low <= high, got {page_scale}")
    if not 0.0 <= blank_share < 1.0:
        raise ValueError(f"blank_share must be in [0, 1), got {blank_share}")
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    fonts_path = None if fonts is None else str(Path(fonts).resolve())
    records: list[dict] = []
    start = time.perf_counter()
    next_page = 0
    with tqdm(total=n, unit="line", disable=not progress) as bar:
        while len(records) < n:
            batch = max(2 * max(1, workers), (n - len(records)) // max(1, int(per_page * 0.8)) + 1)
            jobs = [
                (i, seed, str(out), charset, degrade, kinds, per_page, page_scale, blank_share, fonts_path)
                for i in range(next_page, next_page + batch)
            ]
            for recs in _ordered_map(_lines_job, jobs, workers):
                next_page += 1
                take = recs[: n - len(records)]
                for rec in recs[len(take) :]:  # rendered beyond n: not part of the data set
                    (out / rec["image"]).unlink()
                records.extend(take)
                bar.update(len(take))
                if len(records) >= n:  # the batch is an estimate: don't render the pages it overshot
                    break
    seconds = time.perf_counter() - start
    write_jsonl(out / "lines.jsonl", records)
    if preview_dir is not None:
        import cv2  # noqa: PLC0415 - only needed for the preview sheet

        Path(preview_dir).mkdir(parents=True, exist_ok=True)
        sample = records[:preview_count]
        crops = [cv2.cvtColor(cv2.imread(str(out / r["image"])), cv2.COLOR_BGR2RGB) for r in sample]
        draw_line_sheet(crops, [r["text"] for r in sample], Path(preview_dir) / "lines.png")
    return {
        "lines": n,
        "pages_rendered": next_page,
        "seconds": round(seconds, 2),
        "lines_per_s": round(n / seconds, 2),
        "out": str(out / "lines.jsonl"),
    }
