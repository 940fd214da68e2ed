"""Joint CTC/attention rescoring: CTC forward algorithm, the choice, teacher forcing, same-shape batches."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ocrkit.decode.ctc import best_path, ctc_log_likelihood, ctc_log_likelihoods, log_softmax, prefix_beams
from ocrkit.decode.joint import (
    CTC_ALTERNATIVES,
    DENSE_TRUST,
    beyond_reach,
    choose,
    distinct_candidates,
    others_may_win,
    per_line,
    row_logprobs,
    second_choices,
    teacher_forcing_batch,
)
from ocrkit.hub.model_folder import RecognizerSpec, read_spec, write_spec
from ocrkit.images.buckets import same_shape_batches

BLANK = 0


@pytest.mark.parametrize(
    ("frames", "target"),
    [(12, [1, 2, 3]), (9, [2, 2, 1, 1]), (6, []), (20, [1, 4, 4, 4, 2, 3, 1]), (5, [3])],
)
def test_ctc_log_likelihood_matches_torch_ctc_loss(frames, target):
    logprobs = log_softmax(np.random.default_rng(len(target) + frames).normal(0, 2, (frames, 6)))
    ours = ctc_log_likelihood(logprobs, target, BLANK)
    theirs = -F.ctc_loss(
        torch.from_numpy(logprobs)[:, None],
        torch.tensor([target], dtype=torch.long),
        torch.tensor([frames]),
        torch.tensor([len(target)]),
        blank=BLANK,
        reduction="sum",
    )
    assert ours == pytest.approx(float(theirs), rel=1e-9, abs=1e-9)


def test_a_target_longer_than_the_frames_allow_is_impossible():
    logprobs = log_softmax(np.zeros((2, 4)))
    assert ctc_log_likelihood(logprobs, [1, 1], BLANK) == -np.inf  # a double letter needs 3 frames
    assert ctc_log_likelihood(logprobs, [1, 2, 3], BLANK) == -np.inf
    assert np.isfinite(ctc_log_likelihood(logprobs, [1, 2], BLANK))


def test_choose_follows_the_weighted_sum_of_both_models():
    frames = log_softmax(np.log(np.array([[0.1, 0.8, 0.1], [0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])))[None]
    candidates = [[[1, 2], [2]]]  # CTC prefers "1 2" by far
    attention = [[-9.0, -0.5]]  # the decoder prefers "2"
    ctc = [ctc_log_likelihood(frames[0], c, BLANK) for c in candidates[0]]
    assert choose(frames, candidates, attention, BLANK, ctc_weight=1.0)[0][0] == [1, 2]
    assert choose(frames, candidates, attention, BLANK, ctc_weight=0.0)[0][0] == [2]
    ids, confidence = choose(frames, candidates, attention, BLANK, ctc_weight=0.5)[0]
    best = int(np.argmax([0.5 * c + 0.5 * a for c, a in zip(ctc, attention[0], strict=True)]))
    assert ids == candidates[0][best]
    assert confidence == pytest.approx(np.exp((0.5 * ctc[best] + 0.5 * attention[0][best]) / (len(ids) + 1)))


def test_a_reading_too_dense_for_the_frames_is_rescored_when_the_decoder_is_sure():
    # 3 frames see "1 2 3 4" two characters per frame; CTC's best path can only say "1 3"
    probs = np.full((3, 5), 0.02)
    probs[0, [1, 2]] = 0.45
    probs[1, [3, 4]] = 0.45
    probs[2, 0] = 0.9
    frames = log_softmax(np.log(probs))[None]
    candidates = [[[1, 3], [1, 2, 3, 4]]]
    assert ctc_log_likelihood(frames[0], [1, 2, 3, 4], BLANK) == -np.inf
    sure = np.log(DENSE_TRUST + 0.1) * 5  # decoder's log p of "1 2 3 4 </s>": per-token 0.8
    unsure = np.log(DENSE_TRUST - 0.2) * 5
    assert choose(frames, candidates, [[-20.0, sure]], BLANK)[0][0] == [1, 2, 3, 4]
    assert choose(frames, candidates, [[-20.0, unsure]], BLANK)[0][0] == [1, 3]  # CTC veto stands
    # a reading longer than even doubled frames allow stays impossible, however sure the decoder
    assert choose(frames, [[[1, 3], [1, 2, 3, 4, 1, 2, 3]]], [[-20.0, 0.0]], BLANK)[0][0] == [1, 3]


def test_a_candidate_is_out_of_reach_only_when_its_bound_loses_to_a_known_score():
    # known: the decoder's reading scores 0.5 * -5 + 0.5 * -0.5 = -2.75
    assert beyond_reach([-1.0, -5.0], [None, -0.5], [-4.0, None]) == [False, False]  # -2.475 at best
    assert beyond_reach([-1.0, -5.0], [None, -0.5], [-5.0, None]) == [True, False]  # -2.975 at best
    # every decoder log-prob is at most 0: a candidate without a bound is out where even 0 loses
    assert beyond_reach([-1.0, -5.0], [None, -0.5], [None, None]) == [False, False]  # -0.475 at best
    assert beyond_reach([-9.0, -5.0], [None, -0.5], [None, None]) == [True, False]  # -4.475 at best
    assert beyond_reach([-1.0, -5.0], [None, None], [-50.0, None]) == [False, False]  # nothing known
    # a candidate CTC cannot align may be refit on doubled frames: its line is left alone
    assert beyond_reach([-1.0, -np.inf], [None, -0.5], [-50.0, None]) == [False, False]
    assert beyond_reach([-1.0, -5.0], [None, -0.5], [-5.0, None], ctc_weight=1.0) == [False, False]


def test_distinct_candidates_drop_agreeing_readings():
    assert distinct_candidates([[1, 2], [3]], [[1, 2], [4]]) == [[[1, 2]], [[3], [4]]]


def test_teacher_forcing_scores_each_candidate_up_to_its_end_token():
    inputs, targets, mask, owners = teacher_forcing_batch(
        [[[5, 6, 7]], [[5], []]], start_id=1, eos_id=2, pad_id=0, max_positions=10
    )
    assert inputs.tolist() == [[1, 5, 6, 7], [1, 5, 0, 0], [1, 0, 0, 0]]
    assert targets.tolist() == [[5, 6, 7, 2], [5, 2, 0, 0], [2, 0, 0, 0]]
    assert mask.sum(1).tolist() == [4, 2, 1] and owners == [0, 1, 1]
    logits = np.random.default_rng(0).normal(size=(3, 4, 8))
    scores = per_line(row_logprobs(logits, targets, mask), owners, lines=2)
    lp = log_softmax(logits)
    assert scores[0][0] == pytest.approx(sum(lp[0, t, v] for t, v in enumerate([5, 6, 7, 2])))
    assert scores[1] == pytest.approx([lp[1, 0, 5] + lp[1, 1, 2], lp[2, 0, 2]])


def test_same_shape_batches_never_mix_shapes_and_keep_every_line_once():
    rng = np.random.default_rng(1)
    shapes = [(32, int(w)) for w in rng.choice([64, 128, 512], 40)] + [(16, 1024)] * 3
    batches = same_shape_batches(shapes, 8)
    assert sorted(i for b in batches for i in b) == list(range(len(shapes)))
    assert all(len({shapes[i] for i in b}) == 1 and len(b) <= 8 for b in batches)
    with pytest.raises(ValueError):
        same_shape_batches(shapes, 0)


def test_numpy_blas_runs_on_one_thread_while_recognizing_and_is_restored_after():
    from threadpoolctl import threadpool_info

    from ocrkit.util.blas import single_thread_blas

    def blas_threads() -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas_threads()
    assert before  # numpy is linked against a BLAS
    with single_thread_blas():
        assert set(blas_threads()) == {1}
    assert blas_threads() == before


def test_prefix_beams_sum_alignments_exactly_and_rank_the_best_first():
    logprobs = log_softmax(np.random.default_rng(3).normal(0, 3, (9, 5)))
    readings = prefix_beams(logprobs, BLANK, beam=10_000, per_frame=5, min_logprob=-np.inf)  # no pruning
    for ids, score in readings[:6]:
        assert score == pytest.approx(ctc_log_likelihood(logprobs, ids, BLANK), abs=1e-9)
    scores = [s for _, s in readings]
    assert scores == sorted(scores, reverse=True)
    assert len({tuple(ids) for ids, _ in readings}) == len(readings)


def test_second_choices_are_ctc_prefix_beams_not_already_taken():
    probs = np.full((4, 4), 0.01)
    probs[0, 1] = 0.97  # "1"
    probs[1, [2, 3]] = [0.55, 0.43]  # "2", a close second "3"
    probs[2, 0] = 0.97
    probs[3, 1] = 0.97  # "1"
    frames = log_softmax(np.log(probs))[None]
    assert best_path(frames, BLANK)[0][0] == [1, 2, 1]
    extra = second_choices(frames[0], [[1, 2, 1]], BLANK, alternatives=2)
    assert [1, 3, 1] in extra and [1, 2, 1] not in extra
    assert len(extra) == len({tuple(c) for c in extra}) <= 3


def test_others_may_win_only_while_the_candidates_leave_ctc_probability_to_other_readings():
    # the decoder's reading is known: joint score 0.5 * log 0.9 + 0.5 * log 0.8 = -0.164
    known = [None, np.log(0.8)]
    # the candidates hold 0.99 of CTC's probability: another reading scores at most 0.5 * log 0.01 = -2.3
    assert not others_may_win([np.log(0.09), np.log(0.9)], known)
    # they hold 0.5: another reading may reach 0.5 * log 0.5 = -0.35, above the known -1.15
    assert others_may_win([np.log(0.3), np.log(0.2)], [None, np.log(0.5)])
    assert others_may_win([np.log(0.3), np.log(0.2)], [None, None])  # nothing known: always open
    assert others_may_win([np.log(0.3), -np.inf], [None, np.log(0.99)])  # may be refit: always open
    # rounding that sums the candidates past 1 still leaves the others the floor: 0.5 * log 1e-9 = -10.4
    assert others_may_win([0.0, np.log(1e-3)], [None, -30.0])  # known -18.5
    assert not others_may_win([0.0, np.log(1e-3)], [None, np.log(1e-3)])  # known -6.9


def test_model_folder_sets_the_number_of_ctc_alternatives(tmp_path):
    write_spec(tmp_path, RecognizerSpec(joint_gate=0.9))
    assert read_spec(tmp_path, "recognizer").joint_settings().alternatives == CTC_ALTERNATIVES
    write_spec(tmp_path, RecognizerSpec(joint_alternatives=0))
    settings = read_spec(tmp_path, "recognizer").joint_settings()
    assert settings.alternatives == 0 and settings.gate is None


def test_scoring_many_pairs_at_once_matches_scoring_each_alone():
    """Pairs of different frame counts and target lengths share one forward pass (padded frames and
    states); each must score as it does alone, impossible targets and empty ones included."""
    rng = np.random.default_rng(3)
    frames = [log_softmax(rng.normal(0, 2, (n, 6))) for n in (12, 2, 7, 20, 5, 2)]
    targets = [[1, 2, 3], [1, 1], [], [1, 4, 4, 2], [3], [1, 2, 3]]
    together = ctc_log_likelihoods(frames, targets, BLANK, chunk=4)
    alone = [ctc_log_likelihoods([f], [t], BLANK)[0] for f, t in zip(frames, targets, strict=True)]
    assert together[1] == alone[1] == together[5] == -np.inf  # a double letter needs 3 frames
    for a, b, t in zip(together, alone, targets, strict=True):
        assert a == pytest.approx(b, abs=1e-9) and (t in ([1, 1], [1, 2, 3]) or np.isfinite(a))
