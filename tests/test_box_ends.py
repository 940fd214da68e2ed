"""Box ends grown to where their line's print stops (ocrkit.images.box_ends), and the pipeline applying it."""

import numpy as np
import pytest
from fixtures import ROW_HEIGHT as HEIGHT
from fixtures import page_with_words
from fixtures import row_box as box

from ocrkit.images.box_ends import GAP, PAD, REACH, grow_to_ink


def test_an_end_inside_a_word_moves_out_to_where_the_word_starts_and_ends():
    page = page_with_words((100, 250))  # print from x=100 to 250
    grown = grow_to_ink(page, np.array([box(131, 220)]))  # starts inside the 3rd letter, ends in the 9th
    pad = PAD * HEIGHT
    np.testing.assert_allclose(grown[0], [100 - pad, 100, 250 + pad, 140], atol=1)


def test_ends_with_paper_beyond_them_stay_where_they_are():
    page = page_with_words((100, 250))
    boxes = np.array([box(96, 252), box(90, 260)])  # the word framed with paper on both sides
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


def test_a_word_a_gap_away_is_not_joined():
    gap = int(np.ceil(GAP * HEIGHT)) + 2
    page = page_with_words((100, 200), (200 + gap, 300))
    boxes = np.array([box(202 + gap - 4, 300)])  # the second word, framed a little loosely
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


def test_an_end_stops_short_of_another_box_of_its_row_and_stays_where_one_overlaps_it():
    page = page_with_words((100, 200), (216, 400))  # two words 16 px (0.4 box heights) apart
    boxes = np.array([box(100, 200), box(240, 300), box(290, 400)])
    grown = grow_to_ink(page, boxes)
    assert grown[1, 0] == pytest.approx(216 - PAD * HEIGHT)  # to where its word starts
    assert grown[1, 2] == 300 and grown[2, 0] == 290  # the two overlap: those ends stay


def test_print_running_into_a_neighbours_box_moves_nothing():
    page = page_with_words((100, 400))  # one run of print through both boxes
    boxes = np.array([box(100, 200), box(230, 300)])
    np.testing.assert_array_equal(grow_to_ink(page, boxes)[1], boxes[1])


def test_an_end_moves_at_most_reach_box_heights_and_not_into_print_that_runs_on():
    near = int(REACH * HEIGHT) - 4
    page = page_with_words((300 - near, 400 + near))
    grown = grow_to_ink(page, np.array([box(300, 400)]))
    assert grown[0, 0] < 300 - near + 1 and grown[0, 2] > 400 + near - 10
    page = page_with_words((0, 600))  # print that is not seen to stop: a border, a woodcut
    boxes = np.array([box(300, 400)])
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


def test_a_neighbouring_lines_letters_reaching_into_the_box_do_not_grow_it():
    page = page_with_words((100, 250))
    for x in range(20, 600, 12):
        page[100:111, x : x + 4] = 20  # the line above's descenders, in the box's top quarter
        page[130:140, x + 6 : x + 10] = 20  # and the line below's ascenders, in its bottom quarter
    boxes = np.array([box(96, 252)])
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


def test_specks_beside_a_box_do_not_grow_it():
    page = page_with_words((100, 250))
    page[120, 80:96] = 20  # a one-pixel scratch just left of the word
    boxes = np.array([box(97, 252)])
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


@pytest.mark.parametrize(
    "page, boxes",
    [
        (np.full((240, 600), 250, np.uint8), np.array([box(130, 220)])),  # blank paper
        (page_with_words((100, 250)), np.array([[131.0, 100.0, 160.0, 240.0]])),  # a tall, narrow box
        (page_with_words((100, 250)), np.array([[131.0, 110.0, 220.0, 114.0]])),  # too low to tell
    ],
)
def test_boxes_on_blank_paper_upright_or_tiny_stay_as_they_are(page, boxes):
    np.testing.assert_array_equal(grow_to_ink(page, boxes), boxes)


def test_light_print_on_a_dark_ground_is_followed_too():
    page = 255 - page_with_words((100, 250))
    grown = grow_to_ink(page, np.array([box(131, 220)]))
    np.testing.assert_allclose(grown[0, [0, 2]], [100 - PAD * HEIGHT, 250 + PAD * HEIGHT], atol=1)


def test_the_ground_test_answers_as_the_median_does():
    # _median_at_most stands in for np.median(window) <= level without sorting: same answer on windows of
    # odd and even size, including those whose two middle values lie either side of the level
    from ocrkit.images.box_ends import _median_at_most

    rng = np.random.default_rng(1)
    windows = [rng.integers(0, 256, (h, w), dtype=np.uint8) for h, w in rng.integers(1, 12, (300, 2))]
    windows += [np.array([[10, 20, 30, 40]], np.uint8), np.array([[10, 19, 21, 40]], np.uint8)]
    for window in windows:
        for level in (15.0, 20.0, 25.0, 127.0):
            at_most = int((window <= level).sum())
            assert _median_at_most(window, at_most, level) == (np.median(window) <= level)
