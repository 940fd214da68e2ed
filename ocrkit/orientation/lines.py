"""Which way a page's lines read: the recognizer's own judgement where the page classifier knows only
the lines' axis, or not even that. Upside-down print reads as unsure gibberish, upright print as sure
text, and print on the wrong axis is cut into many short boxes read as a letter or two each.

A page is read first as the classifier turned it. If its widest lines read sure (`reads_upright`), it
is upright and nothing more is read; otherwise those lines are read again both ways up by the CTC head,
and turned by the decoder where the CTC votes split (`lines_direction`). Reading the widest lines
both ways cost 0.13 s of a receipt's 0.8 s (ONNX, 2 threads); most pages people send are upright print,
which the first reading already settles."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LINES_CHECKED = 8  # the widest lines of a page are read both ways up
# more than this share of the lines must read surer turned to turn the page. A line's CTC confidence
# differs by only 0.01-0.13 between the two ways up (its many blank frames are sure either way), but it
# differs on most lines: of the 8 widest lines, 0-12 % read surer turned on 18 printed validation pages
# upright and 88-100 % upside down; on 10 handwritten development pages 0-38 % and 62-100 %
VOTE = 0.5
SPLIT = 0.25  # a share of dissenting lines at which the CTC votes are split and the decoder votes too


# a page whose widest lines' median reading score (`Line.rec_score`: joint decoding's, the CTC head's
# where it is sure) reaches this reads upright. 108 development, validation and unseen-source pages, each
# read both ways up with recognizer 0.16.5: the upside-down readings' median was at most 0.48; 70 upright
# readings reached 0.56 (51 reached 0.85, the threshold set 0.07 above the 0.78 of the decoder's scores);
# the rest are read both ways.
SURE_READING = 0.56
MIN_SURE_LINES = 3  # fewer lines say too little (a single short line of digits reads alike both ways)


def widest(boxes: np.ndarray) -> np.ndarray:
    """Indices of the LINES_CHECKED widest of xyxy `boxes`, widest first."""
    return np.argsort(boxes[:, 0] - boxes[:, 2], kind="stable")[:LINES_CHECKED]


def reads_upright(scores: np.ndarray) -> bool:
    """Whether a page's widest lines, read as they are, read sure enough to settle it upright."""
    return len(scores) >= MIN_SURE_LINES and float(np.median(scores)) >= SURE_READING


# the classifier's choice of direction, when it is this sure of it, is overruled only by a clear vote of
# the lines (more than SURE_VOTE of them). On the 148 pages above, each sent both ways up, the lines'
# check went wrong on 5 of 296 readings; 4 of them were hands whose lines voted 5 to 3 against a
# classifier sure of the right direction (0.998-1.000). Replayed with this rule (its two numbers chosen
# on those readings), 1 of 296 went wrong.
DIRECTION_SURE = 0.99
SURE_VOTE = 0.75


def vote_to_turn(direction_confidence: float) -> float:
    """The share of lines that must read surer turned to turn a page the classifier turned this sure."""
    return SURE_VOTE if direction_confidence >= DIRECTION_SURE else VOTE


def sure_characters_per_line(texts: Sequence[str], scores: Sequence[float]) -> float:
    """Characters × reading score summed over a page's lines, over their count (0 with none): how much a
    reading of the page says per line. On the wrong axis the detector cuts print into short boxes read
    as a letter or two; on 40 in-source validation pages each read four ways, either reading on the
    right axis (upright or upside down) scored at least 2.05 times either on the wrong axis, on every
    page (docs/models/orientation/training-log.md)."""
    if not len(texts):
        return 0.0
    return float(sum(len(text) * score for text, score in zip(texts, scores, strict=True)) / len(texts))


TURN, KEEP, READ_BOTH = "turn", "keep", "read both"  # what the lines' votes ask of a page


def lines_direction(
    crops: list[np.ndarray],
    scores: Sequence[float],
    confidences: Callable[[list[np.ndarray]], list[float]],
    read: Callable[[list[np.ndarray]], list[tuple[str, float]]],
    vote: float = VOTE,
) -> str:
    """TURN if more than `vote` of the line crops' votes say they read surer turned half a turn. Each
    crop votes by the CTC head's confidence (`confidences`, the crops as they are and turned); where
    those votes split (`ctc_votes_split`), each crop votes a second time by the decoder's reading score
    (`read`, the turned crops, against `scores`, their scores as the page was read). The decoder mends
    most of the CTC head's wrong directions on hands and early print but reads one 19th-c. hand surer
    upside down, where the CTC votes were clear (docs/models/orientation/training-log.md). An even
    split of a plain majority vote is settled by the summed score differences. A split plain vote
    that keeps the page asks for READ_BOTH: a few faint widest lines can outvote a page whose other
    lines read far surer the other way up (a dot-matrix receipt), so the whole page is read both ways."""
    if not crops:
        return KEEP
    turned = [np.ascontiguousarray(c[::-1, ::-1]) for c in crops]
    ctc = np.asarray(confidences(crops + turned), np.float64)
    surer = ctc[len(crops) :] - ctc[: len(crops)]  # per vote: how much surer the line reads turned
    split = ctc_votes_split(surer > 0)
    if split:
        decoder = np.asarray([score for _, score in read(turned)], np.float64)
        surer = np.concatenate([surer, decoder - np.asarray(scores, np.float64)])
    share = float((surer > 0).mean())
    if share == vote == VOTE:  # an even split: the lines lean the way they read surer overall
        turn = float(surer.sum()) > 0
    else:
        turn = share > vote
    if turn:
        return TURN
    return READ_BOTH if split and vote == VOTE else KEEP


def ctc_votes_split(votes: np.ndarray) -> bool:
    """Whether at least `SPLIT` of the lines vote against the majority (2 to 6 of 8)."""
    return float(min(votes.mean(), 1 - votes.mean())) >= SPLIT
