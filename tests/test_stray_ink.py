"""Print in a detected line's row that no box holds (ocrkit.images.stray_ink), and the pipeline reading it."""

import numpy as np
from fixtures import ROW_HEIGHT as HEIGHT
from fixtures import page_with_words
from fixtures import row_box as box

from ocrkit.images.stray_ink import GAP, REACH, stray_print


def test_a_field_between_two_boxes_of_a_row_is_boxed_on_the_rows_of_its_line():
    page = page_with_words((100, 250), (400, 430), (600, 750), width=900)  # a two-letter field in the middle
    found = stray_print(page, np.array([box(96, 254), box(596, 754)]))
    assert found.shape == (1, 4)
    x0, y0, x1, y1 = found[0]
    assert 390 <= x0 <= 400 and 430 <= x1 <= 440 and (y0, y1) == (100, 140)


def test_fields_beyond_a_rows_first_and_last_box_are_found_within_reach():
    far = int(REACH * HEIGHT) + 60
    page = page_with_words((60, 90), (200, 260), (300, 350), (500, 530), (350 + far, 380 + far), width=1200)
    found = stray_print(page, np.array([box(196, 264), box(296, 354)]))
    lefts = sorted(int(b[0]) for b in found)
    assert len(found) == 2 and 50 <= lefts[0] <= 60 and 490 <= lefts[1] <= 500  # not the one beyond reach
    assert len(stray_print(page, np.array([box(196, 354)]))) == 0  # a row of one box: running text


def test_print_just_beyond_a_box_end_is_the_boxs_own_and_not_boxed():
    near = int(GAP * HEIGHT) - 6  # closer than GAP: the box's own print, cut short
    page = page_with_words((100, 250), (250 + near, 290 + near), (600, 700), width=900)
    assert len(stray_print(page, np.array([box(96, 254), box(596, 704)]))) == 0


def test_a_neighbours_descenders_a_dark_border_and_specks_are_not_fields():
    page = page_with_words((100, 250), (700, 800), width=900)
    page[100:106, 400:460] = 20  # ink in the row's top rows only: the line above's descenders
    page[100:140, 860:900] = 30  # the dark bed beyond the paper's edge
    page[118:121, 600:603] = 20  # a speck
    assert len(stray_print(page, np.array([box(96, 254), box(696, 804)]))) == 0


def test_a_row_holding_all_its_print_in_boxes_gives_nothing():
    page = page_with_words((100, 250), (400, 430), width=900)
    assert len(stray_print(page, np.array([box(96, 254), box(396, 434)]))) == 0
    assert stray_print(page, np.zeros((0, 4), np.float32)).shape == (0, 4)


def test_the_pipeline_keeps_stray_print_read_as_text_and_sure_as_a_line_without_a_detector_score(
    tmp_path, tiny_detector_dir, tiny_recognizer_dir
):
    # with the folder's `read_stray_print`, fields in a line's row that no box holds are read once the
    # page is read, and kept, in reading order, where read as text at least STRAY_SURE
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import read_spec, write_spec
    from ocrkit.pages.document import Page
    from ocrkit.pages.words import PlacedText
    from ocrkit.pipeline import OCR, STRAY_SURE, _lines

    gray = page_with_words((100, 250), (400, 430), (600, 750), (100, 250), width=900)
    gray[168:192] = gray[108:132]  # a second row, 60 px lower, with the same print
    image = np.repeat(gray[:, :, None], 3, axis=2)
    boxes = np.array([box(96, 254), box(596, 754), [96, 160, 254, 200], [596, 160, 754, 200]], np.float32)
    rec = tmp_path / "rec"
    shutil.copytree(tiny_recognizer_dir, rec)
    write_spec(rec, replace(read_spec(rec, "recognizer"), read_stray_print=True))

    def read_with(strays):
        calls = []

        def read(crops, batch_size, trim_margins=None):
            calls.append(len(crops))
            texts = [("a", 0.9), ("b", 0.9), ("c", 0.9), ("d", 0.9)] if len(calls) == 1 else strays
            return [PlacedText(text, score, [text]) for text, score in texts]

        ocr = OCR(tiny_detector_dir, rec, orientation=0)
        ocr.recognizer.read_placed = read
        lines = _lines(boxes, np.ones(4))
        ocr.detect = lambda image, name, page: Page(name, 900, 240, page=page, lines=lines)
        return ocr.read(image, name="p"), calls

    page, calls = read_with([("2", STRAY_SURE), ("4", STRAY_SURE)])
    assert calls == [4, 2]  # one field in each row
    assert [line.text for line in page.lines] == ["a", "2", "b", "c", "4", "d"]
    assert [line.det_score for line in page.lines] == [1, 0, 1, 1, 0, 1]
    page, _ = read_with([("2", STRAY_SURE - 0.01), ("—", 0.99)])  # unsure; no letter or digit
    assert [line.text for line in page.lines] == ["a", "b", "c", "d"]
