"""Fitting a run's schedule to a time budget (train.fit_minutes).

A budget that only cuts a run (train.max_minutes) stops it wherever the schedule happens to be, often at
a high learning rate. Fitting instead times a few steps, then chooses the number of steps that, with the
validations, fills the budget, so the cosine anneals to its end just as the time runs out.
"""

from __future__ import annotations


def fit_steps(
    done: int, seconds_left: float, s_per_step: float, eval_seconds: float, evals: int, cap: int
) -> int:
    """The run's total steps: at least one more than `done`, at most `cap`, such that the remaining steps
    and the `evals` validations still to come take `seconds_left`."""
    usable = seconds_left - max(1, evals) * eval_seconds
    more = int(usable / s_per_step) if s_per_step > 0 and usable > 0 else 0
    return min(cap, max(done + 1, done + more))
