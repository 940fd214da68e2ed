"""Trains the toy task under `torchrun --nproc_per_node 2` and dumps each rank's weights.

Run by tests/engine/test_trainer.py.
"""

import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the toy task lives in tests/fixtures.py
from fixtures import ToyTask, toy_settings  # noqa: E402

from ocrkit.engine.trainer import Trainer  # noqa: E402

out = Path(sys.argv[1])
# the engine tests' run, shortened: no evaluation, a checkpoint halfway
settings = toy_settings(
    out, steps=6, warmup_steps=2, eval_every=0, save_every=3, log_every=1, ema_decay=0.0, best_metric=""
)
trainer = Trainer(ToyTask(), settings)
trainer.fit()
rank = trainer.accelerator.process_index
model = trainer.accelerator.unwrap_model(trainer.model)
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / f"rank{rank}.safetensors"))
print("world", trainer.accelerator.num_processes, torch.distributed.get_backend())
