"""Training hyper-parameters shared by every task (the `train:` section of a config)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrainSettings:
    out_dir: str = "runs/default"
    steps: int = 1000  # optimizer steps
    batch_size: int = 4  # per process, per micro-batch
    grad_accum: int = 1  # micro-batches per optimizer step
    lr: float = 2e-4
    weight_decay: float = 1e-4
    backbone_lr_mult: float = 1.0
    warmup_steps: int = 100
    schedule: str = "cosine"  # cosine | flat_cosine | constant
    flat_fraction: float = 0.5  # flat_cosine: share of steps at full LR before the cosine decay
    min_lr_ratio: float = 0.05
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    clip_grad_norm: float = 0.0  # 0 = off; vision models often do better with a high or no clip
    skip_grad_norm: float = 1e4  # a step whose grad norm is non-finite or above this is skipped (logged)
    ema_decay: float = 0.0  # 0 = no EMA
    ema_warmup_steps: int = 100
    mixed_precision: str = "no"  # no | bf16
    device: str = "auto"  # auto (GPU when available) | cpu | cuda (an error without one)
    max_minutes: float = 0.0  # >0: stop after this many minutes (validate + checkpoint first); resumable
    # >0: after `fit_probe_steps` timed steps, set `steps` (and eval/save intervals) so the run, its
    # `fit_evals` validations included, ends within this many minutes of its start: the cosine then
    # anneals to the end the budget allows instead of being cut off mid-schedule (engine/budget.py);
    # single-process runs only
    fit_minutes: float = 0.0
    fit_probe_steps: int = 4
    fit_evals: int = 4  # validations in a fitted run, the last at its end
    validate_first: bool = False  # validate before the first step (the start model's scores, step 0)
    seed: int = 0
    num_workers: int = 0
    log_every: int = 10
    eval_every: int = 200
    save_every: int = 200
    best_metric: str = ""  # e.g. "f1" or "cer"; empty = keep no "best" copy
    best_mode: str = "max"  # max | min
    torch_threads: int = 0  # 0 = leave torch's default
