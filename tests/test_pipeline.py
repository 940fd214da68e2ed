"""OCR pipeline: lines of several pages recognised together, results in input order."""

import numpy as np
import pytest
from fixtures import page_image
from PIL import Image

from ocrkit.pages.document import Page
from ocrkit.pages.words import PlacedText
from ocrkit.pipeline import OCR, _lines
from ocrkit.util.errors import InputError


def placed(text: str, score: float) -> PlacedText:
    """A reading without positions, as a recognizer stand-in returns it."""
    return PlacedText(text, score, [text])


@pytest.mark.slow
def test_pages_read_together_match_pages_read_alone(tmp_path, tiny_detector_dir, tiny_recognizer_dir):
    # batch_size=1: every line decodes alone, so batch padding cannot change the text and the two
    # paths must agree exactly; the spy checks that the three pages made a single recognizer call.
    # Pages of bars hold no letters: orientation off, so none is read a second time on the other axis.
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, batch_size=1, orientation=0)
    images = [page_image(seed=s) for s in range(3)]
    paths = [tmp_path / f"{name}.png" for name in "abc"]
    for image, path in zip(images, paths, strict=True):
        Image.fromarray(image).save(path)
    calls = []
    read_placed = ocr.recognizer.read_placed

    def spy(crops, batch_size):
        calls.append(len(crops))
        return read_placed(crops, batch_size=batch_size)

    ocr.recognizer.read_placed = spy
    together = list(ocr.read_many(paths, pages_per_batch=3))
    assert calls == [sum(len(p.lines) for p in together)] and calls[0] > 0
    alone = [ocr.read(img, name=str(path)) for img, path in zip(images, paths, strict=True)]
    for t, a in zip(together, alone, strict=True):
        assert t.image == a.image and [x.text for x in t.lines] == [x.text for x in a.lines]
        np.testing.assert_allclose([x.bbox for x in t.lines], [x.bbox for x in a.lines], atol=1e-3)
        assert t.seconds > 0


def test_read_many_keeps_input_order_around_bad_files(tmp_path, tiny_detector_dir, tiny_recognizer_dir):
    for name, seed in (("1.png", 0), ("3.png", 1), ("5.png", 2)):
        Image.fromarray(page_image(seed=seed)).save(tmp_path / name)
    (tmp_path / "2.png").write_bytes(b"")
    (tmp_path / "4.png").write_text("not an image")
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir)
    results = list(ocr.read_many(sorted(tmp_path.glob("*.png"))))
    kinds = ["error" if isinstance(r, InputError) else r.image.rsplit("/", 1)[-1] for r in results]
    assert kinds == ["1.png", "error", "3.png", "error", "5.png"]


def test_reading_given_boxes_matches_reading_detected_ones(tiny_detector_dir, tiny_recognizer_dir):
    # the boxes the detector found, handed back shuffled: same reading order, same crops, same texts
    # (read_boxes takes the page as it is, so the page is read as sent)
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, batch_size=1, orientation=0)
    image = page_image(seed=4)
    detected = ocr.read(image, name="p")
    assert detected.lines
    boxes = np.array([line.bbox for line in detected.lines])[::-1]
    given = ocr.read_boxes(image, boxes, name="p")
    assert [x.text for x in given.lines] == [x.text for x in detected.lines]
    np.testing.assert_allclose([x.bbox for x in given.lines], [x.bbox for x in detected.lines])
    assert all(x.det_score == 1.0 for x in given.lines) and (given.width, given.height) == (260, 180)
    assert ocr.read_boxes(image, np.zeros((0, 4))).lines == []


def test_boxes_read_as_nothing_are_dropped(tiny_detector_dir, tiny_recognizer_dir):
    # the recognizer reads a false box (speck, rule) as "" or blanks: the page keeps the boxes with text
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir)
    image = page_image(seed=4)
    every = ocr.read(image, name="p")
    assert len(every.lines) >= 2
    read_placed = ocr.recognizer.read_placed

    def blank_even_lines(crops, batch_size):
        read = read_placed(crops, batch_size=batch_size)
        return [placed(" " * (i % 4), 0.1) if i % 2 == 0 else r for i, r in enumerate(read)]

    ocr.recognizer.read_placed = blank_even_lines
    kept = ocr.read(image, name="p")
    assert [x.text for x in kept.lines] == [x.text for x in every.lines[1::2]]
    np.testing.assert_allclose([x.bbox for x in kept.lines], [x.bbox for x in every.lines[1::2]])


def test_readings_that_are_not_text_are_dropped_and_unsure_lines_with_letters_kept(
    tiny_detector_dir, tiny_recognizer_dir
):
    # by default a page drops what is not text (a rule read as dashes, a decoder loop), never a line
    # because it was read unsure
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir)
    image = page_image(seed=4)
    boxes = np.array([[10, 10, 200, 40], [10, 50, 200, 80], [10, 90, 200, 120], [10, 130, 200, 160]], float)
    readings = [
        ("- - - - -", 0.9),
        ("Ecrit le 3 mai", 0.05),
        ("la ma la ma la ma la ma la ma", 0.5),
        ("x5", 0.2),
    ]
    ocr.recognizer.read_placed = lambda crops, batch_size: [placed(*r) for r in readings[: len(crops)]]
    ocr.detect = lambda image, name, page: Page(name, 300, 200, page=page, lines=_lines(boxes, np.ones(4)))
    page = ocr.read(image, name="p")
    assert [line.text for line in page.lines] == ["Ecrit le 3 mai", "x5"]
    assert [line.rec_score for line in page.lines] == [0.05, 0.2]


def test_lines_read_unsure_are_dropped_at_the_recognizers_min_confidence(
    tmp_path, tiny_detector_dir, tiny_recognizer_dir
):
    # a false box the recognizer reads as words (a dashed rule) is read unsure; the folder's setting,
    # or the caller's, drops such lines and keeps the others as they were
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import read_spec, write_spec

    image = page_image(seed=4)

    def unsure_even_lines(ocr):
        read_placed = ocr.recognizer.read_placed

        def read(crops, batch_size):
            return [
                placed("words", 0.3) if i % 2 == 0 else placed(r.text, 0.9)
                for i, r in enumerate(read_placed(crops, batch_size))
            ]

        ocr.recognizer.read_placed = read
        return ocr.read(image, name="p")

    every = unsure_even_lines(OCR(tiny_detector_dir, tiny_recognizer_dir))
    assert len(every.lines) >= 2 and [x.rec_score for x in every.lines[:2]] == [0.3, 0.9]
    rec = tmp_path / "rec"
    shutil.copytree(tiny_recognizer_dir, rec)
    write_spec(rec, replace(read_spec(rec, "recognizer"), min_confidence=0.5))
    kept = unsure_even_lines(OCR(tiny_detector_dir, rec))
    assert [x.text for x in kept.lines] == [x.text for x in every.lines[1::2]]
    np.testing.assert_allclose([x.bbox for x in kept.lines], [x.bbox for x in every.lines[1::2]])
    # the dropped lines stay beside the page (for the overlay), out of its text and JSON
    np.testing.assert_allclose([x.bbox for x in kept.unsure], [x.bbox for x in every.lines[0::2]])
    assert "unsure" not in kept.to_dict() and every.unsure == []
    assert len(unsure_even_lines(OCR(tiny_detector_dir, rec, min_confidence=0.0)).lines) == len(every.lines)
    with pytest.raises(ValueError, match="min_confidence"):
        OCR(tiny_detector_dir, rec, min_confidence=1.0)


def test_a_page_that_fails_in_a_batch_is_named_and_the_others_are_read(
    tmp_path, tiny_detector_dir, tiny_recognizer_dir
):
    # the detector fails on the one 200-pixel-wide page: the group of three fails, is read again page by
    # page, and only that page becomes an error; the others read as they do alone
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, batch_size=1)
    paths = [tmp_path / f"{n}.png" for n in (1, 2, 3)]
    for n, path in enumerate(paths):
        Image.fromarray(page_image(seed=n)[:, : 200 if n == 1 else None]).save(path)
    predict = ocr.detector.predict

    def fail_on_narrow_pages(images):
        if images[0].shape[1] == 200:
            raise RuntimeError("cannot detect")
        return predict(images)

    ocr.detector.predict = fail_on_narrow_pages
    first, failed, third = ocr.read_many(paths, pages_per_batch=3)
    assert isinstance(failed, InputError) and str(failed) == f"{paths[1]}: RuntimeError: cannot detect"
    assert isinstance(failed.__cause__, RuntimeError)
    for path, page in ((paths[0], first), (paths[2], third)):
        assert [x.text for x in page.lines] == [x.text for x in ocr.read(path).lines] and page.image == str(
            path
        )


def test_read_takes_a_file_and_names_a_missing_page(tmp_path, tiny_detector_dir, tiny_recognizer_dir):
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir)
    image = page_image(seed=2)
    Image.fromarray(image).save(tmp_path / "p.png")
    from_file = ocr.read(tmp_path / "p.png")
    assert from_file.image == str(tmp_path / "p.png") and (from_file.width, from_file.height) == (260, 180)
    assert [x.text for x in from_file.lines] == [x.text for x in ocr.read(image).lines]
    with pytest.raises(InputError, match="has no page 2"):
        ocr.read(tmp_path / "p.png", page=2)
    with pytest.raises(InputError, match="no such file"):
        ocr.read(tmp_path / "missing.png")


def test_detect_finds_the_lines_read_reads(tiny_detector_dir, tiny_recognizer_dir):
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=0)  # detect takes the page as it is
    image = page_image(seed=4)
    found, read = ocr.detect(image, name="p"), ocr.read(image, name="p")
    assert all(line.text == "" and line.score == line.det_score for line in found.lines)
    assert [x.bbox for x in read.lines] == [
        x.bbox for x in found.lines if x.bbox in [y.bbox for y in read.lines]
    ]
    assert len(found.lines) >= len(read.lines) > 0


def test_crowded_lines_are_read_again_cut_once_the_page_is_read(
    tmp_path, tiny_detector_dir, tiny_recognizer_dir
):
    # with the folder's `trim_crowded`, a line whose box overlaps another's is read again cut to its
    # line after the whole page is read; the cut reading is kept where it is text and at least as sure.
    # Lines apart from their neighbours, and crowded crops the cut leaves as they are, keep their reading
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import read_spec, write_spec

    image = np.full((200, 300, 3), 255, np.uint8)
    for top, bottom in [(16, 42), (44, 70), (92, 108), (130, 158), (162, 188)]:  # each line's ink
        image[top:bottom, 14:196:6] = 0
        image[top + (bottom - top) // 3 : bottom - (bottom - top) // 3, 14:196] = 0
    # boxes 0-1 and 3-4 overlap; 0, 1 and 4 hold a neighbour's ink at an edge, 3 holds none; 2 stands apart
    boxes = np.array(
        [[10, 10, 200, 46], [10, 40, 200, 74], [10, 90, 200, 110], [10, 126, 200, 160], [10, 156, 200, 190]]
    )
    first = [0.6, 0.6, 0.6, 0.95, 0.6]
    rec = tmp_path / "rec"
    shutil.copytree(tiny_recognizer_dir, rec)
    write_spec(rec, replace(read_spec(rec, "recognizer"), trim_crowded=True))

    def reader(calls, cut, whole):
        def read(crops, batch_size, trim_margins=None):
            calls.append((len(crops), trim_margins))
            return [placed(*r) for r in (cut if trim_margins is False else whole)[: len(crops)]]

        return read

    def read_with(folder):
        calls = []
        cut = [("cut", 0.8), ("- -", 0.9), ("cut less sure", 0.3)]  # lines 0, 1 and 4, cut here
        ocr = OCR(tiny_detector_dir, folder, orientation=0)
        ocr.recognizer.read_placed = reader(calls, cut, [(f"whole {i}", p) for i, p in enumerate(first)])
        ocr.detect = lambda image, name, page: Page(
            name, 300, 200, page=page, lines=_lines(boxes, np.ones(5))
        )
        return ocr, ocr.read(image, name="p"), calls

    ocr, page, calls = read_with(rec)
    assert calls == [(5, None), (3, False)]  # the cut crops are read as they are
    assert [(line.text, line.rec_score) for line in page.lines] == [
        ("cut", 0.8),  # read as text and surer cut
        ("whole 1", 0.6),  # its cut reading is not text
        ("whole 2", 0.6),  # apart from its neighbours
        ("whole 3", 0.95),  # the cut leaves its crop as it is
        ("whole 4", 0.6),  # its cut reading is less sure
    ]
    # given boxes (`evaluate pages --gt-boxes`) are read as the pipeline reads its own
    calls.clear()
    given = ocr.read_boxes(image, boxes, name="p")
    assert calls == [(5, None), (3, False)] and [line.text for line in given.lines][0] == "cut"
    _, page, calls = read_with(tiny_recognizer_dir)
    assert calls == [(5, None)] and [line.text for line in page.lines] == [f"whole {i}" for i in range(5)]


def test_lines_whose_box_ends_inside_their_print_are_read_again_grown(
    tmp_path, tiny_detector_dir, tiny_recognizer_dir
):
    # with the folder's `grow_cut_ends`, a line whose box ends inside its print is read again from the
    # box grown to where the print stops; the grown box and reading are kept where it is text and at
    # least as sure. A box framed with paper, or read as no text at first (a speck, an ornament), is not
    # read again.
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import read_spec, write_spec

    image = np.full((200, 300, 3), 250, np.uint8)
    for top in (20, 80, 140):  # three lines of print from x=20 to 200
        for x in range(20, 200, 14):
            image[top : top + 24, x : x + 10] = 20
    boxes = np.array([[60, 14, 200, 50], [14, 74, 206, 110], [60, 134, 200, 170]], np.float32)
    rec = tmp_path / "rec"
    shutil.copytree(tiny_recognizer_dir, rec)
    write_spec(rec, replace(read_spec(rec, "recognizer"), grow_cut_ends=True))

    def read_with(folder, second, first=(("line 0", 0.6), ("line 1", 0.6), ("line 2", 0.6))):
        calls = []

        def read(crops, batch_size, trim_margins=None):
            calls.append([crop.shape[1] for crop in crops])
            return [placed(*r) for r in (second if len(calls) > 1 else first)]

        ocr = OCR(tiny_detector_dir, folder, orientation=0)
        ocr.recognizer.read_placed = read
        ocr.detect = lambda image, name, page: Page(
            name, 300, 200, page=page, lines=_lines(boxes, np.ones(3))
        )
        return ocr.read(image, name="p"), calls

    page, calls = read_with(rec, [("grown 0", 0.9), ("grown 2", 0.5)])
    assert calls[0] == [140, 192, 140] and len(calls) == 2 and all(w > 175 for w in calls[1])
    assert [(line.text, line.rec_score) for line in page.lines] == [
        ("grown 0", 0.9),
        ("line 1", 0.6),
        ("line 2", 0.6),
    ]
    assert page.lines[0].bbox[0] < 20 < 60 == page.lines[2].bbox[0]  # the kept reading brings its box
    assert page.lines[1].bbox == [14, 74, 206, 110]
    page, _ = read_with(rec, [("", 0.95), ("- -", 0.95)])  # grown readings that are not text
    assert [line.text for line in page.lines] == ["line 0", "line 1", "line 2"]
    page, calls = read_with(rec, [("grown 0", 0.9)], first=[("line 0", 0.6), ("line 1", 0.6), ("", 0.6)])
    assert len(calls[1]) == 1 and [line.text for line in page.lines] == ["grown 0", "line 1"]
    page, calls = read_with(tiny_recognizer_dir, [])
    assert len(calls) == 1 and [line.bbox[0] for line in page.lines] == [60, 14, 60]
