"""ocrkit.decode.read over a numpy stand-in backend: which decoder reads which line, with which budget."""

import numpy as np
import pytest

from ocrkit.decode.budget import greedy_token_budget
from ocrkit.decode.ctc import best_path, log_softmax
from ocrkit.decode.greedy import greedy, kept_rows, pad_lengths
from ocrkit.decode.joint import JointSettings
from ocrkit.decode.read import ReadSettings, read, read_all, read_batches, read_crops
from ocrkit.decode.routing import DecoderRouting, weakest_frame
from ocrkit.images.line_preprocess import LinePreprocess

EOS = 2


class StandInBackend:
    """Encoder states are line indices, so every selection of lines the decoding makes is visible. The
    decoder is certain of its own reading of each line and of nothing else."""

    start_id, eos_id, blank_id, max_positions, patch = 1, EOS, 0, 64, 16
    masks_encoder = True
    ctc_head = "a head"  # present: read_crops may route lines to it
    certainty = 30.0  # the logit of the decoder's own next token (all others 0)

    def __init__(self, frames: np.ndarray, decoder_ids: list[list[int]]) -> None:
        self.frames = frames
        self.decoder_ids = decoder_ids
        self.greedy_calls: list[list[int]] = []  # the lines of each greedy loop
        self.scored_lines: list[int] = []  # the lines whose candidates were teacher-forced
        self.scored_rows = 0  # the candidates teacher-forced
        self.scored_widths: list[int] = []  # the token positions of each teacher-forcing pass
        self.ctc_calls = 0

    def encode(self, pixels):
        return np.arange(len(pixels))[:, None]

    def ctc_logits(self, states, pixel_shape):
        self.ctc_calls += 1
        return self.frames[states[:, 0]]

    def pad_states(self, states):
        return np.concatenate(states)

    def first_step(self, states, mask):
        lines = states[:, 0].tolist()
        self.greedy_calls.append(lines)
        return self.next_step(None, (lines, -1), mask)

    def next_step(self, tokens, cache, mask):
        lines, t = cache
        logits = np.zeros((len(lines), self.frames.shape[-1]))
        for row, line in enumerate(lines):
            reading = [*self.decoder_ids[line], EOS]
            logits[row, reading[min(t + 1, len(reading) - 1)]] = self.certainty
        return logits, (lines, t + 1)

    def select(self, cache, rows):
        lines, t = cache
        return [lines[r] for r in rows], t

    def score(self, states, input_ids, mask=None):
        self.scored_lines += sorted(set(states[:, 0].tolist()))
        self.scored_rows += len(input_ids)
        self.scored_widths.append(input_ids.shape[1])
        logits = np.zeros((*input_ids.shape, self.frames.shape[-1]))
        for row, line in enumerate(states[:, 0]):
            for t, token in enumerate([*self.decoder_ids[line], EOS][: input_ids.shape[1]]):
                logits[row, t, token] = self.certainty
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
    assert [ids for ids, _ in read(backend, PIXELS, "attention")] == [[5], [4]]
    assert backend.greedy_calls == [[0, 1]] and backend.ctc_calls == 0


def test_attention_keeps_the_ctc_reading_of_lines_longer_than_decoder_max_chars():
    frames = np.zeros((2, 4, 6))
    frames[0, [0, 1, 2, 3], [3, 0, 4, 0]] = 20.0  # line 0: CTC reads "3 4", two characters
    frames[1, [0, 1, 2, 3], [5, 0, 0, 0]] = 20.0  # line 1: CTC reads "5", one
    backend = StandInBackend(frames, decoder_ids=[[5], [4]])
    got = read_batches(backend, [PIXELS], "attention", routing=DecoderRouting(max_chars=1))[0]
    assert [ids for ids, _ in got] == [[3, 4], [4]]  # line 0 kept its CTC reading, line 1 was decoded
    assert backend.greedy_calls == [[1]] and got[0][1] > 0.9
    backend = StandInBackend(frames, decoder_ids=[[5], [4]])
    got = read_batches(backend, [PIXELS], "attention", routing=DecoderRouting(max_chars=2))[0]
    assert [ids for ids, _ in got] == [[5], [4]]
    assert backend.greedy_calls == [[0, 1]]


def test_attention_keeps_the_ctc_reading_of_lines_sure_in_every_frame():
    frames = np.zeros((2, 4, 6))
    frames[0, [0, 1, 2, 3], [3, 0, 4, 0]] = 20.0  # line 0: every frame sure, CTC reads "3 4"
    frames[1, [0, 1, 2], [5, 0, 0]] = 20.0  # line 1: sure of "5" but its last frame is flat
    backend = StandInBackend(frames, decoder_ids=[[5], [4]])
    assert weakest_frame(frames)[0] > 0.999 and weakest_frame(frames)[1] == pytest.approx(1 / 6)
    got = read_batches(backend, [PIXELS], "attention", routing=DecoderRouting(gate=0.9))[0]
    assert [ids for ids, _ in got] == [[3, 4], [4]] and backend.greedy_calls == [[1]]
    backend = StandInBackend(frames, decoder_ids=[[5], [4]])
    got = read_batches(backend, [PIXELS], "attention", routing=DecoderRouting(gate=0.1))[0]
    assert [ids for ids, _ in got] == [[3, 4], [5]] and backend.greedy_calls == []


def test_attention_keeps_the_ctc_reading_of_lines_in_which_it_reads_no_letter():
    """A picture read by the decoder comes out as fluent invented text; where the CTC head reads no
    letter or digit in a line, the line keeps that reading and the decoder never reads it."""
    frames = np.zeros((3, 4, 7))
    frames[0, [0, 1, 2, 3], [3, 0, 4, 0]] = 20.0  # line 0: CTC reads "3 4" (letters), unsure below
    frames[0, 3] = 0.0
    frames[1, [0, 1], [6, 0]] = 20.0  # line 1: CTC reads "-" only (no letter), unsure at the end
    frames[2] = 0.0  # line 2: flat, CTC reads nothing
    backend = StandInBackend(frames, decoder_ids=[[5], [4, 5], [3, 3, 5]])
    routing = DecoderRouting(gate=0.9, needs_letters=True).for_glyphs(["", "", "", "3", "4", "a", "-"])
    assert routing.letter_ids == frozenset({3, 4, 5})
    got = read_batches(backend, [np.zeros((3, 3, 32, 128), np.float32)], "attention", routing=routing)[0]
    assert [ids for ids, _ in got] == [[5], [6], []] and backend.greedy_calls == [[0]]
    with pytest.raises(ValueError, match="letter ids"):
        read_batches(backend, [PIXELS], "attention", routing=DecoderRouting(needs_letters=True))


def test_read_settings_take_the_letter_ids_from_the_vocabulary():
    settings = ReadSettings(
        LinePreprocess(), "attention", routing=DecoderRouting(gate=0.7, needs_letters=True)
    )
    filled = settings.for_glyphs(["", "ſ", "7", " ", ".", "é"])
    assert filled.routing.letter_ids == frozenset({1, 2, 5}) and filled.routing.gate == 0.7
    assert ReadSettings(LinePreprocess(), "ctc").for_glyphs(["a"]).routing is None


def test_ctc_reads_the_best_path_without_the_decoder():
    backend = two_lines()
    assert read(backend, PIXELS, "ctc") == best_path(backend.frames, 0)
    assert backend.greedy_calls == []


def test_gated_joint_runs_the_decoder_only_on_unsure_lines():
    backend = two_lines()
    ctc = best_path(backend.frames, 0)
    assert ctc[0][0] == [3] and ctc[0][1] > 0.99 and ctc[1][1] < 0.5
    picked = read(backend, PIXELS, "joint", JointSettings(gate=0.9))
    assert backend.greedy_calls == [[1]]
    assert picked[0] == ctc[0]  # the confident line keeps its CTC reading and confidence
    assert picked[1][0] == [4]  # the sure decoder's reading, which the flat CTC frames allow
    with pytest.raises(ValueError, match="JointSettings"):
        read(backend, PIXELS, "joint")


def test_joint_rescores_only_the_lines_where_the_decoder_and_ctc_disagree():
    frames = np.zeros((2, 4, 6))
    frames[0, [0, 1, 2, 3], [5, 0, 0, 0]] = 20.0  # line 0: CTC reads "5", as the decoder does
    frames[1, [0, 1, 2, 3], [3, 0, 0, 0]] = 20.0  # line 1: CTC reads "3", the decoder leans to "4"
    backend = StandInBackend(frames, decoder_ids=[[5], [4]])
    backend.certainty = 3.0
    got = read(backend, PIXELS, "joint", JointSettings())
    assert [ids for ids, _ in got] == [[5], [3]]
    assert backend.greedy_calls == [[0, 1]] and backend.scored_lines == [1]


@pytest.mark.parametrize(
    ("ctc_logit", "forced", "chosen"),
    [(20.0, 1, [3]), (2.0, 0, [4])],  # CTC sure of "3": in reach, taught, chosen; CTC leaning: out of reach
)
def test_joint_teacher_forces_the_ctc_reading_only_where_the_greedy_loops_bound_leaves_it_in_reach(
    ctc_logit, forced, chosen
):
    """The decoder reads "4" and gives "3" a log-prob of about -3.3 (its bound from the greedy loop).
    Where CTC prefers "3" by ~20 nats it may still win and is teacher-forced; by ~2 it cannot, and the
    loop's own log-prob of "4" decides without a teacher-forcing pass. Either way the reading and its
    confidence are those of rescoring every candidate by teacher forcing (read_all)."""
    frames = np.zeros((1, 4, 6))
    frames[0, [0, 1, 2, 3], [3, 0, 0, 0]] = ctc_logit
    backend = StandInBackend(frames, decoder_ids=[[4]])
    backend.certainty = 3.0
    (got,) = read(backend, PIXELS[:1], "joint", JointSettings(alternatives=0))
    assert backend.scored_rows == forced
    everyone = StandInBackend(frames, decoder_ids=[[4]])
    everyone.certainty = 3.0
    (everything,) = read_all(everyone, PIXELS[:1], JointSettings(alternatives=0))["joint"]
    assert everyone.scored_rows == 2  # read_all teaches both candidates
    assert got[0] == everything[0] == chosen and got[1] == pytest.approx(everything[1])


def test_a_group_of_lines_whose_ctc_readings_are_all_out_of_reach_is_not_teacher_forced():
    frames = np.zeros((2, 4, 6))
    frames[0, [0, 1, 2, 3], [3, 0, 0, 0]] = 2.0  # line 0: CTC leans to "3": out of reach
    frames[1, [0, 1, 2, 3], [3, 0, 0, 0]] = 20.0  # line 1: CTC sure of "3": in reach
    backend = StandInBackend(frames, decoder_ids=[[4], [4]])
    backend.certainty = 3.0
    got = read_batches(backend, [PIXELS], "joint", JointSettings(alternatives=0), decoder_batch=1)[0]
    assert [ids for ids, _ in got] == [[4], [3]]
    assert backend.scored_rows == 1 and backend.scored_lines == [1]


def test_each_teacher_forcing_pass_is_as_wide_as_its_own_longest_candidate():
    frames = np.zeros((2, 8, 6))
    frames[0, range(8), [3, 0, 5, 0, 3, 0, 5, 0]] = 2.0  # line 0: CTC leans to "3 5 3 5"
    frames[1, range(8), [3, 0, 0, 0, 0, 0, 0, 0]] = 2.0  # line 1: CTC leans to "3"
    frames *= 20.0  # CTC sure enough of its readings that the decoder must weigh them
    pixels = np.zeros((2, 3, 32, 128), np.float32)
    one_pass = StandInBackend(frames, decoder_ids=[[4], [4]])
    together = read_batches(one_pass, [pixels], "joint", JointSettings(alternatives=0))
    apart = StandInBackend(frames, decoder_ids=[[4], [4]])
    alone = read_batches(apart, [pixels], "joint", JointSettings(alternatives=0), decoder_batch=1)
    assert one_pass.scored_widths == [5]  # <s> + the longest CTC reading
    assert apart.scored_widths == [5, 2]  # each line's own: no padding to the page's longest
    assert alone == together


def test_read_all_scores_every_decoding_ungated_from_one_encoder_pass():
    backend = two_lines()
    found = read_all(backend, PIXELS, JointSettings(gate=0.9))
    assert found["ctc"] == best_path(backend.frames, 0)
    assert [ids for ids, _ in found["attention"]] == [[5], [4]]
    assert all(conf == pytest.approx(1.0) for _, conf in found["attention"])
    assert [ids for ids, _ in found["joint"]] == [[3], [4]]
    assert backend.greedy_calls == [[0, 1]] and backend.ctc_calls == 1


class WidthBackend(StandInBackend):
    """Encodes a line as one state per patch column, each holding the column count; the decoder reads that
    count (and checks that the cross-attention mask covers exactly the line's own states)."""

    def __init__(self, masks_encoder: bool = True) -> None:
        super().__init__(np.zeros((0, 1, 64)), [])
        self.masks_encoder = masks_encoder

    def encode(self, pixels):
        columns = pixels.shape[-1] // self.patch
        return np.full((len(pixels), columns, 1), columns)

    def pad_states(self, states):
        longest = max(s.shape[1] for s in states)
        return np.concatenate([np.pad(s, ((0, 0), (0, longest - s.shape[1]), (0, 0))) for s in states])

    def first_step(self, states, mask):
        columns = states[:, 0, 0]
        if mask is None:
            assert len(set(columns.tolist())) == 1  # without a mask only equal lengths share a loop
        else:
            assert mask.sum(1).tolist() == columns.tolist()
        self.greedy_calls.append(columns.tolist())
        logits = np.zeros((len(states), 64))
        logits[np.arange(len(states)), columns] = 30.0
        return logits, None

    def next_step(self, tokens, cache, mask):
        logits = np.zeros((len(tokens), 64))
        logits[:, EOS] = 30.0
        return logits, None

    def select(self, cache, rows):
        return cache


CROP_WIDTHS = (300, 60, 300, 120, 60, 200)


def width_crops() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [(rng.random((30, w)) * 255).astype(np.uint8) for w in CROP_WIDTHS]


def test_read_crops_decodes_lines_of_every_width_in_one_loop_and_answers_in_input_order():
    preprocess = LinePreprocess(longest=256, max_height=32)
    crops, backend = width_crops(), WidthBackend()
    readings = read_crops(backend, ReadSettings(preprocess, "attention"), crops, batch_size=2)
    assert [ids for ids, _ in readings] == [[preprocess.apply(c).shape[1] // 16] for c in crops]
    assert (
        len(backend.greedy_calls) == 1
        and sorted(backend.greedy_calls[0], reverse=True) == backend.greedy_calls[0]
    )
    assert read_crops(WidthBackend(), ReadSettings(preprocess, "attention"), []) == []


def test_without_a_cross_attention_mask_each_line_length_gets_its_own_loop():
    preprocess = LinePreprocess(longest=256, max_height=32)
    crops, backend = width_crops(), WidthBackend(masks_encoder=False)
    readings = read_crops(backend, ReadSettings(preprocess, "attention"), crops, batch_size=2)
    assert [ids for ids, _ in readings] == [[preprocess.apply(c).shape[1] // 16] for c in crops]
    assert len(backend.greedy_calls) == len({preprocess.apply(c).shape[1] for c in crops})


class EndlessDecoder:
    """Never emits </s>: every line runs to its budget. Records the rows of each step and the selections."""

    eos_id = EOS

    def __init__(self) -> None:
        self.rows_per_step: list[int] = []
        self.selects = 0
        self.selected: list[list[int]] = []

    def first_step(self, states, mask):
        return self.next_step(np.zeros(len(states)), None, mask)

    def next_step(self, tokens, cache, mask):
        self.rows_per_step.append(len(tokens))
        logits = np.zeros((len(tokens), 8))
        logits[:, 5] = 30.0
        return logits, None

    def select(self, cache, rows):
        self.selects += 1
        self.selected.append(rows.tolist())
        return cache


def test_greedy_keeps_a_lone_finished_line_in_a_large_batch_rather_than_copy_the_cache():
    decoder = EndlessDecoder()
    ids = greedy(decoder, np.zeros((5, 1)), np.array([1, 6, 6, 6, 6])).ids
    assert [len(line) for line in ids] == [1, 6, 6, 6, 6]  # its extra steps never reach its reading
    assert decoder.rows_per_step == [5] * 6 and decoder.selects == 0


def test_greedy_stops_each_line_at_its_own_budget_and_drops_it_from_the_batch():
    decoder = EndlessDecoder()
    ids, confidences, _ = greedy(decoder, np.zeros((3, 1)), np.array([2, 7, 4]))
    assert [len(line) for line in ids] == [2, 7, 4]
    assert all(conf == pytest.approx(1.0) for conf in confidences)
    assert decoder.rows_per_step == [3, 3, 2, 2, 1, 1, 1]


class StepScript:
    """The same logits for every line at each step, whatever was read before: a reading's log-prob is the
    sum of its tokens' log-probs step by step."""

    eos_id = EOS

    def __init__(self, logits: np.ndarray) -> None:
        self.logits = logits  # (steps, V)

    def first_step(self, states, mask):
        return np.repeat(self.logits[:1], len(states), 0), (0, len(states))

    def next_step(self, tokens, cache, mask):
        step, rows = cache
        return np.repeat(self.logits[step + 1 : step + 2], rows, 0), (step + 1, rows)

    def select(self, cache, rows):
        return cache[0], len(rows)


def test_greedy_paths_bound_other_readings_log_probability_from_where_they_leave_the_path():
    rng = np.random.default_rng(3)
    logits = rng.normal(0, 1, (4, 6))
    logits[[0, 1, 2, 3], [4, 5, 3, EOS]] += 5.0  # the greedy path: 4 5 3 </s>
    lp = log_softmax(logits)
    read = greedy(StepScript(logits), np.zeros((1, 1)), np.array([4]), keep_paths=True)
    (path,) = read.paths
    assert read.ids == [[4, 5, 3]] and path.chosen == [4, 5, 3, EOS] and path.ended
    on_path = [lp[0, 4], lp[1, 5], lp[2, 3]]
    assert path.bound([4, 5, 1, 1], EOS) == pytest.approx(on_path[0] + on_path[1] + lp[2, 1])
    assert path.bound([4, 5, 3], EOS) == pytest.approx(sum(on_path) + lp[3, EOS])  # the path itself: exact
    assert path.bound([4], EOS) == pytest.approx(on_path[0] + lp[1, EOS])  # leaves it by ending early
    assert path.bound([1, 5, 3], EOS) == pytest.approx(lp[0, 1])
    others = path.others_bound()
    # every reading of up to 4 tokens (</s> only at the end) but the path: none above the bounds
    readings = [[int(t) for t in ids] for n in range(5) for ids in np.ndindex(*(6,) * n) if EOS not in ids]
    for reading in readings:
        steps = [*reading, EOS][: len(lp)]  # the script's steps; later tokens only lower the sum
        logprob = sum(lp[t, token] for t, token in enumerate(steps))
        assert path.bound(reading, EOS) >= logprob - 1e-12
        if reading != [4, 5, 3]:
            assert others >= logprob - 1e-12
    short = greedy(StepScript(logits), np.zeros((1, 1)), np.array([2]), keep_paths=True).paths[0]
    assert not short.ended and short.bound([4, 5, 3], EOS) is None and short.others_bound() is None
    assert greedy(StepScript(logits), np.zeros((1, 1)), np.array([4])).paths == [None]


def test_pad_lengths_marks_each_lines_own_states():
    assert pad_lengths([2, 4, 1]).tolist() == [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]


def test_greedy_drops_finished_lines_at_the_tail_as_a_prefix():
    decoder = EndlessDecoder()
    ids = greedy(decoder, np.zeros((5, 1)), np.array([6, 6, 6, 2, 2])).ids  # longest first, as callers pass
    assert [len(line) for line in ids] == [6, 6, 6, 2, 2]
    assert decoder.selected == [[0, 1, 2]] and decoder.rows_per_step == [5, 5, 3, 3, 3, 3]


def test_kept_rows_takes_a_prefix_only_when_few_finished_lines_ride_along():
    assert kept_rows(np.array([1, 1, 1, 1, 0, 1, 0, 0], bool)).tolist() == [0, 1, 2, 3, 4, 5]  # 1 of 6
    assert kept_rows(np.array([1, 0, 0, 1, 0], bool)).tolist() == [0, 3]  # 2 of 4 would ride: copy
    assert kept_rows(np.array([0, 0, 1], bool)).tolist() == [2]
