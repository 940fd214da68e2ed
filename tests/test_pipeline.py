"""OCR pipeline: lines of several pages recognised together, results in input order."""

import numpy as np
import pytest
from fixtures import page_image
from PIL import Image

from ocrkit.errors import InputError
from ocrkit.pipeline import OCR


@pytest.mark.slow
def test_pages_read_together_match_pages_read_alone(tiny_detector_dir, tiny_recognizer_dir):
    # batch_size=1: every line decodes alone, so batch padding cannot change the text and the two
    # paths must agree exactly; the spy checks that the three pages made a single recognizer call.
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, batch_size=1)
    images = [page_image(seed=s) for s in range(3)]
    calls = []
    recognize = ocr.recognizer.recognize

    def spy(crops, batch_size):
        calls.append(len(crops))
        return recognize(crops, batch_size=batch_size)

    ocr.recognizer.recognize = spy
    together = ocr.read_arrays(images, ["a", "b", "c"], [1, 1, 1])
    assert calls == [sum(len(p.lines) for p in together)] and calls[0] > 0
    alone = [ocr.read_array(img, name=name) for img, name in zip(images, "abc", strict=True)]
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
    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, batch_size=1)
    image = page_image(seed=4)
    detected = ocr.read_array(image, name="p")
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
    every = ocr.read_array(image, name="p")
    assert len(every.lines) >= 2
    recognize = ocr.recognizer.recognize

    def blank_even_lines(crops, batch_size):
        read = recognize(crops, batch_size=batch_size)
        return [(" " * (i % 4), 0.1) if i % 2 == 0 else r for i, r in enumerate(read)]

    ocr.recognizer.recognize = blank_even_lines
    kept = ocr.read_array(image, name="p")
    assert [x.text for x in kept.lines] == [x.text for x in every.lines[1::2]]
    np.testing.assert_allclose([x.bbox for x in kept.lines], [x.bbox for x in every.lines[1::2]])
