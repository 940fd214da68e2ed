"""Checkpoints: rotation by recency, `--resume` never silently restarts, atomic best/ and model/ folders."""

from __future__ import annotations

import json

import pytest
import torch
from fixtures import ToyTask, toy_settings
from safetensors.torch import load_file

from ocrkit.engine.checkpoint import TrainerState, latest_checkpoint, save_checkpoint
from ocrkit.engine.trainer import Trainer
from ocrkit.util.errors import OcrkitError


def tiny_state():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters())
    return model, optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)


def test_a_new_run_below_an_older_runs_step_numbers_keeps_its_own_checkpoints(tmp_path):
    root = tmp_path / "checkpoints"
    model, optimizer, scheduler = tiny_state()
    for step in (200, 400):  # an earlier, longer run
        save_checkpoint(root, model, optimizer, scheduler, TrainerState(step=step))
    for step in (65, 130):  # a new run: its checkpoints have lower numbers, but they are the newest
        final = save_checkpoint(root, model, optimizer, scheduler, TrainerState(step=step))
        assert final.is_dir() and latest_checkpoint(root) == final
    assert sorted(p.name for p in root.glob("step-*")) == ["step-0000065", "step-0000130"]
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temp folder left


def test_resume_without_a_usable_checkpoint_is_one_error(tmp_path):
    settings = toy_settings(tmp_path / "typo", steps=2)
    with pytest.raises(
        OcrkitError, match=r"--resume: no checkpoint in .*typo/checkpoints \(no latest\.json\)"
    ):
        Trainer(ToyTask(), settings, resume=True).fit()
    root = tmp_path / "typo" / "checkpoints"
    root.mkdir(parents=True)
    (root / "latest.json").write_text("{ broken", encoding="utf-8")
    with pytest.raises(OcrkitError, match=r"latest\.json: cannot read \(JSONDecodeError"):
        Trainer(ToyTask(), settings, resume=True).fit()
    (root / "latest.json").write_text(json.dumps({"checkpoint": "step-0000065"}), encoding="utf-8")
    with pytest.raises(
        OcrkitError, match=r"names 'step-0000065', which is not a checkpoint folder \(present: none\)"
    ):
        Trainer(ToyTask(), settings, resume=True).fit()


def test_a_corrupt_checkpoint_file_is_one_error_on_resume(tmp_path):
    Trainer(ToyTask(), toy_settings(tmp_path, steps=4, eval_every=0)).fit()
    (latest_checkpoint(tmp_path / "checkpoints") / "optim.pt").write_bytes(b"\x80\x04not a tensor file")
    with pytest.raises(OcrkitError, match=r"step-0000004: cannot load the checkpoint \("):
        Trainer(ToyTask(), toy_settings(tmp_path, steps=8), resume=True).fit()


def test_a_failed_best_save_leaves_the_previous_best_intact(tmp_path):
    class FailsOnSecondSave(ToyTask):
        saves = 0

        def save_pretrained(self, model, out_dir):
            FailsOnSecondSave.saves += 1
            super().save_pretrained(model, out_dir)
            if FailsOnSecondSave.saves == 2:  # killed half-way through writing the new best
                (out_dir / "model.safetensors").write_bytes(b"half")
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Trainer(FailsOnSecondSave(), toy_settings(tmp_path, eval_every=2, save_every=0)).fit()
    best = load_file(str(tmp_path / "best" / "model.safetensors"))  # the first best, complete
    assert set(best) == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
