import io as _io

import numpy as np
import pytest
from fixtures import dds_header, thin_png
from PIL import Image, PngImagePlugin

from ocrkit.images.inputs import collect_inputs
from ocrkit.images.io import InputError, load_image, load_page


def save(img: Image.Image, path, **kw):
    img.save(path, **kw)
    return path


def test_rgb_png(tmp_path):
    p = save(Image.new("RGB", (30, 20), (10, 20, 30)), tmp_path / "a.png")
    arr = load_image(p)
    assert arr.shape == (20, 30, 3) and arr.dtype == np.uint8 and tuple(arr[0, 0]) == (10, 20, 30)


def test_modes_become_rgb_uint8(tmp_path):
    gray16 = Image.fromarray(np.full((10, 12), 40000, np.uint16))
    cases = {
        "g16.tif": gray16,
        "gray.png": Image.new("L", (12, 10), 77),
        "bw.png": Image.new("1", (12, 10), 1),
        "rgba.png": Image.new("RGBA", (12, 10), (0, 0, 0, 0)),
        "cmyk.jpg": Image.new("CMYK", (12, 10), (0, 0, 0, 0)),
        "pal.gif": Image.new("P", (12, 10), 3),
    }
    for name, img in cases.items():
        arr = load_image(save(img, tmp_path / name))
        assert arr.shape == (10, 12, 3) and arr.dtype == np.uint8, name
    assert load_image(tmp_path / "g16.tif")[0, 0, 0] == 40000 >> 8
    assert load_image(tmp_path / "rgba.png").min() == 255  # transparent → white paper
    assert load_image(tmp_path / "cmyk.jpg").mean() > 240  # no ink → white


def test_exif_orientation_applied(tmp_path):
    img = Image.new("RGB", (40, 10), (255, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise on display
    p = tmp_path / "rot.jpg"
    img.save(p, exif=exif.tobytes())
    assert load_image(p).shape == (40, 10, 3)


@pytest.mark.parametrize(
    "name,content,problem",
    [
        ("empty.png", b"", "empty file"),
        ("text.png", b"hello, I am not an image\n", "not a recognised image"),
    ],
)
def test_bad_files_raise_one_clear_error(tmp_path, name, content, problem):
    p = tmp_path / name
    p.write_bytes(content)
    with pytest.raises(InputError) as err:
        load_image(p)
    assert name in str(err.value) and problem in str(err.value)


@pytest.mark.parametrize("fmt,suffix", [("PNG", ".png"), ("JPEG", ".jpg")])
def test_truncated_files(tmp_path, fmt, suffix):
    buf = _io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (200, 200, 3), np.uint8)).save(buf, fmt)
    p = tmp_path / f"cut{suffix}"
    p.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(InputError, match="cut"):
        load_image(p)


def test_size_guard(tmp_path):
    p = save(Image.new("L", (300, 300)), tmp_path / "big.png")
    with pytest.raises(InputError, match="too large"):
        load_image(p, max_pixels=10_000)


def test_a_thin_image_within_the_pixel_limit_is_refused_before_decoding(tmp_path):
    p = tmp_path / "row.png"
    p.write_bytes(thin_png(100_000_000))  # 100 M px: at the pixel limit, but 1 px high
    with pytest.raises(InputError, match=r"row\.png: image too thin \(100000000×1;"):
        load_image(p)
    save(Image.new("L", (1000, 1), 255), tmp_path / "rule.png")  # the limit itself is allowed
    assert load_image(tmp_path / "rule.png").shape == (1, 1000, 3)


def test_an_unimplemented_format_variant_is_an_input_error(tmp_path):
    p = tmp_path / "a_scan.png"
    p.write_bytes(dds_header())
    with pytest.raises(
        InputError, match=r"a_scan\.png: corrupt or unsupported image \(NotImplementedError: "
    ):
        load_image(p)


@pytest.mark.parametrize(
    "exc,problem",
    [
        (RuntimeError("Missing or empty\nimage item"), "(RuntimeError: Missing or empty image item)"),
        (AttributeError("no attribute 'stkoffset'"), "(AttributeError: no attribute 'stkoffset')"),
        (MemoryError(), "image too large to decode"),
    ],
)
def test_a_decoder_failure_of_any_kind_is_one_line_naming_the_file(tmp_path, monkeypatch, exc, problem):
    good = save(Image.new("RGB", (30, 20)), tmp_path / "good.png")

    def fail(self):
        raise exc

    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", fail)
    with pytest.raises(InputError) as err:
        load_image(good)
    message = str(err.value)
    assert message.startswith(f"{good}: ") and problem in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_image(tmp_path / "nope.png")


def test_expand_and_pdf_pages(tmp_path):
    sub = tmp_path / "pages" / "deeper"
    sub.mkdir(parents=True)
    save(Image.new("RGB", (50, 40), "white"), sub / "one.png")
    pdf = tmp_path / "pages" / "doc.pdf"
    Image.new("RGB", (200, 100), "white").save(
        pdf, save_all=True, append_images=[Image.new("RGB", (100, 200))]
    )
    (tmp_path / "empty").mkdir()
    inputs = collect_inputs([tmp_path / "pages", tmp_path / "empty", tmp_path / "missing.png"])
    errors = inputs.errors
    assert len(errors) == 2 and "no images" in str(errors[0]) and "missing.png" in str(errors[1])
    pages = inputs.sources
    assert sorted(p.stem for p in pages) == ["deeper/one.png", "doc.pdf-p1", "doc.pdf-p2"]
    assert inputs.total == 5
    pdf_page2 = next(p for p in pages if p.stem == "doc.pdf-p2")
    arr = load_page(pdf_page2)
    assert arr.ndim == 3 and arr.shape[0] > arr.shape[1]  # portrait second page


def test_broken_pdf(tmp_path):
    p = tmp_path / "bad.pdf"
    p.write_bytes(b"%PDF-1.4\n garbage garbage")
    out = collect_inputs([p]).items
    assert len(out) == 1 and isinstance(out[0], InputError) and "bad.pdf" in str(out[0])


def test_encrypted_pdf_is_named_and_skipped(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=300)
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as f:
        writer.write(f)
    good = tmp_path / "good.png"
    Image.new("RGB", (40, 30), "white").save(good)
    out = collect_inputs([locked, good]).items
    errors = [o for o in out if isinstance(o, InputError)]
    assert len(errors) == 1 and "locked.pdf" in str(errors[0]) and "encrypted" in str(errors[0])
    assert [o.stem for o in out if not isinstance(o, InputError)] == ["good.png"]


def test_tiff_pages_are_counted_in_linear_time_and_up_to_a_limit(tmp_path):
    import time

    from fixtures import tiny_page_tiff

    from ocrkit.images.io import tiff_page_count

    many = tmp_path / "many.tif"
    many.write_bytes(tiny_page_tiff(60_000))
    start = time.perf_counter()
    assert tiff_page_count(many) == 60_000  # Pillow's n_frames takes most of a minute on this file
    assert tiff_page_count(many, stop_after=21) == 21
    assert time.perf_counter() - start < 5
    frames = [Image.new("L", (30, 20), 40 * i) for i in range(4)]
    for kw in ({}, {"compression": "tiff_lzw"}, {"big_tiff": True}):
        save(frames[0], tmp_path / "four.tif", save_all=True, append_images=frames[1:], **kw)
        assert tiff_page_count(tmp_path / "four.tif") == 4, kw
    looped = bytearray(tiny_page_tiff(3))
    looped[-4:] = (10).to_bytes(4, "little")  # the last page points back at the first
    (tmp_path / "loop.tif").write_bytes(looped)
    assert tiff_page_count(tmp_path / "loop.tif") == 3
    (tmp_path / "png.tif").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    assert tiff_page_count(tmp_path / "png.tif") == 1


@pytest.mark.parametrize("mode", ["RGBA", "I;16"])
def test_decoding_costs_a_few_bytes_per_pixel(tmp_path, mode):
    """A page within the pixel limit must not cost many times its size in memory: float or int64 working
    copies would make numpy's part of decoding ~36 bytes per pixel for RGBA, ~18 for 16-bit."""
    import tracemalloc

    rng = np.random.default_rng(0)
    shape = (1500, 1000, 4) if mode == "RGBA" else (1500, 1000)
    values = rng.integers(0, 256 if mode == "RGBA" else 4096, shape)
    picture = Image.fromarray(values.astype(np.uint8 if mode == "RGBA" else np.uint16))
    path = save(picture, tmp_path / "page.png")
    tracemalloc.start()
    try:
        page = load_image(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert page.shape == (1500, 1000, 3)
    assert peak / 1.5e6 < (16 if mode == "RGBA" else 8), f"{peak / 1.5e6:.1f} bytes per pixel"
    if mode == "RGBA":  # composited on white exactly as before: round((c·a + 255·(255 − a)) / 255)
        a = values[..., 3:].astype(np.float64)
        expected = np.round((values[..., :3] * a + 255 * (255 - a)) / 255)
        assert np.array_equal(page, expected.astype(np.uint8))
