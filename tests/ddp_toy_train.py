"""Run by test_engine under `torchrun --nproc_per_node 2`: trains the toy task, dumps each rank's weights."""

import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

sys.path.insert(0, str(Path(__file__).parent))  # the toy task lives beside this test helper
from toy_task import ToyTask  # noqa: E402

from ocrkit.engine.settings import TrainSettings  # noqa: E402
from ocrkit.engine.trainer import Trainer  # noqa: E402

out = Path(sys.argv[1])
settings = TrainSettings(
    out_dir=str(out),
    steps=6,
    batch_size=4,
    grad_accum=2,
    lr=1e-2,
    warmup_steps=2,
    eval_every=0,
    save_every=3,
    log_every=1,
    torch_threads=1,
)
trainer = Trainer(ToyTask(), settings)
trainer.fit()
rank = trainer.accelerator.process_index
model = trainer.accelerator.unwrap_model(trainer.model)
save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out / f"rank{rank}.safetensors"))
print("world", trainer.accelerator.num_processes, torch.distributed.get_backend())
