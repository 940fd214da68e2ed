"""Long lines read in windows: window placement, joining CTC frames, and a 150+ character line read whole."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ocrkit.decode.ctc import best_path
from ocrkit.decode.windows import stitch_columns, window_starts
from ocrkit.recognition.metrics import edit_distance

FONT = Path(__file__).parents[2] / "ocrkit" / "fonts" / "dejavu" / "DejaVuSans.ttf"


def cer(reference: str, hypothesis: str) -> float:
    return edit_distance(reference, hypothesis) / len(reference)


def test_windows_cover_the_line_with_the_overlap_and_end_at_its_edge():
    assert window_starts(1000, 2048, 512) == [0]
    starts = window_starts(5000, 2048, 512)
    assert starts == [0, 1536, 2952] and starts[-1] + 2048 == 5000
    assert all(b - a <= 2048 - 512 for a, b in zip(starts, starts[1:], strict=False))
    with pytest.raises(ValueError, match="overlap"):
        window_starts(5000, 2048, 2048)


def test_stitched_frames_equal_the_whole_lines_frames_where_windows_agree():
    """Windows cut from one line's frames (2 frames per 16-px column) join back into exactly those frames."""
    rng = np.random.default_rng(0)
    width, window, patch, per_column = 160, 64, 16, 2
    whole = rng.normal(size=(width // patch * per_column, 5))
    starts = window_starts(width, window, 32)
    cut = np.stack([whole[s // patch * per_column : (s + window) // patch * per_column] for s in starts])
    np.testing.assert_array_equal(stitch_columns(cut, starts, window, width, patch), whole)


def test_each_column_comes_from_the_window_where_it_is_farthest_from_an_edge():
    starts, window, patch = [0, 32], 64, 16  # columns 0-3 and 2-5; overlap at columns 2 and 3
    logits = np.stack([np.full((4, 1), 0.0), np.full((4, 1), 1.0)])  # one frame per column
    picked = stitch_columns(logits, starts, window, 96, patch)[:, 0]
    assert picked.tolist() == [0, 0, 0, 1, 1, 1]  # column 2: 1 from the first's edge, 0 from the second's


def render(text: str, height: int = 40) -> np.ndarray:
    font = ImageFont.truetype(str(FONT), int(height * 0.7))
    image = Image.new("L", (int(font.getlength(text)) + 20, height), 255)
    ImageDraw.Draw(image).text((10, height * 0.1), text, font=font, fill=0)
    return np.asarray(image)


SENTENCE = (
    "The committee will meet on Tuesday, 14 March 2023, at 10:00 in room 221 to discuss the annual "
    "budget and the proposed staff changes; all members should bring their copies."
)


def shipped_with(folder: Path, **settings) -> Path:
    """A copy of the shipped recognizer with some settings changed."""
    from ocrkit.hub.zoo import resolve

    shutil.copytree(resolve("recognizer", "recognizer"), folder)
    spec = json.loads((folder / "ocrkit.json").read_text())
    (folder / "ocrkit.json").write_text(json.dumps({**spec, **settings}))
    return folder


@pytest.mark.slow
def test_a_line_of_150_characters_is_read_whole_by_the_shipped_recognizer(tmp_path):
    """~2300 x 40 px: at the model's 32 px it stays under `longest` (2048) and is read in one piece. The
    decoder alone misreads a line this long: joint decoding (the default) weighs its reading against the
    CTC head's, and attention decoding keeps the CTC reading of a line longer than `decoder_max_chars`."""
    from ocrkit.hub.zoo import resolve
    from ocrkit.recognition import load_recognizer

    assert len(SENTENCE) >= 150
    crop = render(SENTENCE)
    recognizer = load_recognizer(resolve("recognizer", "recognizer"))
    settings = recognizer.settings
    height, width = settings.preprocess.apply(crop).shape[:2]
    assert height == 32 and width <= settings.preprocess.longest
    assert settings.decoding == "joint"
    text = recognizer.recognize([crop])[0][0]
    attention = load_recognizer(resolve("recognizer", "recognizer"), decoding="attention")
    assert attention.settings.routing.max_chars < len(SENTENCE)
    routed = attention.recognize([crop])[0][0]
    decoder_only = shipped_with(
        tmp_path / "decoder_only", decoding="attention", decoder_max_chars=None, decoder_gate=None
    )
    decoded = load_recognizer(decoder_only).recognize([crop])[0][0]
    assert max(cer(SENTENCE, text), cer(SENTENCE, routed)) < 0.1 < 0.2 < cer(SENTENCE, decoded)


@pytest.mark.slow
def test_a_line_wider_than_longest_is_read_in_windows_at_the_models_height(tmp_path):
    """Two sentences side by side (343 characters, ~4700 px at 32 px tall, past the decoder's token
    budget): read in windows at the model's height. Shrunk to fit one window instead, the same line is
    read far worse (the behaviour windows replace)."""
    from ocrkit.hub.zoo import resolve
    from ocrkit.recognition import load_recognizer

    text = f"{SENTENCE} {SENTENCE}"
    crop = render(text)
    recognizer = load_recognizer(resolve("recognizer", "recognizer"))
    assert recognizer.settings.preprocess.apply(crop).shape[0] == 32
    windowed = recognizer.recognize([crop])[0][0]
    squeezed = load_recognizer(shipped_with(tmp_path / "narrow", windowed=False)).recognize([crop])[0][0]
    assert cer(text, windowed) < 0.1 < 0.3 < cer(text, squeezed)
    assert len(windowed) > 0.9 * len(text)


def test_best_path_over_stitched_windows_reads_across_the_seam():
    """A letter whose frames straddle two windows' overlap is read once, not twice or never."""
    blank, vocab = 0, 4
    sequence = [1, 0, 2, 0, 3, 0, 1, 0, 2, 0, 3, 0]  # one frame per 16-px column, 12 columns
    whole = np.full((len(sequence), vocab), -10.0)
    whole[np.arange(len(sequence)), sequence] = 10.0
    starts = window_starts(192, 128, 64)
    cut = np.stack([whole[s // 16 : s // 16 + 8] for s in starts])
    ((tokens, _),) = best_path(stitch_columns(cut, starts, 128, 192, 16)[None], blank)
    assert tokens == [1, 2, 3, 1, 2, 3]
