"""Forced CTC alignment: which frames each character of a chosen reading was emitted on."""

import numpy as np
import pytest

from ocrkit.decode.align import forced_alignment, frame_centres, token_centres, token_confidences
from ocrkit.decode.ctc import best_path, log_softmax

BLANK, V = 0, 6


def frames_with_peaks(length: int, peaks: dict[int, int]) -> np.ndarray:
    """(T, V) log-probs: blank everywhere except token `peaks[t]` at frame t."""
    logits = np.full((length, V), -4.0)
    logits[:, BLANK] = 4.0
    for t, token in peaks.items():
        logits[t] = -4.0
        logits[t, token] = 4.0
    return log_softmax(logits)


def emitted_frames(path: np.ndarray, k: int) -> list[int]:
    return [int(t) for t in np.flatnonzero(path == 2 * k + 1)]


def test_each_token_lands_on_its_peak_and_a_double_letter_on_both():
    frames = frames_with_peaks(12, {1: 2, 4: 3, 7: 3, 10: 5})  # "b c c e": the double c needs its blank
    (path,) = forced_alignment([frames], [[2, 3, 3, 5]], BLANK)
    assert [emitted_frames(path, k) for k in range(4)] == [[1], [4], [7], [10]]
    assert best_path(frames[None], BLANK)[0][0] == [2, 3, 3, 5]


def test_a_reading_the_frames_disagree_with_is_still_placed_in_order():
    """The decoder read "bdce" where CTC read "bcce": the alignment still walks the line left to right."""
    frames = frames_with_peaks(12, {1: 2, 4: 3, 7: 3, 10: 5})
    (path,) = forced_alignment([frames], [[2, 4, 3, 5]], BLANK)
    firsts = [emitted_frames(path, k)[0] for k in range(4)]
    assert firsts == sorted(firsts) and firsts[0] == 1 and firsts[-1] == 10


def test_lines_of_different_lengths_align_together_as_alone():
    short, long = frames_with_peaks(6, {1: 2, 4: 3}), frames_with_peaks(15, {2: 5, 6: 1, 9: 1, 13: 4})
    together = forced_alignment([short, long], [[2, 3], [5, 1, 1, 4]], BLANK)
    alone = [forced_alignment([f], [t], BLANK)[0] for f, t in ((short, [2, 3]), (long, [5, 1, 1, 4]))]
    for a, b in zip(together, alone, strict=True):
        assert np.array_equal(a, b)
    assert len(together[0]) == 6 and len(together[1]) == 15


def test_a_target_longer_than_the_frames_allow_has_no_alignment_and_empty_ones_do():
    frames = frames_with_peaks(3, {1: 2})
    assert forced_alignment([frames], [[2, 2, 2]], BLANK) == [None]  # needs 5 frames: a, blank, a, blank, a
    (empty,) = forced_alignment([frames], [[]], BLANK)
    assert len(empty) == 3 and not (empty % 2).any()


def test_centres_and_confidences_of_tokens():
    frames = frames_with_peaks(8, {1: 2, 5: 3})
    (path,) = forced_alignment([frames], [[2, 3]], BLANK)
    x = frame_centres(8, rows=2, frames_per_patch=2, patch=16)  # 4 frames per 16-px column
    assert x.tolist() == [8.0] * 4 + [24.0] * 4
    assert token_centres(path, 2, x).tolist() == [8.0, 24.0]
    assert token_confidences(path, [2, 3], frames) == pytest.approx(np.exp(frames[[1, 5], [2, 3]]))
