"""Run by test_engine in a subprocess that the test kills mid-run (SIGKILL) and then resumes."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the toy task lives beside this test helper
from toy_task import ToyTask  # noqa: E402

from ocrkit.engine.settings import TrainSettings  # noqa: E402
from ocrkit.engine.trainer import Trainer  # noqa: E402


class SlowToyTask(ToyTask):
    def loss(self, model, batch):
        time.sleep(0.3)  # leave the test time to kill the run between checkpoints
        return super().loss(model, batch)


out, resume = Path(sys.argv[1]), sys.argv[2] == "resume"
settings = TrainSettings(
    out_dir=str(out),
    steps=12,
    batch_size=4,
    grad_accum=2,
    lr=1e-2,
    warmup_steps=3,
    eval_every=6,
    save_every=4,
    log_every=2,
    ema_decay=0.9,
    ema_warmup_steps=2,
    best_metric="mse",
    best_mode="min",
    torch_threads=1,
)
Trainer(SlowToyTask(), settings, resume=resume).fit()
