"""When a run validates, saves and stops, so the training loop only asks.

Two paces: a fixed one (validate every `eval_every` steps, save every `save_every`, stop at `steps` or
when `max_minutes` are spent), and one fitted to `fit_minutes`: a few probe steps are timed, then
`steps` and the validation interval are chosen to fill the budget, and re-chosen at every validation
on the pace seen so far (a run slowed by other work on the machine ends on time rather than late).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ocrkit.engine.budget import fit_steps
from ocrkit.engine.settings import TrainSettings

EVAL_SHARE = 0.2  # a fitted run spends at most this share of its budget on validations


@dataclass(frozen=True)
class Moment:
    """What to do after a step."""

    evaluate: bool
    save: bool
    final: bool  # the last step of the run (its schedule's end, or the budget spent)
    stop: bool  # leave the loop after this step's validation and checkpoint


class Pace:
    """Owns `settings.steps` once fitting starts; `evals` is the trainer's list of validations (their
    steps and seconds), read to keep validations within EVAL_SHARE of the time left."""

    def __init__(
        self, settings: TrainSettings, first_step: int, evals: list[dict], say: Callable[[str], None]
    ) -> None:
        self.s = settings
        self.first_step = first_step
        self.evals = evals
        self.say = say
        self.started = time.perf_counter()
        self.fitting = settings.fit_minutes > 0  # until the probe steps are timed
        self.probe_start = 0.0
        self.next_eval: int | None = None  # a fitted run's next validation step
        self.deadline: float | None = None  # a fitted run's last moment to start its final validation
        self.step_cap = settings.steps  # a fitted run takes at most train.steps

    def stepped(self, step: int) -> bool:
        """After optimizer step `step`: times the probe; True when `settings.steps` was just fitted."""
        if not self.fitting:
            return False
        if step == self.first_step + 1:
            self.probe_start = time.perf_counter()  # the first step pays one-off costs: not timed
        if step == self.first_step + 1 + self.s.fit_probe_steps:
            self.fit(step, (time.perf_counter() - self.probe_start) / self.s.fit_probe_steps)
            self.fitting = False
            return True
        return False

    def moment(self, step: int, out_of_time: bool) -> Moment:
        """What follows step `step`; `out_of_time`: `max_minutes` are spent (agreed by every process)."""
        s = self.s
        late = self.deadline is not None and time.perf_counter() > self.deadline  # behind a fitted pace
        final = step == s.steps or out_of_time or late
        if self.next_eval is not None:
            due = step >= self.next_eval
        else:
            due = not self.fitting and bool(s.eval_every) and step % s.eval_every == 0
        evaluate = bool(s.eval_every or self.next_eval is not None) and (due or final)
        if self.next_eval is None and not self.fitting:
            due = bool(s.save_every) and step % s.save_every == 0
        return Moment(evaluate=evaluate, save=final or due, final=final, stop=out_of_time or late)

    def validated(self, step: int, final: bool) -> None:
        """After a validation: a fitted run re-fits its steps on the pace seen so far."""
        if self.next_eval is not None and not final:
            timed = time.perf_counter() - self.probe_start - self.eval_seconds()
            self.fit(step, timed / max(1, step - self.first_step - 1), quiet=True)

    def eval_seconds(self) -> float:
        """Validation time spent after the first step (the step-0 one happens before the timing starts)."""
        return sum(e["seconds"] for e in self.evals if e["step"] > 0)

    def fit(self, done: int, s_per_step: float, quiet: bool = False) -> None:
        """Set `steps` and the validation interval to fill `fit_minutes`."""
        s = self.s
        per_eval = max((e["seconds"] for e in self.evals[-2:]), default=0.0)
        left = s.fit_minutes * 60 - (time.perf_counter() - self.started)
        evals_left = max(1, s.fit_evals - sum(1 for e in self.evals if e["step"] > 0))
        if per_eval > 0:  # validations take at most EVAL_SHARE of what is left: a short budget trains
            evals_left = max(1, min(evals_left, int(EVAL_SHARE * left / per_eval)))
        s.steps = fit_steps(done, left, s_per_step, per_eval, evals_left, self.step_cap)
        self.next_eval = min(s.steps, done + math.ceil((s.steps - done) / evals_left))
        self.deadline = self.started + s.fit_minutes * 60 - per_eval
        if not quiet:
            self.say(
                f"{s_per_step:.2f} s/step: {s.steps} steps fill the {s.fit_minutes:.1f} min budget with "
                f"{evals_left} validations of ~{per_eval:.0f} s; cosine to step {s.steps}"
            )
