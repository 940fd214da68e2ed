"""Run by tests/engine/test_trainer.py in a subprocess that it kills mid-run (SIGKILL), then resumes."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the toy task lives in tests/fixtures.py
from fixtures import ToyTask, toy_settings  # noqa: E402

from ocrkit.engine.trainer import Trainer  # noqa: E402


class SlowToyTask(ToyTask):
    def loss(self, model, batch):
        time.sleep(0.3)  # leave the test time to kill the run between checkpoints
        return super().loss(model, batch)


out, resume = Path(sys.argv[1]), sys.argv[2] == "resume"
Trainer(SlowToyTask(), toy_settings(out), resume=resume).fit()
