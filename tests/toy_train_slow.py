"""Run by test_engine in a subprocess that the test kills mid-run (SIGKILL) and then resumes."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the toy task lives beside this test helper
from toy_task import ToyTask, toy_settings  # noqa: E402

from ocrkit.engine.trainer import Trainer  # noqa: E402


class SlowToyTask(ToyTask):
    def loss(self, model, batch):
        time.sleep(0.3)  # leave the test time to kill the run between checkpoints
        return super().loss(model, batch)


out, resume = Path(sys.argv[1]), sys.argv[2] == "resume"
Trainer(SlowToyTask(), toy_settings(out), resume=resume).fit()
