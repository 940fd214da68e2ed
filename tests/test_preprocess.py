import cv2
import numpy as np
import pytest

from ocrkit.preprocess import letterbox, padded_size

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
