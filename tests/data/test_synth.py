"""Synthetic data engine: valid COCO/JSONL, tight boxes, the one-line-one-box rule, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from pycocotools.coco import COCO

from ocrkit.data.synth import generate_lines, generate_pages
from ocrkit.util.charset import DEFAULT_CHARSET


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pages")
    generate_pages(out, 6, seed=3, progress=False)
    return out


@pytest.fixture(scope="module")
def clean_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    generate_pages(
        out,
        4,
        seed=5,
        degrade=False,
        image_format="png",
        progress=False,
        kinds={"receipt": 1, "prose": 1, "table": 1},
    )
    return out


def _boxes_by_image(coco: COCO) -> dict[int, list[dict]]:
    return {i: coco.loadAnns(coco.getAnnIds(imgIds=[i])) for i in coco.getImgIds()}


def test_pages_are_valid_coco(pages: Path) -> None:
    coco = COCO(str(pages / "coco.json"))
    assert coco.loadCats(coco.getCatIds()) == [{"id": 1, "name": "text_line"}]
    per_image = _boxes_by_image(coco)
    assert len(per_image) == 6
    assert np.mean([len(a) for a in per_image.values()]) >= 5
    allowed = set(DEFAULT_CHARSET)
    for img_id, anns in per_image.items():
        info = coco.loadImgs([img_id])[0]
        with Image.open(pages / info["file_name"]) as im:
            assert im.size == (info["width"], info["height"])
        for a in anns:
            x, y, w, h = a["bbox"]
            assert w >= 2 and h >= 2, a
            assert x >= 0 and y >= 0 and x + w <= info["width"] + 1e-6 and y + h <= info["height"] + 1e-6, a
            assert a["area"] == pytest.approx(w * h, rel=1e-3)
            assert a["iscrowd"] == 0 and a["category_id"] == 1
            assert a["text"].strip() == a["text"] and a["text"]
            assert set(a["text"]) <= allowed, a["text"]


def test_degraded_pages_keep_line_boxes_apart(pages: Path) -> None:
    """Rotation/tilt stay small: an axis-aligned box of a long line must not swallow its neighbours."""
    coco = COCO(str(pages / "coco.json"))
    covered = []
    for anns in _boxes_by_image(coco).values():
        b = np.array([a["bbox"] for a in anns], float)
        x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
        iw = np.clip(np.minimum(x1[:, None], x1[None]) - np.maximum(x0[:, None], x0[None]), 0, None)
        ih = np.clip(np.minimum(y1[:, None], y1[None]) - np.maximum(y0[:, None], y0[None]), 0, None)
        inter = iw * ih
        np.fill_diagonal(inter, 0)
        covered.extend((inter / (b[:, 2] * b[:, 3])[:, None]).max(1))
    # at 2 degrees of page rotation ~15 % of boxes overlapped a neighbour by > 20 % of their area
    assert np.mean(np.array(covered) > 0.2) < 0.03


def test_boxes_hold_the_ink_with_a_margin_on_clean_pages(clean_pages: Path) -> None:
    """Label boxes are the ink box grown by LABEL_PAD of the font size, like annotated line boxes."""
    coco = COCO(str(clean_pages / "coco.json"))
    margins = []
    for img_id, anns in _boxes_by_image(coco).items():
        gray = np.asarray(Image.open(clean_pages / coco.loadImgs([img_id])[0]["file_name"]).convert("L"))
        for a in anns:
            x, y, w, h = (int(round(v)) for v in a["bbox"])
            ink = gray[y : y + h, x : x + w] < 192
            rows, cols = np.nonzero(ink.any(1))[0], np.nonzero(ink.any(0))[0]
            assert rows.size and ink.mean() > 0.02, a["text"]
            margins.append((rows[0] / h, (h - 1 - rows[-1]) / h, cols[0] / h, (w - 1 - cols[-1]) / h))
    top, bottom, left, right = np.median(margins, axis=0)
    # ~0.1 em of paper above and below the ink (an em is ~1.1 box heights), ~0.05 em left and right
    assert 0.04 < top < 0.16 and 0.04 < bottom < 0.16, (top, bottom)
    assert 0.01 < left < 0.1 and 0.01 < right < 0.1, (left, right)


def test_one_line_one_box_on_receipts(tmp_path: Path) -> None:
    generate_pages(tmp_path, 2, seed=11, degrade=False, kinds={"receipt": 1}, progress=False)
    coco = COCO(str(tmp_path / "coco.json"))
    split_rows = 0
    for anns in _boxes_by_image(coco).values():
        boxes = [a["bbox"] for a in anns]
        for i, (x0, y0, w0, h0) in enumerate(boxes):
            for x1, y1, w1, h1 in boxes[i + 1 :]:
                v_overlap = min(y0 + h0, y1 + h1) - max(y0, y1)
                if v_overlap > 0.5 * min(h0, h1):  # same row: separate runs keep a clear gap
                    gap = max(x1 - (x0 + w0), x0 - (x1 + w1))
                    assert gap > 0.8 * max(h0, h1)
                    split_rows += 1
    assert split_rows >= 5  # item/price, key/value pairs really are separate boxes


def test_same_seed_same_data_different_seed_different(tmp_path: Path) -> None:
    stats = [
        generate_pages(tmp_path / name, 2, seed=seed, workers=workers, progress=False)
        for name, seed, workers in (("a", 7, 1), ("b", 7, 2), ("c", 8, 1))
    ]
    assert stats[0]["pages_per_s"] > 0
    a, b, c = (json.loads((tmp_path / d / "coco.json").read_text()) for d in "abc")
    assert a["annotations"] == b["annotations"]
    assert (tmp_path / "a/images/000001.jpg").read_bytes() == (tmp_path / "b/images/000001.jpg").read_bytes()
    assert [x["text"] for x in a["annotations"]] != [x["text"] for x in c["annotations"]]


def test_lines_manifest(tmp_path: Path) -> None:
    stats = generate_lines(tmp_path, 25, seed=1, blank_share=0.0, progress=False)
    assert stats["lines"] == 25 and stats["lines_per_s"] > 0
    records = [json.loads(line) for line in (tmp_path / "lines.jsonl").read_text().splitlines()]
    assert len(records) == 25
    for rec in records:
        assert rec["text"] and set(rec["text"]) <= set(DEFAULT_CHARSET)
        with Image.open(tmp_path / rec["image"]) as im:
            assert im.width >= 2 and im.height >= 6
    assert len(list((tmp_path / "images").iterdir())) == 25  # nothing beyond n left on disk


def test_blank_crops_avoid_every_labelled_line() -> None:
    from ocrkit.data.synth.crops import blank_crop

    # white page, lines drawn black: a crop that touched a line (or its 0.3-height margin) holds black
    page = np.full((400, 300, 3), 255, np.uint8)
    boxes = [(20.0, y, 280.0, y + 20.0) for y in range(10, 390, 60)]
    for x0, y0, x1, y1 in boxes:
        page[int(y0) : int(y1), int(x0) : int(x1)] = 0
    rng = np.random.default_rng(0)
    crops = [blank_crop(page, boxes, rng) for _ in range(50)]
    found = [c for c in crops if c is not None]
    assert len(found) >= 25 and all(c.min() == 255 for c in found)
    assert all(c.shape[0] >= 4 and c.shape[1] >= 4 for c in found)
    full = np.zeros_like(page)  # no free place at all: None, not a crop with text in it
    assert blank_crop(full, [(0.0, 0.0, 300.0, 400.0)], rng) is None
    # an unlabelled rule (grey 100) between two lines: about half the crops are sent to it, none to a line
    ruled = np.full((400, 300, 3), 255, np.uint8)
    lines = [(20.0, 20.0, 280.0, 40.0), (20.0, 340.0, 280.0, 360.0)]
    for x0, y0, x1, y1 in lines:
        ruled[int(y0) : int(y1), int(x0) : int(x1)] = 0
    ruled[190:193, 10:290] = 100
    crops = [c for c in (blank_crop(ruled, lines, rng) for _ in range(60)) if c is not None]
    assert all(c.min() > 0 for c in crops)
    assert 0.25 < np.mean([(c == 100).any() for c in crops]) < 0.9


@pytest.mark.slow
def test_lines_include_the_requested_share_of_blank_crops(tmp_path: Path) -> None:
    generate_lines(tmp_path, 200, seed=2, blank_share=0.25, progress=False)
    records = [json.loads(line) for line in (tmp_path / "lines.jsonl").read_text().splitlines()]
    blank = [r for r in records if r["text"] == ""]
    assert 0.15 < len(blank) / len(records) < 0.35
    assert all(r["layout"] == "blank" for r in blank) and all(r["text"] for r in records if r not in blank)
    with pytest.raises(ValueError, match="blank_share"):
        generate_lines(tmp_path / "bad", 2, blank_share=1.0, progress=False)


def _median_crop_height(folder: Path) -> float:
    records = [json.loads(line) for line in (folder / "lines.jsonl").read_text().splitlines()]
    heights = []
    for rec in records:
        with Image.open(folder / rec["image"]) as im:
            heights.append(im.height)
    return float(np.median(heights))


def test_page_scale_makes_line_crops_taller(tmp_path: Path) -> None:
    # Same seed and layouts, so the same pages, once at detector size and once rendered twice as large.
    kinds = {"prose": 1}
    generate_lines(tmp_path / "x1", 24, seed=4, kinds=kinds, page_scale=(1.0, 1.0), progress=False)
    generate_lines(tmp_path / "x2", 24, seed=4, kinds=kinds, page_scale=(2.0, 2.0), progress=False)
    ratio = _median_crop_height(tmp_path / "x2") / _median_crop_height(tmp_path / "x1")
    assert 1.6 < ratio < 2.4
    with pytest.raises(ValueError, match="page_scale"):
        generate_lines(tmp_path / "bad", 2, page_scale=(2.0, 1.0), progress=False)


def test_stretch_contrast_maps_grey_on_grey_to_black_on_white() -> None:
    from ocrkit.data.synth.crops import stretch_contrast

    rng = np.random.default_rng(0)
    gray = np.full((32, 200), 210, np.uint8)
    gray[10:22, 20:180] = 95  # faded ink on thermal paper
    gray = np.clip(gray + rng.normal(0, 2, gray.shape), 0, 255).astype(np.uint8)
    out = stretch_contrast(gray)
    assert out[15, 100] < 15 and out[2, 100] > 240
    flat = np.full((32, 200), 128, np.uint8)
    assert np.array_equal(stretch_contrast(flat), flat)  # nothing to stretch: unchanged


def test_lines_stop_rendering_once_n_is_reached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ocrkit.data.synth import generate

    rendered = []
    original = generate._lines_job
    monkeypatch.setattr(generate, "_lines_job", lambda job: rendered.append(job[0]) or original(job))
    # 48 lines at 24 per page: the first batch plans 3 pages, but 2 dense prose pages are enough
    stats = generate_lines(tmp_path, 48, seed=3, kinds={"prose": 1}, page_scale=(1.0, 1.0), progress=False)
    assert rendered == [0, 1] and stats["pages_rendered"] == 2


def test_every_registered_font_loads_and_is_documented() -> None:
    from ocrkit.data.synth import fonts

    readme = (fonts.FONT_DIR / "README.md").read_text(encoding="utf-8")
    files = {f for group in fonts.STYLES.values() for f in group}
    for rel in sorted(files):
        assert fonts.load(rel, 24).getlength("Ag0") > 0, rel
        folder, stem = rel.split("/")[0], Path(rel).stem
        assert (fonts.FONT_DIR / folder / "COPYRIGHT.debian").is_file(), rel
        assert f"{folder}/" in readme and stem.split("-")[0] in readme, f"{rel} missing from fonts/README.md"


def test_issue_head_letter_spaces_the_year_and_labels_it_unspaced() -> None:
    import re

    from ocrkit.data.synth import fonts
    from ocrkit.data.synth.canvas import Canvas
    from ocrkit.data.synth.layouts.prose import issue_head
    from ocrkit.data.synth.text import TextGen

    font, size = fonts.STYLES["fraktur"][0], 24
    for seed in range(5):
        rng = np.random.default_rng(seed)
        cv = Canvas(1200, 1700, rng, DEFAULT_CHARSET)
        issue_head(cv, TextGen(rng, "de_DE"), font, size, 100, 1100, 50, 1600, lambda s: s)
        (year,) = [ln for ln in cv.lines if re.fullmatch(r"1[6-8]\d\d\.?", ln.text)]
        natural = fonts.load(font, year.size).getlength(year.text)
        # at least 0.3 of the size between letters, drawn: the ink is that much wider than the plain string
        assert year.mask.shape[1] > natural + 0.25 * year.size * (len(year.text) - 1)


def test_recase_changes_words_but_keeps_codes_and_short_acronyms() -> None:
    from ocrkit.data.synth.text import recase

    line = "TOTAL 6% SUPPLIES (INC. GST):"
    assert recase(line, "title", keep_acronyms=False) == "Total 6% Supplies (Inc. Gst):"
    assert recase(line, "sentence", keep_acronyms=True) == "Total 6% supplies (INC. GST):"
    assert recase("CASH INV NO.: 7005F711", "sentence", keep_acronyms=False) == "Cash inv no.: 7005F711"
    assert recase(line, "as is", keep_acronyms=False) == line


@pytest.mark.slow
def test_synthetic_receipts_print_some_sections_in_mixed_case(tmp_path: Path) -> None:
    generate_lines(tmp_path, 300, seed=5, kinds={"receipt": 1}, progress=False)
    texts = [json.loads(x)["text"] for x in (tmp_path / "lines.jsonl").read_text().splitlines()]
    worded = [t for t in texts if sum(c.isalpha() for c in t) >= 3]
    mixed = sum(any(c.islower() for c in t) for t in worded) / len(worded)
    assert 0.2 < mixed < 0.6  # SROIE: most sections in capitals, many in mixed case


def test_receipts_give_short_cells_their_own_boxes(tmp_path: Path) -> None:
    generate_pages(tmp_path, 6, seed=4, degrade=False, kinds={"receipt": 1}, progress=False)
    coco = COCO(str(tmp_path / "coco.json"))
    short = beside = total = 0
    for anns in _boxes_by_image(coco).values():
        total += len(anns)
        for a in anns:
            if len(a["text"].strip()) > 2:
                continue
            short += 1
            _, y, _, h = a["bbox"]
            beside += any(
                b is not a and min(y + h, b["bbox"][1] + b["bbox"][3]) - max(y, b["bbox"][1]) > 0.5 * h
                for b in anns
            )
    # quantities, tax codes and "2 X" are whole columns on real receipts: the detector needs them often
    assert short / total > 0.1, (short, total)
    assert beside / short > 0.9  # cells of a row, each its own box


def test_book_edge_darkens_a_margin_and_never_a_line() -> None:
    from ocrkit.data.synth.canvas import Canvas, TextLine
    from ocrkit.data.synth.degrade import book_edge

    cv = Canvas(600, 800, np.random.default_rng(0), DEFAULT_CHARSET)
    cv.lines.append(TextLine("text", 80, 100, np.full((500, 440), 255, np.uint8), size=20))
    x0, y0, x1, y1 = (int(v) for v in cv.lines[0].label_box)
    darkened = 0
    for seed in range(12):
        img = np.full((800, 600, 3), 200.0, np.float32)
        book_edge(img, cv, np.random.default_rng(seed))
        assert (img[y0 : y1 + 1, x0 : x1 + 1] == 200.0).all()  # the line's label box is untouched
        changed = img.mean(axis=2) != 200.0
        if changed.any():
            darkened += 1
            assert img[changed].mean() < 200.0
            rows, cols = np.nonzero(changed)  # one band along one page edge
            assert rows.min() == 0 or cols.min() == 0 or rows.max() == 799 or cols.max() == 599
    assert darkened >= 6  # room on every side: most seeds draw an edge


def test_book_edge_cover_is_strewn_with_character_sized_specks() -> None:
    """The detector boxed flecks in the dark past a real book's edge as digits: the synthetic cover must
    carry such flecks (small blobs far from their surroundings), not just a smooth band."""
    import cv2

    from ocrkit.data.synth.canvas import Canvas, TextLine
    from ocrkit.data.synth.degrade import book_edge

    cv = Canvas(900, 1200, np.random.default_rng(0), DEFAULT_CHARSET)
    cv.lines.append(TextLine("text", 250, 250, np.full((700, 400), 255, np.uint8), size=20))
    most_specks = 0
    for seed in range(12):
        img = np.full((1200, 900, 3), 220.0, np.float32)
        book_edge(img, cv, np.random.default_rng(seed))
        grey = img.mean(axis=2).astype(np.uint8)
        residual = np.abs(grey.astype(np.int16) - cv2.medianBlur(grey, 21).astype(np.int16))
        _, _, stats, _ = cv2.connectedComponentsWithStats((residual > 30).astype(np.uint8))
        w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
        short, long = np.minimum(w, h), np.maximum(w, h)
        compact = (short >= 3) & (long <= 16) & (long <= 3 * short)
        most_specks = max(most_specks, int(compact.sum()))  # stripes are long and thin: not counted
    assert most_specks >= 10


def test_show_through_lands_in_the_white_space_away_from_the_lines() -> None:
    """On real book scans the other side's lines fill a heading's white space, and the detector boxed them:
    the synthetic ghost must also land far from this page's own lines, and stay faint."""
    from ocrkit.data.synth.degrade import show_through

    ink = np.zeros((800, 600), np.float32)
    for top in range(40, 240, 20):
        ink[top : top + 6, 60:540] = 1.0  # ten lines in the top quarter, white space below
    reached = 0
    for seed in range(12):
        ghost = show_through(ink, np.random.default_rng(seed))
        assert ghost.min() >= 0.0 and 0.0 < ghost.max() <= 0.4  # fainter than ink
        reached += bool(ghost[320:].max() > 0.02)  # rows more than 80 px below the last line
    assert reached >= 4


def test_reading_every_shipped_font_prints_nothing(capfd):
    """One face's `post` table made fontTools print a warning into `ocrkit finetune`'s output."""
    from ocrkit.data.synth import fonts

    faces = sorted({f for files in fonts.STYLES.values() for f in files})
    assert all(fonts.coverage.__wrapped__(face) for face in faces)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
