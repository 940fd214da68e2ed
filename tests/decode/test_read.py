"""ocrkit.decode.read over a numpy stand-in backend: which decoder reads which line, with which budget."""

import numpy as np
import pytest

from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.ctc import best_path
from ocrkit.decode.joint import JointSettings
from ocrkit.decode.read import read, read_all, read_crops
from ocrkit.line_preprocess import LinePreprocess

EOS = 2


class StandInBackend:
    """Encoder states are line indices, so every selection of lines the decoding makes is visible. The
    decoder is certain of its own reading of each line and of nothing else."""

    start_id, eos_id, blank_id, max_positions, patch = 1, EOS, 0, 64, 16

    def __init__(self, frames: np.ndarray, decoder_ids: list[list[int]]) -> None:
        self.frames = frames
        self.decoder_ids = decoder_ids
        self.greedy_calls: list[tuple[list[int], int]] = []
        self.ctc_calls = 0

    def encode(self, pixels):
        return np.arange(len(pixels))

    def ctc_logits(self, states, pixel_shape):
        self.ctc_calls += 1
        return self.frames[states]

    def greedy(self, states, max_new_tokens):
        self.greedy_calls.append((states.tolist(), max_new_tokens))
        return [self.decoder_ids[i] for i in states], [0.5] * len(states)

    def score(self, states, input_ids):
        logits = np.zeros((*input_ids.shape, self.frames.shape[-1]))
        for row, line in enumerate(states):
            for t, token in enumerate([*self.decoder_ids[line], EOS][: input_ids.shape[1]]):
                logits[row, t, token] = 30.0
        return logits


def two_lines() -> StandInBackend:
    frames = np.zeros((2, 4, 6))
    frames[0, [0, 1], 3] = 20.0  # line 0: "3 3 _ _", CTC sure of "3"
    frames[0, [2, 3], 0] = 20.0  # line 1 stays flat: CTC unsure (best path: nothing)
    return StandInBackend(frames, decoder_ids=[[5], [4]])


PIXELS = np.zeros((2, 3, 32, 128), dtype=np.float32)  # 8 patch columns → budget 8 x 3 + 2


def test_greedy_budget_grows_with_the_patch_columns_and_stops_at_the_decoder_positions():
    assert greedy_token_budget(512, 16, 64) == 63  # 32 columns x 3 + 2, capped by 64 positions
    assert greedy_token_budget(64, 16, 64) == 14
    assert greedy_token_budget(64, 8, 64) == 26  # smaller patches: more columns, more tokens
    assert greedy_token_budget(1, 16, 64) == 3 and greedy_token_budget(64, 16, 2) == 2


def test_attention_reads_every_line_with_the_decoder_and_never_the_ctc_head():
    backend = two_lines()
    assert read(backend, PIXELS, "attention") == [([5], 0.5), ([4], 0.5)]
    assert backend.greedy_calls == [([0, 1], 26)] and backend.ctc_calls == 0


def test_ctc_reads_the_best_path_without_the_decoder():
    backend = two_lines()
    assert read(backend, PIXELS, "ctc") == best_path(backend.frames, 0)
    assert backend.greedy_calls == []


def test_gated_joint_runs_the_decoder_only_on_unsure_lines():
    backend = two_lines()
    ctc = best_path(backend.frames, 0)
    assert ctc[0][0] == [3] and ctc[0][1] > 0.99 and ctc[1][1] < 0.5
    picked = read(backend, PIXELS, "joint", JointSettings(gate=0.9))
    assert backend.greedy_calls == [([1], 26)]
    assert picked[0] == ctc[0]  # the confident line keeps its CTC reading and confidence
    assert picked[1][0] == [4]  # the sure decoder's reading, which the flat CTC frames allow
    with pytest.raises(ValueError, match="JointSettings"):
        read(backend, PIXELS, "joint")


def test_read_all_scores_every_decoding_ungated_from_one_encoder_pass():
    backend = two_lines()
    found = read_all(backend, PIXELS, JointSettings(gate=0.9))
    assert found["ctc"] == best_path(backend.frames, 0)
    assert found["attention"] == [([5], 0.5), ([4], 0.5)]
    assert [ids for ids, _ in found["joint"]] == [[3], [4]]
    assert backend.greedy_calls == [([0, 1], 26)] and backend.ctc_calls == 1


class WidthBackend(StandInBackend):
    """Reads every line as its padded width in patches, to check that results come back in input order."""

    def __init__(self) -> None:
        super().__init__(np.zeros((0, 1, 6)), [])

    def encode(self, pixels):
        assert len({p.shape for p in pixels}) == 1
        return np.full(len(pixels), pixels.shape[-1] // self.patch)

    def greedy(self, states, max_new_tokens):
        return [[int(s)] for s in states], [1.0] * len(states)


def test_read_crops_batches_by_shape_and_answers_in_input_order():
    preprocess = LinePreprocess(longest=256, max_height=32)
    rng = np.random.default_rng(0)
    crops = [(rng.random((30, w)) * 255).astype(np.uint8) for w in (300, 60, 300, 120, 60, 200)]
    readings = read_crops(WidthBackend(), preprocess, crops, "attention", batch_size=2)
    assert readings == [([preprocess.apply(c).shape[1] // 16], 1.0) for c in crops]
    assert read_crops(WidthBackend(), preprocess, [], "attention") == []
