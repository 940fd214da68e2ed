"""The model-folder settings: typed round trips, older and newer formats, and one-line errors."""

import json
from dataclasses import replace

import pytest

from ocrkit.hub.model_folder import (
    FORMAT_VERSION,
    SETTINGS_NAME,
    DetectorSpec,
    RecognizerSpec,
    check_folder,
    read_spec,
    setting_names,
    spec_path,
    with_settings,
    write_spec,
)
from ocrkit.hub.zoo import MODELS_DIR
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.images.postprocess import PostConfig
from ocrkit.images.preprocess import PageSizing
from ocrkit.util.errors import ModelError

DETECTOR = DetectorSpec(PageSizing(960, 32, True), "d_fine", PostConfig(0.4, 0.5, 0.8, 300))
NARROW_PAGES = DetectorSpec(PageSizing(1280, 32, False, min_short=704, max_longest=1408), "d_fine")
RECOGNIZER = RecognizerSpec(
    LinePreprocess(longest=1024, divisor=16, max_height=32, windowed=True),
    size="small",
    max_target_length=160,
    decoding="joint",
    joint_ctc_weight=0.5,
    joint_gate=0.9,
    joint_alternatives=3,
)


# recognizer 0.3.0's settings file, written before the version field existed
RECOGNIZER_V0 = {
    "task": "recognition",
    "longest": 1024,
    "divisor": 16,
    "max_height": 32,
    "windowed": True,
    "grayscale": True,
    "pad_value": 0,
    "mean": 0.5,
    "std": 0.5,
    "size": "small",
    "max_target_length": 160,
    "decoding": "joint",
    "joint_ctc_weight": 0.5,
    "joint_gate": 0.9,
    "joint_alternatives": 3,
}


def write_raw(folder, settings: dict) -> None:
    spec_path(folder).write_text(json.dumps(settings), encoding="utf-8")


@pytest.mark.parametrize(
    "spec",
    [DETECTOR, NARROW_PAGES, RECOGNIZER, RecognizerSpec()],
    ids=["det", "det-narrow", "rec", "rec-defaults"],
)
def test_write_then_read_gives_the_same_spec_in_the_current_format(spec, tmp_path):
    write_spec(tmp_path, spec)
    assert read_spec(tmp_path) == spec
    assert json.loads(spec_path(tmp_path).read_text())["format_version"] == FORMAT_VERSION
    assert [p.name for p in tmp_path.iterdir()] == [SETTINGS_NAME]  # atomic: no temporary file left


def test_version_0_files_load_unchanged(tmp_path):
    """Settings files from before the version field (detector 0.2.0, recognizer 0.3.0): version 0, same
    values."""
    detector_v0 = {
        "task": "detection",
        "arch": "d_fine",
        "longest": 960,
        "divisor": 32,
        "square": True,
        "score_threshold": 0.4,
        "nms_iou": 0.5,
        "contain_threshold": 0.8,
        "top_k": 300,
    }
    for kind, old, expected in (
        ("detector", detector_v0, DETECTOR),
        ("recognizer", RECOGNIZER_V0, RECOGNIZER),
    ):
        assert "format_version" not in old
        write_raw(tmp_path, old)
        spec = read_spec(tmp_path, kind)
        assert spec.format_version == 0 and replace(spec, format_version=FORMAT_VERSION) == expected


def test_unset_settings_are_left_out_and_read_back_as_unset(tmp_path):
    write_spec(tmp_path, RecognizerSpec(decoding="ctc"))
    written = json.loads(spec_path(tmp_path).read_text())
    assert "joint_gate" not in written and written["decoding"] == "ctc"
    assert read_spec(tmp_path, "recognizer").joint_gate is None
    write_raw(tmp_path, {"task": "recognition"})  # the oldest, barest recognizer file
    assert read_spec(tmp_path, "recognizer") == RecognizerSpec(format_version=0)


def test_unknown_keys_are_kept_through_a_rewrite(tmp_path):
    write_raw(tmp_path, {"task": "detection", "longest": 64, "trained_on": "receipts"})
    spec = read_spec(tmp_path, "detector")
    assert spec.extra == {"trained_on": "receipts"} and spec.sizing.longest == 64
    write_spec(tmp_path, spec)
    assert json.loads(spec_path(tmp_path).read_text())["trained_on"] == "receipts"


def test_a_newer_format_version_is_refused(tmp_path):
    write_raw(tmp_path, {"format_version": FORMAT_VERSION + 1, "task": "detection", "longest": 64})
    with pytest.raises(ModelError, match=f"format_version {FORMAT_VERSION + 1}, newer.*upgrade") as err:
        read_spec(tmp_path)
    assert str(err.value).startswith(str(tmp_path)) and "\n" not in str(err.value)


def test_the_wrong_task_is_refused(tmp_path):
    write_spec(tmp_path, DETECTOR)
    with pytest.raises(ModelError, match="not a recognition model .*'detection'"):
        read_spec(tmp_path, "recognizer")
    with pytest.raises(ModelError, match="not a recognition model"):
        check_folder(tmp_path, "recognizer")
    write_raw(tmp_path, {"task": "segmentation"})
    with pytest.raises(ModelError, match="unknown task 'segmentation'"):
        read_spec(tmp_path)


def test_a_missing_file_names_the_folder_and_the_file(tmp_path):
    with pytest.raises(ModelError) as err:
        read_spec(tmp_path, "detector")
    assert str(err.value) == f"{tmp_path}: not a detector model folder: {SETTINGS_NAME} is missing"
    with pytest.raises(ModelError, match="model folder not found"):
        read_spec(tmp_path / "absent")


@pytest.mark.parametrize(
    "content, problem",
    [
        ("{broken", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"task": "detection"}', "needs 'longest'"),
        ('{"task": "detection", "longest": "960"}', "longest must be int, got '960'"),
        ('{"task": "recognition", "grayscale": 1}', "grayscale must be bool, got 1"),
        ('{"task": "recognition", "format_version": "1"}', "format_version must be a whole number"),
        (
            '{"task": "recognition", "min_confidence": 5}',
            "min_confidence must be at least 0 and below 1, got 5",
        ),
        ('{"task": "recognition", "min_confidence": -3}', "min_confidence must be at least 0 and below 1"),
        ('{"task": "recognition", "min_confidence": 1}', "min_confidence must be at least 0 and below 1"),
        ('{"task": "recognition", "min_confidence": NaN}', "min_confidence must be at least 0 and below 1"),
    ],
)
def test_bad_content_is_one_line_naming_the_folder(content, problem, tmp_path):
    spec_path(tmp_path).write_text(content)
    with pytest.raises(ModelError, match=problem) as err:
        read_spec(tmp_path)
    assert str(err.value).startswith(f"{tmp_path}: ") and "\n" not in str(err.value)


def test_numbers_are_read_as_their_type(tmp_path):
    write_raw(tmp_path, {"task": "recognition", "mean": 0, "joint_gate": 1})
    spec = read_spec(tmp_path, "recognizer")
    assert spec.preprocess.mean == 0.0 and isinstance(spec.preprocess.mean, float) and spec.joint_gate == 1.0


def test_check_folder_names_the_missing_files(tmp_path):
    with pytest.raises(ModelError, match="detector model folder not found"):
        check_folder(tmp_path / "absent", "detector")
    write_spec(tmp_path, DETECTOR)
    with pytest.raises(ModelError, match="missing config.json, model.safetensors"):
        check_folder(tmp_path, "detector")
    write_spec(tmp_path, replace(DETECTOR, onnx="detector.onnx"))  # an export needs its graph only
    with pytest.raises(ModelError, match="missing detector.onnx"):
        check_folder(tmp_path, "detector")
    (tmp_path / "detector.onnx").write_bytes(b"graph")
    assert check_folder(tmp_path, "detector").onnx == "detector.onnx"
    shipped = json.loads(spec_path(MODELS_DIR / "recognizer").read_text())
    assert check_folder(MODELS_DIR / "recognizer", "recognizer").decoding == shipped["decoding"]


def test_with_settings_replaces_flat_settings_and_refuses_unknown_ones(tmp_path):
    changed = with_settings(DETECTOR, {"score_threshold": 0.3, "longest": 800}, tmp_path)
    assert changed.post.score_threshold == 0.3 and changed.sizing.longest == 800 and changed.post.top_k == 300
    assert with_settings(RECOGNIZER, {"joint_gate": None}, tmp_path).joint_gate is None
    with pytest.raises(ModelError, match="joint_gat: not a recognizer setting"):
        with_settings(RECOGNIZER, {"joint_gat": 0.9}, tmp_path)
    with pytest.raises(ModelError, match="joint_gate must be float or null"):
        with_settings(RECOGNIZER, {"joint_gate": "high"}, tmp_path)
    assert "score_threshold" in setting_names(DETECTOR) and "task" not in setting_names(DETECTOR)


def test_sizing_side_is_the_long_side_letterbox_scales_a_page_to():
    assert DETECTOR.sizing.side(2000, 800) == 960  # a square input ignores the page's shape
    assert NARROW_PAGES.sizing.side(2000, 800) == 1408 and NARROW_PAGES.sizing.side(2000, 1400) == 1280
