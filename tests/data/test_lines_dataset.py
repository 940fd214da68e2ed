"""Line-crop helpers of the recognizer's training set: detector-like edge jitter and glued line pairs."""

from __future__ import annotations

import numpy as np
import pytest

from ocrkit.data.lines_dataset import glue_images, jitter_edges
from ocrkit.recognition.config import DataConfig
from ocrkit.util.config import ConfigError


def _crop(height: int = 40, width: int = 200, paper: int = 230) -> np.ndarray:
    image = np.full((height, width, 3), paper, np.uint8)
    image[10:30, 20:180] = 10  # ink, away from the edges
    return image


class _Fixed:
    """A generator whose normal draws are given shifts (in line heights)."""

    def __init__(self, shifts: list[float]) -> None:
        self.shifts = np.array(shifts)

    def normal(self, loc: float, scale: float, size: int) -> np.ndarray:
        return self.shifts[:size]


def test_jitter_trims_inward_and_pads_outward_with_paper():
    image = _crop()
    # left in by 0.25 h (10 px), top out by 0.1 h (4 px), right out by 0.2 h, bottom in by 0.05 h
    out = jitter_edges(image, 0.12, _Fixed([0.25, -0.1, -0.2, 0.05]))
    assert out.shape == (40 + 4 - 2, 200 - 10 + 8, 3)
    assert (out[:4] == 230).all()  # padded top row is paper, not ink
    assert (out[:, -8:] == 230).all()
    # the trimmed left edge starts 10 px into the original crop
    np.testing.assert_array_equal(out[4:, :190], image[:38, 10:200])


def test_jitter_is_clipped_and_never_eats_more_than_a_quarter():
    image = _crop(height=40, width=60)
    out = jitter_edges(image, 0.4, _Fixed([5.0, 5.0, 5.0, 5.0]))  # clipped to 2.5 sd = 1 h = 40 px
    assert out.shape == (40 - 2 * 10, 60 - 2 * 15, 3)  # a quarter of 40 and of 60 from each side


def test_jitter_draws_from_the_seeded_global_rng():
    image = _crop()
    np.random.seed(3)
    first = jitter_edges(image, 0.12)
    np.random.seed(3)
    assert np.array_equal(first, jitter_edges(image, 0.12))
    shapes = {jitter_edges(image, 0.12).shape for _ in range(20)}
    assert len(shapes) > 5  # it does move the edges


def test_glued_pair_shares_the_first_height_with_a_paper_gap():
    out = glue_images([_crop(40, 100), _crop(20, 50)])
    assert out.shape == (40, 100 + 20 + 100, 3)
    assert (out[:, 100:120] == 230).all()


@pytest.mark.parametrize("value", [-0.1, 0.5])
def test_box_jitter_setting_is_range_checked(value):
    with pytest.raises(ConfigError, match="data.box_jitter"):
        DataConfig(box_jitter=value)
