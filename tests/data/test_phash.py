"""Perceptual hashes: copies of a reserved page (resized, re-encoded, gray, bordered, turned) are refused,
other pages are not; `ocrkit data reserve` writes them, `ocrkit data import` writes a data card and no
empty val files."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from fixtures import run_cli, text_pages

from ocrkit.data.ground_truth.phash import (
    MARGINS,
    TURNS,
    NearDuplicates,
    distance,
    frame_hashes,
    phash,
    read_reserved_phashes,
    reserve_hashes,
)
from ocrkit.images.io import load_image

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(autouse=True)
def no_reserved_env(monkeypatch):
    monkeypatch.delenv("OCRKIT_RESERVED", raising=False)


def copies(image: np.ndarray) -> dict[str, np.ndarray]:
    h, w = image.shape[:2]
    _, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 30])
    return {
        "half size": cv2.resize(image, (w // 2, h // 2), interpolation=cv2.INTER_AREA),
        "1.7x size": cv2.resize(image, (int(w * 1.7), int(h * 1.7)), interpolation=cv2.INTER_CUBIC),
        "jpeg 30": cv2.imdecode(jpeg, cv2.IMREAD_COLOR),
        "gray": cv2.cvtColor(image, cv2.COLOR_RGB2GRAY),
    }


def test_copies_stay_near_and_other_pages_far(tmp_path):
    pages = [load_image(p) for p in text_pages(tmp_path, 6)]
    reserved = NearDuplicates([phash(pages[0])])
    for name, copy in copies(pages[0]).items():
        assert distance(phash(copy), phash(pages[0])) <= 8, name
        assert reserved.matches(phash(copy)), name
    for other in pages[1:]:  # same layout, other words: still far apart
        assert distance(phash(other), phash(pages[0])) > 2 * reserved.max_bits
        assert not reserved.matches(phash(other))


def framed_copies(image: np.ndarray) -> dict[str, np.ndarray]:
    """What cropping and deskewing steps do to a scan: a white border added, a turn of a degree."""
    h, w = image.shape[:2]
    white = (255, 255, 255)
    turned = {
        f"turned {angle}°": cv2.warpAffine(
            image, cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0), (w, h), borderValue=white
        )
        for angle in (1.0, -1.0)
    }
    border = cv2.copyMakeBorder(image, h // 20, h // 20, w // 20, w // 20, cv2.BORDER_CONSTANT, value=white)
    return {"5 % white border": border, **turned}


def test_bordered_and_turned_copies_of_a_scan_are_found_in_their_frames():
    """The 1784 sample scan (a downscaled development page): its copies in another frame are far in
    the plain hash and found by `matches_picture`; the other sample pages are not, in any frame."""
    kant = load_image(SAMPLES / "kant_1784_p17.jpg")
    reserved = NearDuplicates([phash(kant)])
    for name, copy in framed_copies(kant).items():
        assert not reserved.matches(phash(copy)), name  # the plain hash misses it
        assert reserved.matches_picture(copy), name
    assert len(frame_hashes(kant)) == 2 + len(TURNS) + len(MARGINS)
    for other in ("poilus_will_AN_0073.jpg", "synthetic_page.jpg", "synthetic_receipt.jpg"):
        image = load_image(SAMPLES / other)
        assert min(reserved.nearest(value) for value in frame_hashes(image)) > 2 * reserved.max_bits, other
        assert not reserved.matches_picture(image), other
    assert not NearDuplicates().matches_picture(kant)


def cut_and_brightened_copies(image: np.ndarray) -> dict[str, np.ndarray]:
    """What cropping and brightening steps do to a scan, off the steps the list holds."""
    h, w = image.shape[:2]
    brighter = np.clip(image.astype(np.float32) * 1.25, 0, 255).astype(np.uint8)
    return {
        "margins cut 2.5 %": image[h * 25 // 1000 : h - h * 25 // 1000, w * 25 // 1000 : w - w * 25 // 1000],
        "margins cut 5 %": image[h // 20 : h - h // 20, w // 20 : w - w // 20],
        "brightened 25 %": brighter,
    }


def test_cut_and_brightened_copies_are_found_by_the_copies_listed_with_the_page():
    """The page's own hash misses copies whose margins were cut or whose paper was brightened (what was
    lost cannot be restored from the copy); the hashes of the page's own copies, listed beside it, find
    them, and the other sample pages stay far from every one of them."""
    kant = load_image(SAMPLES / "kant_1784_p17.jpg")
    listed = reserve_hashes(kant)
    assert listed[0] == phash(kant) and len(listed) == len(set(listed)) == 22
    own, full = NearDuplicates([phash(kant)]), NearDuplicates(listed)
    for name, copy in {**cut_and_brightened_copies(kant), **framed_copies(kant)}.items():
        assert full.matches_picture(copy), name
    missed = [name for name, copy in cut_and_brightened_copies(kant).items() if not own.matches_picture(copy)]
    assert missed == ["margins cut 5 %", "brightened 25 %"]  # (cut 2.5 % the frames grow back: 10 bits)
    for other in ("poilus_will_AN_0073.jpg", "synthetic_page.jpg", "synthetic_receipt.jpg"):
        image = load_image(SAMPLES / other)
        assert min(full.nearest(value) for value in frame_hashes(image)) > 2 * full.max_bits, other


def test_flat_images_never_match_each_other():
    flat = NearDuplicates([phash(np.full((40, 90), 200, np.uint8))])
    assert not flat.matches(phash(np.full((20, 80), 200, np.uint8)))
    assert NearDuplicates().nearest(phash(np.zeros((8, 8), np.uint8))) is None


def test_a_resized_copy_of_a_reserved_page_is_refused_by_import(tmp_path, capsys):
    images = text_pages(tmp_path / "eval", 1, seed=3)
    code, out, _ = run_cli(["data", "reserve", tmp_path / "eval", "--out", tmp_path / "reserved.tsv"], capsys)
    assert code == 0 and "1 images" in out and "1 ground-truth files" in out
    listed = (tmp_path / "reserved.tsv").read_text().splitlines()
    assert listed[1] == "sha256\tkind\tsource\tphash" and listed[2].split("\t")[2] == "page00.png"
    listed_hashes = len(set(reserve_hashes(load_image(images[0]))))  # the page's and its copies' (some alike)
    assert len(read_reserved_phashes(tmp_path / "reserved.tsv")) == listed_hashes > 15
    # the training folder holds a half-size JPEG copy of the reserved page (other bytes, other sha256)
    # beside two pages of its own
    train = tmp_path / "train"
    text_pages(train, 2, seed=4)
    image = cv2.imread(str(images[0]))
    cv2.imwrite(str(train / "copy.jpg"), cv2.resize(image, (120, 80), interpolation=cv2.INTER_AREA))
    xml = (tmp_path / "eval" / "page00.xml").read_text()
    (train / "copy.xml").write_text(
        xml.replace("page00.png", "copy.jpg").replace('imageWidth="240" imageHeight="160"', ""), "utf-8"
    )
    code, out, err = run_cli(
        ["data", "import", train, "--out", tmp_path / "out", "--reserved", tmp_path / "reserved.tsv"], capsys
    )
    assert code == 0
    assert "subset: train (the folder's name" in out
    assert "refused (reserved for evaluation): 1" in out and "train: 2 pages" in out
    assert "copy.jpg: a copy of a page reserved for evaluation" in err
    card = (tmp_path / "out" / "DATA_CARD.md").read_text()
    assert "| train | train |" in card and f"2 sha256, {listed_hashes} perceptual hashes" in card
    assert "copies): 1" in card


def test_copies_made_with_an_image_editor_are_refused_by_import(tmp_path, capsys):
    """A reserved scan brightened, cropped, turned a degree with white corners or given a white border
    (PIL, as editing tools do) is refused; another page beside them is imported."""
    from PIL import Image, ImageEnhance, ImageOps

    (tmp_path / "eval").mkdir()
    kant = Image.open(SAMPLES / "kant_1784_p17.jpg").convert("RGB")
    kant.save(tmp_path / "eval" / "kant.png")
    code, _, _ = run_cli(["data", "reserve", tmp_path / "eval", "--out", tmp_path / "reserved.tsv"], capsys)
    assert code == 0
    w, h = kant.size
    copies = {
        "brighter": ImageEnhance.Brightness(kant).enhance(1.3),
        "cut2": kant.crop((w // 50, h // 50, w - w // 50, h - h // 50)),
        "cut5": kant.crop((w // 20, h // 20, w - w // 20, h - h // 20)),
        "turned": kant.rotate(1, fillcolor="white"),
        "bordered": ImageOps.expand(kant, border=(w // 20, h // 20), fill="white"),
        "other": Image.open(SAMPLES / "synthetic_page.jpg").convert("RGB"),
    }
    train = tmp_path / "train"
    train.mkdir()
    for name, image in copies.items():
        image.save(train / f"{name}.png")
        (train / f"{name}.gt.txt").write_text("a line", encoding="utf-8")
    args = ["data", "import", train, "--out", tmp_path / "out", "--reserved", tmp_path / "reserved.tsv"]
    code, out, err = run_cli(args, capsys)
    assert code == 0 and "refused (reserved for evaluation): 5" in out
    refused = [line for line in err.splitlines() if "reserved for evaluation" in line]
    for name in copies:
        assert any(f"{name}.png" in line for line in refused) == (name != "other"), name


def test_val_share_zero_writes_no_empty_val_files(tmp_path, capsys):
    text_pages(tmp_path / "gt", 3)
    args = ["data", "import", tmp_path / "gt", "--out", tmp_path / "out", "--no-reserved", "--subset", "mine"]
    code, out, _ = run_cli([*args, "--val-share", "0"], capsys)
    assert code == 0 and "no val files written" in out and "subset:" not in out
    assert (tmp_path / "out" / "lines" / "train.jsonl").is_file()
    assert not (tmp_path / "out" / "lines" / "val.jsonl").exists()
    assert not (tmp_path / "out" / "pages" / "coco_val.json").exists()
    coco = json.loads((tmp_path / "out" / "pages" / "coco_train.json").read_text())
    assert len(coco["images"]) == 3 and "| mine |" in (tmp_path / "out" / "DATA_CARD.md").read_text()
    code, _, err = run_cli([*args, "--val-share", "1"], capsys)
    assert code == 2 and "--val-share" in err
