"""The run's pace: when it validates, saves and stops, fixed or fitted to a time budget."""

import time

from fixtures import toy_settings

from ocrkit.engine.pace import Pace


def walk(pace: Pace, steps: int, spent_at: int | None = None) -> list[tuple[int, str]]:
    """(step, what) for every step that validates (v), saves (s) or stops (x)."""
    seen = []
    for step in range(1, steps + 1):
        pace.stepped(step)
        moment = pace.moment(step, out_of_time=step == spent_at)
        what = "v" * moment.evaluate + "s" * moment.save + "x" * moment.stop
        if what:
            seen.append((step, what))
        if moment.evaluate:
            pace.validated(step, moment.final)
        if moment.stop:
            break
    return seen


def test_a_fixed_pace_validates_and_saves_on_its_intervals_and_at_the_end(tmp_path):
    settings = toy_settings(tmp_path)  # 12 steps, validation every 6, checkpoint every 4
    assert walk(Pace(settings, 0, [], print), 12) == [(4, "s"), (6, "v"), (8, "s"), (12, "vs")]


def test_a_spent_budget_validates_saves_and_stops_at_once(tmp_path):
    settings = toy_settings(tmp_path)
    assert walk(Pace(settings, 0, [], print), 12, spent_at=5) == [(4, "s"), (5, "vsx")]


def test_a_fitted_pace_sets_the_steps_after_its_probe_and_spreads_its_validations(tmp_path):
    said = []
    settings = toy_settings(tmp_path, steps=10_000, fit_minutes=0.05, fit_probe_steps=2, fit_evals=3)
    pace = Pace(settings, 0, [], said.append)
    assert not pace.stepped(1) and not pace.stepped(2)
    time.sleep(0.02)
    assert pace.stepped(3)  # 2 probe steps of ~10 ms fill 3 s with about 300 steps
    assert 30 < settings.steps < 10_000 and said[0].endswith(f"cosine to step {settings.steps}")
    assert not pace.moment(3, False).evaluate
    due = pace.next_eval
    assert 3 < due <= settings.steps and pace.moment(due, False).evaluate and pace.moment(due, False).save


def test_a_fitted_pace_past_its_deadline_stops(tmp_path):
    settings = toy_settings(tmp_path, steps=10_000, fit_minutes=0.05, fit_probe_steps=1)
    pace = Pace(settings, 0, [], lambda line: None)
    pace.stepped(1)
    pace.stepped(2)
    pace.deadline = time.perf_counter() - 1  # as a run slowed by other work finds itself
    moment = pace.moment(3, False)
    assert moment.final and moment.stop and moment.evaluate and moment.save
