"""Page orientation: quarter turns of pages and boxes, the windows read, the decision, torch/ONNX parity,
and pages sent turned read as the upright page with boxes on the page as sent."""

import numpy as np
import pytest
import torch
from fixtures import page_image

from ocrkit.hub.model_folder import OrientationSpec, read_spec
from ocrkit.images.frame import ANGLES, boxes_to_sent, turned, upright
from ocrkit.orientation.decide import decide, told
from ocrkit.orientation.model import OrientationClassifier, build, save
from ocrkit.orientation.patches import gray_page, page_windows, to_input
from ocrkit.pages.document import Orientation


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_a_box_lands_where_its_pixels_went(turns):
    page = np.zeros((60, 100), np.uint8)
    box = [10, 5, 40, 20]  # x0, y0, x1, y1 on the upright page
    page[5:20, 10:40] = 255
    sent = turned(page, turns)
    ys, xs = np.nonzero(sent)
    assert boxes_to_sent(np.array([box]), turns, sent.shape[1], sent.shape[0])[0].tolist() == [
        xs.min(),
        ys.min(),
        xs.max() + 1,
        ys.max() + 1,
    ]
    assert np.array_equal(upright(sent, turns), page)


def test_windows_hold_the_print_and_a_blank_page_gives_one():
    page = np.full((900, 700), 235, np.uint8)
    page[100:130, 80:600] = 20  # one dark band: the only print
    windows = page_windows(gray_page(np.repeat(page[..., None], 3, 2), 1024), 128, 8)
    assert windows.shape[1:] == (128, 128) and 1 <= len(windows) <= 8
    assert all((w < 128).any() for w in windows)  # every window read holds print
    blank = page_windows(np.full((300, 200), 240, np.uint8), 128, 8)
    assert blank.shape == (1, 128, 128)
    assert to_input(windows).shape == (len(windows), 1, 128, 128) and to_input(windows).max() <= 1.0


def test_windows_hold_letters_before_a_dark_scanner_bed():
    """A book scan's dark bed beside the page holds more ink than its print; the windows read are the
    print's, or the classifier votes on the bed's straight edge."""
    page = np.full((1024, 800), 235, np.uint8)
    page[:, :56] = 25  # the scanner bed: windows over its edge are under half ink
    for y in range(300, 700, 16):  # a block of small letters, 6 x 9 px each
        for x in range(320, 720, 10):
            page[y : y + 9, x : x + 6] = 30
    windows = page_windows(page, 128, 4)
    assert len(windows) == 4
    for window in windows:
        assert not (window[:, :4] < 128).all()  # no window holds the bed's edge
        assert (window < 128).mean() > 0.1  # each holds letters


def test_decision_turns_only_when_sure():
    sure = decide(np.tile([0.0, 0.0, 4.0, 0.0], (6, 1)), 0.9, 0.9)
    assert (sure.angle, sure.applied, sure.turns, sure.method) == (180, 180, 2, "classifier")
    assert sure.confidence > 0.99
    # sure of the axis (0 or 180), not of the direction: turned for the page's lines to settle
    axis = decide(np.array([[2.0, -3.0, 2.4, -3.0]]), 0.9, 0.9)
    assert (axis.angle, axis.applied, axis.method) == (180, 180, "lines") and axis.confidence < 0.9
    unsure = decide(np.array([[1.0, 0.9, 0.0, 0.8]]), 0.9, 0.9)
    assert (unsure.applied, unsure.method) == (0, "unsure")
    # a classifier trusted for the axis only: however sure, the lines settle the direction
    assert decide(np.tile([0.0, 0.0, 9.0, 0.0], (6, 1)), 1.0, 0.9).method == "lines"
    assert told(270) == Orientation(270, 1.0, 270, method="told")
    with pytest.raises(ValueError, match="orientation must be one of"):
        told(45)


def _sure_when_dark_below(batch):
    return [0.9 if c[-1, 0] < c[0, 0] else 0.3 for c in batch]


def _decoder_must_not_be_asked(batch):
    raise AssertionError("the decoder was asked although the CTC votes were clear")


def test_lines_that_read_better_turned_round_turn_the_page():
    from ocrkit.orientation.lines import KEEP, TURN, lines_direction

    crops = [np.tile(np.arange(20, dtype=np.uint8)[:, None], (1, 60)) for _ in range(3)]  # dark at the top
    check = (_sure_when_dark_below, _decoder_must_not_be_asked)  # unanimous CTC votes settle it
    assert lines_direction(crops, _sure_when_dark_below(crops), *check) == TURN
    upright = [c[::-1] for c in crops]
    assert lines_direction(upright, _sure_when_dark_below(upright), *check) == KEEP
    assert lines_direction([], [], *check) == KEEP


def test_the_decoder_votes_only_where_the_ctc_votes_split():
    """8 lines: 1 of 8 CTC votes for turning is clear (the decoder is not asked); 3 of 8 is split, and
    each line's decoder vote is counted beside its CTC vote; a split vote that keeps the page asks for
    it to be read both ways up."""
    from ocrkit.orientation.lines import KEEP, READ_BOTH, TURN, ctc_votes_split, lines_direction

    crops = [np.full((10, 40), i, np.uint8) for i in range(8)]

    def ctc_turned_surer(count):  # the crops as they are, then turned
        return lambda batch: [0.5] * 8 + [0.9] * count + [0.1] * (8 - count)

    def decoder_turned_surer(count):  # the turned crops
        return lambda batch: [("text", 0.9)] * count + [("text", 0.1)] * (len(batch) - count)

    as_read = [0.5] * 8
    assert lines_direction(crops, as_read, ctc_turned_surer(1), _decoder_must_not_be_asked) == KEEP
    assert lines_direction(crops, as_read, ctc_turned_surer(7), _decoder_must_not_be_asked) == TURN
    assert lines_direction(crops, as_read, ctc_turned_surer(3), decoder_turned_surer(8)) == TURN  # 11/16
    assert lines_direction(crops, as_read, ctc_turned_surer(5), decoder_turned_surer(0)) == READ_BOTH  # 5/16
    assert lines_direction(crops, as_read, ctc_turned_surer(5), decoder_turned_surer(4)) == TURN  # 9/16
    assert [ctc_votes_split(np.arange(8) < k) for k in range(9)] == [False] * 2 + [True] * 5 + [False] * 2


def test_an_even_split_turns_the_page_the_way_its_lines_read_surer_overall():
    """8 of 16 votes for turning: the summed differences between the turned and the as-read scores
    settle it, the CTC head's and the decoder's alike."""
    from ocrkit.orientation.lines import KEEP, READ_BOTH, SURE_VOTE, TURN, lines_direction

    crops = [np.full((10, 40), i, np.uint8) for i in range(8)]

    def ctc(batch):  # 3 of 8 surer turned, each by 0.05; 5 less sure, each by 0.02
        return [0.5] * 8 + [0.55] * 3 + [0.48] * 5

    def decoder(surer_by):  # 5 of 8 surer turned by `surer_by`; 3 less sure by 0.1
        return lambda batch: [("", 0.5 + surer_by)] * 5 + [("", 0.4)] * 3

    as_read = [0.5] * 8
    assert lines_direction(crops, as_read, ctc, decoder(0.2)) == TURN  # +0.15 - 0.1 + 1.0 - 0.3
    assert lines_direction(crops, as_read, ctc, decoder(0.01)) == READ_BOTH  # +0.15 - 0.1 + 0.05 - 0.3
    assert lines_direction(crops, as_read, ctc, decoder(0.2), SURE_VOTE) == KEEP  # no clear vote


def test_a_classifier_sure_of_the_direction_is_overruled_only_by_a_clear_vote():
    from ocrkit.orientation.lines import (
        DIRECTION_SURE,
        KEEP,
        SURE_VOTE,
        TURN,
        VOTE,
        lines_direction,
        vote_to_turn,
    )

    crops = [np.full((10, 40), i, np.uint8) for i in range(8)]

    def five_of_eight_surer_turned(batch):  # the crops as they are, then turned
        return [0.5] * 8 + [0.9] * 5 + [0.1] * 3

    def read_five_of_eight_surer(batch):  # the turned crops
        return [("", 0.9)] * 5 + [("", 0.1)] * 3

    check = (five_of_eight_surer_turned, read_five_of_eight_surer)
    assert vote_to_turn(DIRECTION_SURE) == SURE_VOTE and vote_to_turn(DIRECTION_SURE - 0.01) == VOTE
    assert lines_direction(crops, [0.5] * 8, *check, VOTE) == TURN
    assert lines_direction(crops, [0.5] * 8, *check, SURE_VOTE) == KEEP


def test_only_a_page_whose_widest_lines_read_sure_skips_the_check_both_ways():
    from ocrkit.orientation.lines import MIN_SURE_LINES, SURE_READING, reads_upright, widest

    assert reads_upright(np.full(8, SURE_READING))
    assert not reads_upright(np.full(8, SURE_READING - 0.01))
    assert not reads_upright(np.full(MIN_SURE_LINES - 1, 0.99))  # too few lines say nothing
    # the median decides: one wide rule read as nothing does not send a sure page to the check
    assert reads_upright(np.array([0.1, 0.95, 0.97, 0.99, 0.9]))
    boxes = np.array([[0, 0, 50, 10], [0, 20, 300, 30], [0, 40, 120, 50]], np.float64)
    assert widest(boxes).tolist() == [1, 2, 0]


class _Says:
    """An orientation classifier that reports one `orientation` for every page (sure of an axis or not,
    leaning one way or the other, as each test needs)."""

    def __init__(self, orientation: Orientation) -> None:
        self.orientation = orientation

    def classify(self, image):
        return self.orientation


def _read_by(orienter, detector_dir, recognizer_dir, monkeypatch, upright: bool, skew: float = 0.0):
    """An OCR whose page classifier is `orienter`, every page skewed `skew` degrees and its widest lines
    reading sure (`upright`) or not, so a test sets only what it is about."""
    import ocrkit.pipeline as pipeline

    ocr = pipeline.OCR(detector_dir, recognizer_dir, orientation=0)
    ocr.orienter = orienter
    monkeypatch.setattr(pipeline, "page_skew", lambda page: skew)
    monkeypatch.setattr(pipeline, "reads_upright", lambda scores: upright)
    return ocr


@pytest.mark.parametrize("sure", [True, False])
def test_a_page_read_sure_is_not_read_again_and_one_reading_better_turned_is_turned_round(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, sure
):
    import ocrkit.pipeline as pipeline

    image = page_image(seed=4)
    ocr = _read_by(
        _Says(Orientation(0, 0.6, 0, method="lines")),
        tiny_detector_dir,
        tiny_recognizer_dir,
        monkeypatch,
        upright=sure,
    )
    checked = []

    def turned_surer(crops):  # the crops as they are, then turned: the turned ones read surer
        checked.append(len(crops))
        return [0.2] * (len(crops) // 2) + [0.9] * (len(crops) // 2)

    monkeypatch.setattr(ocr.recognizer, "line_confidences", turned_surer)
    monkeypatch.setattr(ocr.recognizer, "recognize", lambda crops: [("x", 1.0)] * len(crops))
    page = ocr.read(image)
    if sure:
        assert checked == [] and page.orientation.applied == 0
        expected = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=0).read(image)
    else:
        assert checked and page.orientation.applied == 180
        expected = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=180).read(image)
    assert page.lines and [x.text for x in page.lines] == [x.text for x in expected.lines]
    np.testing.assert_allclose(page.boxes(), expected.boxes(), atol=1e-3)


@pytest.mark.parametrize("turned_surer", [True, False])
def test_a_page_leaning_upside_down_reads_its_widest_lines_before_the_rest(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, turned_surer
):
    import ocrkit.orientation.lines as lines
    import ocrkit.pipeline as pipeline

    image = page_image(seed=4)
    ocr = _read_by(
        _Says(Orientation(180, 0.6, 180, method="lines")),
        tiny_detector_dir,
        tiny_recognizer_dir,
        monkeypatch,
        upright=False,
    )
    monkeypatch.setattr(lines, "LINES_CHECKED", 1)
    as_is, turned = (0.2, 0.9) if turned_surer else (0.9, 0.2)
    monkeypatch.setattr(
        ocr.recognizer,
        "line_confidences",
        lambda crops: [as_is] * (len(crops) // 2) + [turned] * (len(crops) // 2),
    )
    sizes, read_placed = [], ocr.recognizer.read_placed

    def counted(crops, **options):
        sizes.append(len(crops))
        return read_placed(crops, **options)

    monkeypatch.setattr(ocr.recognizer, "read_placed", counted)
    page = ocr.read(image)
    expected = pipeline.OCR(
        tiny_detector_dir, tiny_recognizer_dir, orientation=0 if turned_surer else 180
    ).read(image)
    assert len(expected.lines) >= 2 and sizes[0] == 1  # the widest line alone, before the page is settled
    # turned round: found again and read whole; kept: its other lines read after
    assert sizes[1] == (len(expected.lines) if turned_surer else len(expected.lines) - 1)
    assert page.orientation.applied == (0 if turned_surer else 180)
    assert [x.text for x in page.lines] == [x.text for x in expected.lines]
    np.testing.assert_allclose(page.boxes(), expected.boxes(), atol=1e-3)


def test_sure_characters_per_line_weighs_each_character_by_its_reading_score():
    from ocrkit.orientation.lines import sure_characters_per_line

    assert sure_characters_per_line([], []) == 0.0
    # a page read on its axis: two long lines; across it: the same print cut into letters
    assert sure_characters_per_line(["abcdefghij", "abcd"], [0.9, 0.5]) == pytest.approx((9 + 2) / 2)
    assert sure_characters_per_line(["a", "b", "cd", "e"], [0.9, 0.9, 0.5, 0.5]) == pytest.approx(3.3 / 4)


@pytest.mark.parametrize(
    ("likeliest", "as_sent", "across", "applied", "method"),
    [
        (0, 5.0, 1.0, 0, "reading"),
        (0, 1.0, 5.0, 90, "reading"),
        (180, 1.0, 5.0, 90, "reading"),
        (270, 1.0, 5.0, 270, "reading"),  # read across the classifier's way
        (0, 0.0, 0.0, 0, "unsure"),
    ],
)
def test_an_unsure_page_keeps_the_axis_whose_reading_says_more_per_line(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, likeliest, as_sent, across, applied, method
):
    import ocrkit.pipeline as pipeline

    image = page_image(h=200, w=260, seed=5)
    # widest lines reading sure: no direction check
    ocr = _read_by(
        _Says(Orientation(likeliest, 0.4, 0, method="unsure")),
        tiny_detector_dir,
        tiny_recognizer_dir,
        monkeypatch,
        upright=True,
    )
    said = iter([as_sent, across])  # the page as sent is read first, then turned
    monkeypatch.setattr(pipeline, "text_per_line", lambda page: next(said))
    page = ocr.read(image)
    assert (page.orientation.applied, page.orientation.method) == (applied, method)
    expected = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=applied).read(image)
    assert [x.text for x in page.lines] == [x.text for x in expected.lines]
    np.testing.assert_allclose(page.boxes(), expected.boxes(), atol=1e-3)
    assert (page.width, page.height) == (260, 200)


@pytest.mark.parametrize(
    ("skew", "first", "across", "applied", "method", "readings"),
    [
        (8.0, 1.0, 5.0, 0, "reading", 2),  # a quarter turn more reads more: the classifier was wrong
        (-8.0, 5.0, 1.0, 270, "reading", 2),
        (3.0, 1.0, 5.0, 270, "lines", 0),  # a page this straight is read once, on the classifier's axis
    ],
)
def test_a_steeply_skewed_page_is_read_on_both_axes_even_when_the_classifier_is_sure(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, skew, first, across, applied, method, readings
):
    import ocrkit.pipeline as pipeline

    assert 3.0 < pipeline.STEEP_SKEW <= 8.0
    # widest lines reading sure: no direction check
    ocr = _read_by(
        _Says(Orientation(270, 0.9, 270, method="lines")),
        tiny_detector_dir,
        tiny_recognizer_dir,
        monkeypatch,
        True,
        skew,
    )
    said = [first, across]
    monkeypatch.setattr(pipeline, "text_per_line", lambda page: said.pop(0))
    page = ocr.read(page_image(h=200, w=260, seed=5))
    assert (page.orientation.applied, page.orientation.method) == (applied, method)
    assert page.orientation.skew == skew and len(said) == 2 - readings
    assert (page.width, page.height) == (260, 200)


@pytest.mark.parametrize(("as_it_lies", "turned_round", "applied"), [(1.0, 5.0, 90), (5.0, 1.0, 270)])
def test_a_page_the_lines_split_on_keeps_the_way_up_whose_whole_reading_says_more(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, as_it_lies, turned_round, applied
):
    import ocrkit.pipeline as pipeline
    from ocrkit.orientation.lines import READ_BOTH

    ocr = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=0)
    ocr.orienter = _Says(Orientation(270, 0.9, 270, method="lines"))
    monkeypatch.setattr(pipeline, "page_skew", lambda page: 0.0)
    monkeypatch.setattr(pipeline, "lines_direction", lambda *args: READ_BOTH)
    said = [as_it_lies, turned_round]  # the reading turned round is scored first, then the page as it lay
    calls = []

    def text_per_line(page):
        calls.append(page)
        return said[2 - len(calls)]

    monkeypatch.setattr(pipeline, "text_per_line", text_per_line)
    image = page_image(h=200, w=260, seed=5)
    page = ocr.read(image)
    assert len(calls) == 2 and page.orientation.applied == applied
    expected = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=applied).read(image)
    assert [x.text for x in page.lines] == [x.text for x in expected.lines]
    np.testing.assert_allclose(page.boxes(), expected.boxes(), atol=1e-3)


@pytest.fixture(scope="module")
def tiny_orientation_dir(tmp_path_factory):
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("orientation")
    save(build("mobilenetv3_small_050").eval(), OrientationSpec(page_side=512, window=64, windows=4), folder)
    return folder


def test_folder_round_trip_and_onnx_parity(tiny_orientation_dir, tmp_path):
    from ocrkit.export.orientation import export_orientation
    from ocrkit.runtime.orientation import OnnxOrientation

    classifier = OrientationClassifier.load(tiny_orientation_dir)
    assert read_spec(tiny_orientation_dir, "orientation").window == 64
    export_orientation(tiny_orientation_dir, tmp_path / "onnx")
    onnx = OnnxOrientation(tmp_path / "onnx")
    windows = to_input(np.random.default_rng(0).integers(0, 255, (5, 64, 64), dtype=np.uint8))
    np.testing.assert_allclose(classifier.logits(windows), onnx.logits(windows), atol=1e-4)
    image = page_image(seed=3)
    ours, theirs = classifier.classify(image), onnx.classify(image)
    assert ours.angle == theirs.angle and ours.confidence == pytest.approx(theirs.confidence, abs=1e-4)


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_a_page_sent_turned_reads_as_upright_with_boxes_on_the_page_as_sent(
    tiny_detector_dir, tiny_recognizer_dir, angle
):
    from ocrkit.pipeline import OCR

    image = page_image(seed=4)
    as_is = OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=0).read(image)
    assert as_is.lines and as_is.orientation is None
    sent = turned(image, angle // 90)
    page = OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=angle).read(sent)
    assert (page.width, page.height) == (sent.shape[1], sent.shape[0])
    assert page.orientation == Orientation(angle, 1.0, angle, method="told")
    assert [x.text for x in page.lines] == [x.text for x in as_is.lines]
    expected = boxes_to_sent(as_is.boxes(), angle // 90, sent.shape[1], sent.shape[0])
    np.testing.assert_allclose(page.boxes(), expected, atol=1e-3)
    words = [w.bbox for x in page.lines for w in x.words]
    upright_words = np.array([w.bbox for x in as_is.lines for w in x.words]).reshape(-1, 4)
    np.testing.assert_allclose(
        np.array(words).reshape(-1, 4),
        boxes_to_sent(upright_words, angle // 90, *sent.shape[1::-1]),
        atol=1e-3,
    )


def test_orientation_values_are_checked(tiny_detector_dir, tiny_recognizer_dir):
    from ocrkit.pipeline import OCR

    with pytest.raises(ValueError, match="orientation must be auto or one of 0, 90, 180, 270"):
        OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=45)
    assert ANGLES == (0, 90, 180, 270)


def _skewed_text_page(degrees: float) -> np.ndarray:
    import cv2

    page = np.full((700, 900, 3), 245, np.uint8)
    for row in range(12):
        y = 60 + 50 * row
        for col in range(14):
            x = 60 + 55 * col
            cv2.putText(page, "Wa", (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (20, 20, 20), 2)
    matrix = cv2.getRotationMatrix2D((450, 350), degrees, 1.0)
    return cv2.warpAffine(page, matrix, (900, 700), borderMode=cv2.BORDER_REPLICATE)


@pytest.mark.parametrize("degrees", [-8.0, -3.0, 0.0, 5.0, 12.0])
def test_skew_is_measured_within_half_a_degree(degrees):
    from ocrkit.orientation.skew import page_skew

    assert page_skew(_skewed_text_page(degrees)) == pytest.approx(degrees, abs=0.5)


def test_the_skew_and_the_cut_to_print_read_the_gray_page_as_they_read_the_colour_one():
    """The pipeline hands the skew estimate and the cut the gray page the classifier already made,
    turned upright: the same estimate and the same straightened page as from the colour page."""
    from ocrkit.images.frame import upright
    from ocrkit.orientation.patches import to_gray
    from ocrkit.orientation.skew import page_skew, straighten_to_print

    sent = np.ascontiguousarray(np.rot90(_skewed_text_page(7.0), -1))  # sent a quarter turn clockwise
    page, gray = upright(sent, 1), upright(to_gray(sent), 1)
    assert page_skew(gray) == page_skew(page) == pytest.approx(7.0, abs=0.5)
    (cut, back), (cut_gray, back_gray) = straighten_to_print(page, 7.0), straighten_to_print(page, 7.0, gray)
    assert cut.shape == cut_gray.shape and (cut == cut_gray).all() and (back == back_gray).all()


def test_the_peak_between_quarter_degrees_is_placed_by_its_parabola():
    from ocrkit.orientation.skew import _peak_offset

    steps = np.arange(-4, 5, dtype=np.float64)
    assert _peak_offset(-np.square(steps - 0.3)) == pytest.approx(0.3)
    assert _peak_offset(-np.square(steps + 0.45)) == pytest.approx(-0.45)
    assert _peak_offset(steps) == 0.0  # the best at an end: no vertex to trust
    assert _peak_offset(np.zeros(9)) == 0.0


def test_a_box_on_the_straightened_page_maps_back_onto_the_turned_print():
    import cv2

    from ocrkit.orientation.skew import corners_back, straighten

    page = np.zeros((300, 400), np.uint8)
    page[100:120, 50:350] = 255  # one line of "print"
    skewed = cv2.warpAffine(page, cv2.getRotationMatrix2D((200, 150), 7.0, 1.0), (400, 300))
    straight, back = straighten(skewed, 7.0)
    ys, xs = np.nonzero(straight > 127)
    box = [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]
    assert box[3] - box[1] < 26  # level again: about the line's own 20 px
    corners = corners_back(np.array([box]), back)[0]
    top_edge = corners[1] - corners[0]
    assert np.degrees(np.arctan2(-top_edge[1], top_edge[0])) == pytest.approx(7.0, abs=0.5)
    drawn = np.zeros_like(skewed)
    cv2.fillPoly(drawn, [np.round(corners).astype(np.int32)], 255)
    print_pixels = skewed > 127
    assert (drawn[print_pixels] > 0).mean() > 0.97  # the polygon covers the turned line
    assert (drawn > 0).sum() < 1.3 * print_pixels.sum()  # and not much more


def test_a_straightened_page_is_cut_to_its_print_and_maps_back():
    """A small print on a large page, skewed: straightened and cut to its print (plus margin), the
    canvas is far smaller than the one holding every corner, and the print's box maps back onto it."""
    import cv2

    from ocrkit.orientation.skew import MIN_PRINT_MARGIN, corners_back, straighten, straighten_to_print

    page = np.full((1200, 900), 255, np.uint8)
    page[500:520, 300:600] = 0  # one line of print in the middle of a blank page
    skewed = cv2.warpAffine(
        page, cv2.getRotationMatrix2D((450, 600), 10.0, 1.0), (900, 1200), borderValue=255
    )
    grown, _ = straighten(skewed, 10.0)
    cut, back = straighten_to_print(skewed, 10.0)
    ys, xs = np.nonzero(cut < 128)
    box = np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
    assert cut.size < 0.2 * grown.size
    assert box[3] - box[1] < 26 and 290 < box[2] - box[0] < 310  # level, whole
    assert min(box[0], box[1], cut.shape[1] - box[2], cut.shape[0] - box[3]) >= MIN_PRINT_MARGIN - 4
    corners = corners_back(box[None], back)[0]
    drawn = np.zeros_like(skewed)
    cv2.fillPoly(drawn, [np.round(corners).astype(np.int32)], 255)
    assert (drawn[skewed < 128] > 0).mean() > 0.97  # the box lands on the print as sent


def test_auto_straightens_a_skewed_page_and_gives_polygons_on_the_page_as_sent(
    tiny_detector_dir, tiny_recognizer_dir, tiny_orientation_dir
):
    from ocrkit.pipeline import OCR

    ocr = OCR(tiny_detector_dir, tiny_recognizer_dir, orientation_model=tiny_orientation_dir)
    page = ocr.read(_skewed_text_page(6.0))
    assert page.orientation is not None and page.orientation.skew == pytest.approx(6.0, abs=0.5)
    assert (page.width, page.height) == (900, 700)
    for line in page.lines:
        corners = np.array(line.polygon)
        assert corners.shape == (4, 2)
        assert line.bbox == pytest.approx([*corners.min(0), *corners.max(0)])
        assert 0 <= line.bbox[0] <= line.bbox[2] <= 900 and 0 <= line.bbox[1] <= line.bbox[3] <= 700
    level = ocr.read(_skewed_text_page(0.0))
    assert level.orientation.skew == 0.0 and all(line.polygon is None for line in level.lines)


ROWS = [  # (box on the page as read, text): three rows, the middle one an item and its price
    ([60, 60, 360, 100], "SHOP"),
    ([60, 130, 260, 170], "Item"),
    ([420, 130, 540, 170], "9.90"),
    ([60, 200, 360, 240], "TOTAL"),
]


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
@pytest.mark.parametrize("skew", [0.0, -8.0, 8.0])
def test_rows_are_told_apart_on_the_page_as_read(turns, skew):
    """A page sent sideways or skewed keeps the rows it was read in: its boxes as sent overlap across
    rows, so joining by them put a sideways receipt's header on one line."""
    from ocrkit.orientation.skew import straighten
    from ocrkit.pages.document import Line, Page
    from ocrkit.pipeline import Framing, to_sent_frame

    upright_page = np.zeros((400, 600), np.uint8)
    read, back = straighten(upright_page, skew) if skew else (upright_page, None)
    sent_h, sent_w = turned(upright_page, turns).shape
    page = Page("p.png", read.shape[1], read.shape[0], lines=[Line(list(map(float, b)), t) for b, t in ROWS])
    orientation = Orientation(angle=90 * turns, confidence=1.0, applied=90 * turns, skew=skew)
    to_sent_frame(page, Framing(read, orientation, turns, back), sent_w, sent_h)
    assert page.text == "SHOP\nItem 9.90\nTOTAL"


@pytest.mark.parametrize(("applied", "vote"), [(180, "sure"), (0, "plain")])
def test_the_lines_need_a_clear_vote_only_against_a_turn_the_classifier_was_sure_of_and_undid(
    tiny_detector_dir, tiny_recognizer_dir, monkeypatch, applied, vote
):
    import ocrkit.pipeline as pipeline
    from ocrkit.orientation.lines import KEEP, SURE_VOTE, VOTE

    ocr = pipeline.OCR(tiny_detector_dir, tiny_recognizer_dir, orientation=0)
    monkeypatch.setattr(pipeline, "reads_upright", lambda scores: False)
    votes = []
    monkeypatch.setattr(
        pipeline, "lines_direction", lambda crops, scores, ctc, read, v: votes.append(v) or KEEP
    )
    image = page_image(seed=4)
    page = ocr.detect(image)
    framing = pipeline.Framing(image, Orientation(180, 0.995, applied, method="reading"))
    assert ocr._lines_direction(framing, page) == KEEP
    assert votes == [SURE_VOTE if vote == "sure" else VOTE]


def test_a_reading_full_of_boxes_read_as_nothing_is_not_the_surer_one():
    """Read on the wrong axis, a page's boxes are cut print that reads as nothing: those boxes count as
    lines with no text, so the reading with fewer, longer lines read as text does not win by leaving
    them out."""
    from ocrkit.pages.document import Line, Page
    from ocrkit.pipeline import text_per_line

    right = Page("p.png", 100, 100, lines=[Line([0, 0, 50, 10], "a line of text", 0.9, 0.9, 0.8)] * 4)
    lines = [Line([0, 0, 10, 50], "", 0.9, 0.9, 0.2)] * 6 + [
        Line([0, 0, 10, 50], "Amount Total", 0.9, 0.9, 0.9)
    ]
    sideways = Page("p.png", 100, 100, lines=lines)
    assert text_per_line(right) == pytest.approx(14 * 0.8)
    assert text_per_line(sideways) == pytest.approx(12 * 0.9 / 7)
    assert text_per_line(right) > text_per_line(sideways)
    assert text_per_line(Page("p.png", 100, 100)) == 0.0
