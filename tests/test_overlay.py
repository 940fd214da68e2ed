"""The overlay: the page with its boxes untouched beside a panel where each reading stands in its box."""

import numpy as np
from PIL import Image

from ocrkit.pages.document import Line, Page
from ocrkit.pages.overlay import GAP, KEPT, UNSURE, draw_overlay
from ocrkit.pages.text_faces import face_for


def page_and_image() -> tuple[Page, np.ndarray]:
    image = np.full((200, 300, 3), 255, np.uint8)
    image[40:60, 20:200] = 0  # the print of the kept line
    page = Page("p.png", 300, 200, lines=[Line([10, 30, 210, 70], "kept line")])
    page.unsure = [Line([10, 120, 210, 160], "unsure line")]
    return page, image


def test_the_page_half_keeps_the_print_and_the_panel_holds_the_reading_in_its_box():
    page, image = page_and_image()
    out = np.asarray(draw_overlay(image, page))
    assert out.shape == (200, 2 * 300 + GAP, 3)
    left = out[:, :300]
    assert (left[42:58, 22:198] == 0).all()  # no label painted over the print
    assert (left[30, 50] == KEPT).all()  # the kept box in red
    panel = out[:, 300 + GAP :]
    inked = np.argwhere((panel < 200).any(axis=2) & (np.abs(panel[..., 2].astype(int) - panel[..., 0]) > 80))
    assert len(inked) and inked[:, 0].min() >= 30 and inked[:, 0].max() <= 70  # blue text inside the box
    assert inked[:, 1].min() >= 10 and inked[:, 1].max() <= 210


def test_a_line_dropped_as_unsure_is_drawn_dashed_in_grey():
    page, image = page_and_image()
    out = np.asarray(draw_overlay(image, page))
    top_edge = out[120, 10:211]
    grey = (top_edge == UNSURE).all(axis=1)
    assert 0.4 < grey.mean() < 0.8  # dashes and gaps
    assert not (out[100:170, :300] == KEPT).all(axis=2).any()  # not red like a kept line


def test_a_reading_takes_a_face_that_has_its_characters():
    assert face_for("Büchern") == "dejavu"
    assert face_for("wuͤrde") == "liberation"  # the combining e above of early German print
    assert face_for("✓ done") == "dejavu"


def test_a_wide_reading_is_shrunk_into_its_box():
    image = np.full((60, 200, 3), 255, np.uint8)
    page = Page("p.png", 200, 60, lines=[Line([0, 10, 100, 50], "a long reading")])  # 28 px: ~190 wide
    panel = np.asarray(draw_overlay(image, page))[:, 200 + GAP :]
    blue = np.argwhere((panel[..., 2].astype(int) - panel[..., 0] > 80) & (panel[..., 0] < 150))
    assert len(blue) and 80 <= blue[:, 1].max() <= 102  # the font is cut to fit the box
    assert Image.fromarray(panel).size == (200, 60)
