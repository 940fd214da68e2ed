"""Schedules fitted to a time budget: the step count fills it, validations spread over it, the cosine
reaches its floor at the last step, and the run reports a summary."""

from __future__ import annotations

import json
import time

import matplotlib.pyplot  # noqa: F401  (imported here: its first import would eat the small budget)
import pytest
import torch
from fixtures import ToyTask, toy_settings

from ocrkit.engine.budget import fit_steps
from ocrkit.engine.trainer import Trainer


def test_fit_steps_fills_the_time_left_and_respects_the_cap():
    # 100 s left, 1 s/step, 4 validations of 5 s: 80 more steps
    assert fit_steps(10, 100.0, 1.0, 5.0, 4, cap=10_000) == 90
    assert fit_steps(10, 100.0, 1.0, 5.0, 4, cap=50) == 50
    assert fit_steps(10, 10.0, 1.0, 5.0, 4, cap=10_000) == 11  # no time left: one more step ends the run
    assert fit_steps(0, 60.0, 0.0, 0.0, 1, cap=7) == 1


class SlowToy(ToyTask):
    """Each loss call takes ~20 ms, so the run's pace is known."""

    def loss(self, model, batch):
        time.sleep(0.02)
        return super().loss(model, batch)


@pytest.mark.slow
def test_a_fitted_run_anneals_to_its_end_within_the_budget(tmp_path, capsys):
    settings = toy_settings(
        tmp_path,
        steps=100_000,
        grad_accum=1,
        fit_minutes=0.1,  # 6 s
        fit_probe_steps=3,
        fit_evals=3,
        validate_first=True,
        eval_every=0,
        warmup_steps=2,
        min_lr_ratio=0.1,
        log_every=1,
    )
    task = SlowToy()
    trainer = Trainer(task, settings, name="toy")
    state = trainer.fit()
    assert state.step >= 10 and settings.steps == state.step  # ~20 ms a step: up to ~250 steps fit
    steps = [e["step"] for e in trainer.evals]
    assert steps[0] == 0 and steps[-1] == state.step and len(steps) in (3, 4)
    records = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    last_lr = [r["lr"] for r in records if "lr" in r][-1]
    assert abs(last_lr - settings.lr * 0.1) < settings.lr * 0.02  # annealed to the floor at the end
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["seconds"] < 6.0 + 3.0  # the budget, plus the last validation and save on a busy machine
    assert summary["steps"] == state.step and summary["first_eval"]["step"] == 0
    assert summary["best_step"] in steps
    out = capsys.readouterr().out
    assert "toy: step 0: mse=" in out and "toy: done:" in out and "\r" not in out
    torch.testing.assert_close(
        torch.tensor(summary["last_eval"]["mse"]), torch.tensor(trainer.evals[-1]["mse"])
    )
