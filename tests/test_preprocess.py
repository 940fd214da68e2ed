import cv2
import numpy as np
import pytest

from ocrkit.images.preprocess import letterbox, padded_size, page_longest

SHAPES = [(1, 2000), (2000, 1), (4000, 40), (40, 4000), (8, 8), (1, 1), (3, 7), (640, 480), (1123, 794)]
rng = np.random.default_rng(0)
SHAPES += [tuple(int(v) for v in rng.integers(1, 3000, size=2)) for _ in range(40)]


@pytest.mark.parametrize("h,w", SHAPES)
@pytest.mark.parametrize("longest,divisor,square", [(512, 16, False), (640, 32, True), (96, 16, False)])
def test_letterbox_dims_aspect_and_roundtrip(h, w, longest, divisor, square):
    img = np.full((h, w, 3), 200, np.uint8)
    out, geo = letterbox(img, longest, divisor=divisor, square=square)
    oh, ow = out.shape[:2]
    assert oh % divisor == 0 and ow % divisor == 0
    if square:
        assert (oh, ow) == (longest, longest)
    else:
        assert (oh, ow) == padded_size(h, w, longest, divisor)
    rw, rh = geo.resized_size
    assert max(rw, rh) == longest
    # aspect kept: the short side is the exact scaled size to within one pixel
    assert abs(rw - w * longest / max(h, w)) <= 1 and abs(rh - h * longest / max(h, w)) <= 1
    # padding is bottom/right and holds the pad value; content keeps the image colour
    assert out[:rh, :rw].min() == 200
    assert (out[rh:, :] == 0).all() and (out[:, rw:] == 0).all()
    # box round trip within 1 px (original pixels)
    box = np.array([[0.1 * w, 0.2 * h, 0.8 * w, 0.9 * h]], np.float32)
    back = geo.unmap(geo.map(box))
    assert np.abs(back - box).max() <= 1.0


def test_unmap_is_inverse_of_resize_on_real_content():
    img = np.zeros((300, 900, 3), np.uint8)
    cv2.rectangle(img, (100, 50), (400, 120), (255, 255, 255), -1)
    out, geo = letterbox(img, 448, divisor=32, square=True)
    ys, xs = np.nonzero(out[..., 0] > 127)
    found = np.array([[xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]], np.float32)
    back = geo.unmap(found)[0]
    assert np.abs(back - [100, 50, 401, 121]).max() <= 2.0


@pytest.mark.parametrize(
    "image",
    [
        np.full((50, 80), 128, np.uint8),  # grayscale
        np.full((50, 80, 1), 128, np.uint8),
        np.full((50, 80), 128 * 257, np.uint16),  # 16-bit
        np.dstack([np.full((50, 80, 3), 128, np.uint8), np.full((50, 80), 255, np.uint8)]),  # RGBA opaque
    ],
)
def test_letterbox_accepts_modes(image):
    out, geo = letterbox(image, 160, divisor=16)
    assert out.dtype == np.uint8 and out.ndim == 3 and out.shape[2] == 3
    assert out[: geo.resized_size[1], : geo.resized_size[0]].mean() == pytest.approx(128, abs=1)


def test_transparent_rgba_becomes_white_paper():
    rgba = np.zeros((20, 20, 4), np.uint8)  # fully transparent black
    out, _ = letterbox(rgba, 32, divisor=16)
    assert out[:10, :10].min() == 255


def test_bad_arguments():
    with pytest.raises(ValueError):
        letterbox(np.zeros((10, 10, 3), np.uint8), 100, divisor=16)
    with pytest.raises(ValueError):
        letterbox(np.zeros((0, 10, 3), np.uint8), 64)


@pytest.mark.parametrize(
    "h,w,expected",
    [
        (2000, 800, 1408),  # short/long 0.4: 704 / 0.4 = 1760, capped
        (2000, 1050, 1312),  # 0.525: 704 / 0.525 = 1341, down to a multiple of 32
        (2000, 1400, 1280),  # book proportions keep the long side
        (800, 2000, 1408),  # a wide strip is narrow too
        (100, 100, 1280),
    ],
)
def test_a_narrow_page_gets_a_longer_side(h, w, expected):
    assert page_longest(h, w, 1280, 32, min_short=704, max_longest=1408) == expected
    out, geo = letterbox(np.full((h, w, 3), 9, np.uint8), 1280, 32, min_short=704, max_longest=1408)
    assert max(geo.resized_size) == expected and out.shape[0] % 32 == out.shape[1] % 32 == 0
    assert geo.scale == pytest.approx(expected / max(h, w))
    box = np.array([[0.1 * w, 0.2 * h, 0.8 * w, 0.9 * h]], np.float32)
    assert np.abs(geo.unmap(geo.map(box)) - box).max() <= 1.0


@pytest.mark.parametrize("min_short,max_longest", [(0, 1408), (704, 0), (704, 1280)])
def test_narrow_page_settings_off_keep_the_long_side(min_short, max_longest):
    assert page_longest(2000, 500, 1280, 32, min_short, max_longest) == 1280


def test_narrow_page_settings_leave_a_square_input_square():
    out, _ = letterbox(
        np.zeros((2000, 500, 3), np.uint8), 640, 32, square=True, min_short=704, max_longest=1408
    )
    assert out.shape[:2] == (640, 640)


def test_max_longest_must_be_a_multiple_of_the_divisor():
    with pytest.raises(ValueError, match="max_longest"):
        letterbox(np.zeros((10, 10, 3), np.uint8), 64, 32, max_longest=100)
