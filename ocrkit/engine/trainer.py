"""One training loop for every task, on Hugging Face Accelerate.

The same script runs on one CPU, one GPU, or several processes (`accelerate launch`, `torchrun`):
Accelerate owns devices, DDP and bf16 autocast; this module owns the lifecycle around it.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, RandomSampler

from ocrkit.engine.checkpoint import (
    TrainerState,
    load_checkpoint,
    resume_checkpoint,
    save_checkpoint,
)
from ocrkit.engine.curves import plot_curves
from ocrkit.engine.ema import ModelEma
from ocrkit.engine.pace import Pace
from ocrkit.engine.schedule import lr_multiplier
from ocrkit.engine.settings import TrainSettings
from ocrkit.engine.task import Task
from ocrkit.pages.outputs import replace_folder, write_atomic
from ocrkit.util.errors import OcrkitError


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch RNGs (datasets draw their augmentation randomness from these)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def micro_batch_seed(base: int, step: int, micro: int, rank: int) -> int:
    """A seed per (step, micro-batch, rank): resuming at step N replays exactly what step N would do."""
    return (base * 1_000_003 + step * 997 + micro * 31 + rank * 7919) % 2**31


def accumulate(
    model: torch.nn.Module,
    task: Task,
    micro_batches: list[dict[str, Any]],
    accelerator: Accelerator | None = None,
) -> float:
    """Backward over all micro-batches of one optimizer step; returns the step's mean loss per unit.

    Each micro-batch's summed loss is divided by the units (tokens / images) of the WHOLE step across
    all ranks, so the gradient equals that of one big batch (a mean of per-micro-batch means would
    over-weight short targets). DDP averages gradients over ranks, hence the world-size factor.
    """
    units = torch.tensor(float(sum(task.units(b) for b in micro_batches)))
    world = 1
    if accelerator is not None and accelerator.num_processes > 1:
        world = accelerator.num_processes
        units = accelerator.reduce(units.to(accelerator.device), reduction="sum").cpu()
    total_units = max(float(units), 1.0)
    step_loss = 0.0
    for i, batch in enumerate(micro_batches):
        last = i == len(micro_batches) - 1
        if accelerator is None:
            loss = task.loss(model, batch) * (world / total_units)
            loss.backward()
        else:
            with accelerator.no_sync(model) if not last else nullcontext():
                with accelerator.autocast():
                    loss = task.loss(model, batch) * (world / total_units)
                accelerator.backward(loss)
        step_loss += float(loss.detach()) / world
    return step_loss


def cpu_has_bf16() -> bool:
    """Whether this CPU computes bf16 natively; without it autocast emulates bf16 and runs far slower.

    torch exposes the CPU feature probes only as private helpers; a torch without them counts as no.
    """
    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, name, lambda: False)() for name in probes)


def slow_bf16_warning(device_type: str, mixed_precision: str, native_bf16: bool | None = None) -> str | None:
    """A warning when bf16 autocast would be emulated: on an AVX2-only CPU it made a training step
    ~11x (D-FINE) to ~12x (recognizer) slower than fp32."""
    if device_type != "cpu" or mixed_precision != "bf16":
        return None
    if cpu_has_bf16() if native_bf16 is None else native_bf16:
        return None
    return (
        "warning: mixed_precision=bf16 on a CPU without AVX512-BF16/AMX is emulated (a training step was "
        "~11x slower than fp32 on an AVX2 CPU); set train.mixed_precision: 'no'"
    )


def choose_device(setting: str, cuda_available: bool) -> str:
    """ "cpu" or "cuda" for a `train.device` setting; asking for CUDA on a machine without it is an error."""
    if setting not in ("auto", "cpu", "cuda"):
        raise OcrkitError(f"train.device: expected auto, cpu or cuda, got {setting!r}")
    if setting == "cuda" and not cuda_available:
        raise OcrkitError("train.device: cuda was asked for, but torch sees no CUDA device")
    return "cuda" if setting != "cpu" and cuda_available else "cpu"


def out_of_time(started: float, max_minutes: float, accelerator: Accelerator | None = None) -> bool:
    """Whether the time budget is spent; with several processes, all stop together (the max decides)."""
    if max_minutes <= 0:
        return False
    spent = torch.tensor(float(time.perf_counter() - started >= max_minutes * 60))
    if accelerator is not None and accelerator.num_processes > 1:
        spent = accelerator.reduce(spent.to(accelerator.device), reduction="max").cpu()
    return bool(spent)


class StepWindow:
    """The steps since the last logged one, for the logged pace (s/step over that window)."""

    def __init__(self) -> None:
        self.start, self.steps = time.perf_counter(), 0

    def record(self, step: int, loss: float, lr: float, grad_norm: float, skipped: bool) -> dict:
        """The metrics line of `step`; the window starts again."""
        elapsed = time.perf_counter() - self.start
        record = {
            "step": step,
            "loss": loss,
            "lr": lr,
            "grad_norm": grad_norm,
            "skipped": skipped,
            "s_per_step": elapsed / max(1, self.steps),
        }
        self.start, self.steps = time.perf_counter(), 0
        return record


class Trainer:
    """Fit a Task for `settings.steps` optimizer steps, with checkpoints, resume, EMA and evaluation.

    `name` prefixes every console line (two runs side by side stay readable); after fit(), `summary`
    holds what the run did (also out_dir/summary.json)."""

    def __init__(
        self,
        task: Task,
        settings: TrainSettings,
        resume: bool = False,
        config: dict | None = None,
        name: str = "",
    ):
        self.task = task
        self.s = settings
        self.resume = resume
        self.config = config or {}
        self.out = Path(settings.out_dir)
        self.prefix = f"{name}: " if name else ""
        self.evals: list[dict] = []  # {"step", "seconds", **metrics} per validation
        self.summary: dict[str, Any] = {}
        # Without cpu=True Accelerate ignores torchrun's env on a GPU-less machine and runs single-process.
        use_cpu = choose_device(settings.device, torch.cuda.is_available()) == "cpu"
        self.accelerator = Accelerator(mixed_precision=settings.mixed_precision, cpu=use_cpu)
        if settings.fit_minutes > 0 and self.accelerator.num_processes > 1:
            # each process would time its own steps and could fit another count: the ranks would part
            raise OcrkitError(
                "train.fit_minutes: for single-process runs; use train.max_minutes with several"
            )
        warning = slow_bf16_warning(self.accelerator.device.type, settings.mixed_precision)
        if warning:
            self.accelerator.print(warning)

    # -- data -----------------------------------------------------------------------------------
    def _epoch_batches(self, dataset: Any, epoch: int) -> list[list[int]]:
        """Batches of indices for one epoch, identical on every rank, then sharded by rank."""
        seed = self.s.seed * 1009 + epoch
        sampler = self.task.batch_sampler(dataset, self.s.batch_size, seed)
        if sampler is None:
            gen = torch.Generator().manual_seed(seed)
            order = list(RandomSampler(dataset, generator=gen))
            sampler = [order[i : i + self.s.batch_size] for i in range(0, len(order), self.s.batch_size)]
            sampler = [b for b in sampler if len(b) == self.s.batch_size] or sampler
        batches = list(sampler)
        world, rank = self.accelerator.num_processes, self.accelerator.process_index
        usable = len(batches) - len(batches) % world if len(batches) >= world else len(batches)
        return batches[:usable][rank::world] if world > 1 else batches

    def _micro_batches(self, dataset: Any, start_micro: int) -> Iterator[dict[str, Any]]:
        """Endless stream of collated micro-batches, starting at global micro-batch `start_micro`."""
        epoch, skip = 0, start_micro
        while True:
            batches = self._epoch_batches(dataset, epoch)
            if not batches:
                raise ValueError("training dataset is empty")
            if skip >= len(batches):
                skip -= len(batches)
                epoch += 1
                continue
            loader = DataLoader(
                dataset,
                batch_sampler=batches[skip:],
                collate_fn=self.task.collate,
                num_workers=self.s.num_workers,
                persistent_workers=False,
                # its own generator: creating a loader must not draw from the global RNG that each step
                # seeds, or a run resumed mid-epoch would augment differently from an unbroken one
                generator=torch.Generator().manual_seed(self.s.seed * 1009 + epoch),
            )
            skip = 0
            yield from loader
            epoch += 1

    # -- lifecycle ------------------------------------------------------------------------------
    def fit(self) -> TrainerState:
        s, acc = self.s, self.accelerator
        if s.torch_threads:
            torch.set_num_threads(s.torch_threads)
        seed_everything(s.seed)
        model, optimizer, scheduler, ema, state = self._build()
        model, optimizer = acc.prepare(model, optimizer)
        self.model = model  # the prepared (possibly DDP-wrapped) model, for callers after fit()
        stream = self._micro_batches(self.task.train_dataset(), state.step * s.grad_accum)
        if acc.is_main_process:
            self.out.mkdir(parents=True, exist_ok=True)
            write_atomic(self.out / "config.json", json.dumps(self.config, indent=2, default=str))
        metrics_path = self.out / "metrics.jsonl"

        from tqdm.auto import tqdm

        # a progress bar redraws with carriage returns: in a log file that is one endless line, so it is
        # drawn on terminals only; elsewhere each validation is one line
        bar = tqdm(
            total=s.steps,
            initial=state.step,
            disable=not acc.is_main_process or not sys.stderr.isatty(),
            dynamic_ncols=True,
        )
        first_step = state.step
        pace = Pace(s, first_step, self.evals, lambda line: acc.print(self.prefix + line))
        if s.validate_first and state.step == 0:
            self._evaluate(model, ema, state, metrics_path)
        window = StepWindow()
        while state.step < s.steps:
            micro = []
            for i in range(s.grad_accum):
                seed_everything(micro_batch_seed(s.seed, state.step, i, acc.process_index))
                micro.append(next(stream))
            loss, grad_norm, skipped = self._step(model, micro, optimizer, scheduler, ema, state.step)
            state.step += 1
            window.steps += 1
            bar.update(1)
            if pace.stepped(state.step):
                bar.total = s.steps
            if acc.is_main_process and (state.step % s.log_every == 0 or skipped):
                record = window.record(state.step, loss, optimizer.param_groups[0]["lr"], grad_norm, skipped)
                bar.set_postfix(loss=f"{loss:.4f}", lr=f"{record['lr']:.2e}")
                self._log(metrics_path, record | self._loss_parts())
            spent = out_of_time(pace.started, s.max_minutes, acc)
            if spent:
                acc.print(
                    f"{self.prefix}step {state.step}: train.max_minutes={s.max_minutes:g} spent; stopping"
                )
            moment = pace.moment(state.step, spent)
            if moment.evaluate:
                self._evaluate(model, ema, state, metrics_path)
                pace.validated(state.step, moment.final)
            if moment.save:
                self._save(
                    ckpt_root=self.out / "checkpoints",
                    model=model,
                    optimizer=optimizer,
                    scheduler=scheduler,
                    state=state,
                    ema=ema,
                )
            if moment.stop:
                break
        bar.close()
        if acc.is_main_process:
            shipped = self._shipped(model, ema)
            replace_folder(self.out / "model", lambda tmp: self.task.save_pretrained(shipped, tmp))
            self._summarise(state, first_step, time.perf_counter() - pace.started)
        acc.wait_for_everyone()
        return state

    def _build(self) -> tuple[torch.nn.Module, Any, Any, ModelEma | None, TrainerState]:
        """The model, optimizer, schedule and EMA, restored from the latest checkpoint with --resume."""
        s, acc = self.s, self.accelerator
        model = self.task.build_model()
        model.train()
        groups = self.task.param_groups(model, s.lr, s.weight_decay)
        optimizer = torch.optim.AdamW(groups, lr=s.lr, betas=tuple(s.adam_betas), eps=s.adam_eps)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_multiplier(step, s))
        ema = ModelEma(model, s.ema_decay, s.ema_warmup_steps) if s.ema_decay > 0 else None
        state = TrainerState()
        ckpt_root = self.out / "checkpoints"
        if self.resume:
            last = resume_checkpoint(ckpt_root)
            state, ema_updates = load_checkpoint(
                last, model, optimizer, scheduler, ema.module if ema else None
            )
            if ema is not None:
                ema.updates = ema_updates
            acc.print(f"resumed from {last} at step {state.step}")
        elif any(ckpt_root.glob("step-*")):
            acc.print(
                f"{ckpt_root} holds an earlier run's checkpoints: this run starts at step 0 and its own "
                "checkpoints replace them as it saves (--resume continues instead)"
            )
        return model, optimizer, scheduler, ema, state

    def _step(
        self,
        model: torch.nn.Module,
        micro: list,
        optimizer: Any,
        scheduler: Any,
        ema: ModelEma | None,
        step: int,
    ) -> tuple[float, float, bool]:
        """One optimizer step over the micro-batches: (loss, grad norm, skipped). A step whose gradient
        is not finite or too large is skipped, and still moves the schedule (resume stays exact)."""
        s, acc = self.s, self.accelerator
        loss = accumulate(model, self.task, micro, acc)
        grad_norm = self._grad_norm(model)
        skipped = not math.isfinite(grad_norm) or grad_norm > s.skip_grad_norm
        if skipped:
            acc.print(f"{self.prefix}step {step}: grad norm {grad_norm:.3g} — step skipped")
        else:
            optimizer.step()
            if ema is not None:
                ema.update(acc.unwrap_model(model))
        optimizer.zero_grad(set_to_none=True)
        with warnings.catch_warnings():  # a skipped step still moves the schedule, on purpose
            warnings.filterwarnings(
                "ignore", message="Detected call of `lr_scheduler.step", category=UserWarning
            )
            scheduler.step()
        return loss, grad_norm, skipped

    def _save(
        self,
        ckpt_root: Path,
        model: torch.nn.Module,
        optimizer: Any,
        scheduler: Any,
        state: TrainerState,
        ema: ModelEma | None,
    ) -> None:
        acc = self.accelerator
        acc.wait_for_everyone()
        if acc.is_main_process:
            save_checkpoint(
                ckpt_root,
                acc.unwrap_model(model),
                optimizer,
                scheduler,
                state,
                ema.module if ema else None,
                ema.updates if ema else 0,
            )
        acc.wait_for_everyone()

    def _summarise(self, state: TrainerState, first_step: int, seconds: float) -> None:
        """summary.json and one console line: steps, time, pace, first/last/best validation."""
        steps = state.step - first_step
        training = seconds - sum(e["seconds"] for e in self.evals)
        self.summary = {
            "steps": state.step,
            "seconds": round(seconds, 1),
            "s_per_step": round(training / steps, 3) if steps else None,  # validations left out
            "best_metric": self.s.best_metric or None,
            "best_step": state.best_step,
            "best_value": state.best_value,
            "first_eval": self.evals[0] if self.evals else None,
            "last_eval": self.evals[-1] if self.evals else None,
        }
        write_atomic(self.out / "summary.json", json.dumps(self.summary, indent=2))
        line = f"{self.prefix}done: {state.step} steps in {seconds / 60:.1f} min"
        if state.best_value is not None:
            line += f", best {self.s.best_metric}={state.best_value:.4f} at step {state.best_step}"
        self.accelerator.print(line)

    def _shipped(self, model: torch.nn.Module, ema: ModelEma | None) -> torch.nn.Module:
        return ema.module if ema is not None else self.accelerator.unwrap_model(model)

    def _loss_parts(self) -> dict[str, float]:
        """A task's loss terms since the last log (optional hook `pop_loss_parts`), e.g. CE vs CTC."""
        pop = getattr(self.task, "pop_loss_parts", None)
        return pop() if pop is not None else {}

    def _grad_norm(self, model: torch.nn.Module) -> float:
        params = [p for p in model.parameters() if p.grad is not None]
        if not params:
            return 0.0
        max_norm = self.s.clip_grad_norm if self.s.clip_grad_norm > 0 else float("inf")
        return float(torch.nn.utils.clip_grad_norm_(params, max_norm))

    def _evaluate(
        self, model: torch.nn.Module, ema: ModelEma | None, state: TrainerState, path: Path
    ) -> None:
        acc = self.accelerator
        acc.wait_for_everyone()
        if acc.is_main_process:
            net = self._shipped(model, ema)
            was_training = net.training
            net.eval()
            started = time.perf_counter()
            with torch.no_grad(), acc.autocast():
                metrics = self.task.evaluate(net)
            net.train(was_training)
            self.evals.append({"step": state.step, "seconds": time.perf_counter() - started, **metrics})
            self._log(path, {"step": state.step, "eval": metrics})
            acc.print(
                f"{self.prefix}step {state.step}: " + ", ".join(f"{k}={v:.4f}" for k, v in metrics.items())
            )
            plot_curves(path, self.out / "curves.png")
            key = self.s.best_metric
            if key and key in metrics:
                value = metrics[key]
                better = state.best_value is None or (
                    value > state.best_value if self.s.best_mode == "max" else value < state.best_value
                )
                if better:
                    state.best_value, state.best_step = value, state.step
                    replace_folder(self.out / "best", lambda tmp: self.task.save_pretrained(net, tmp))
        acc.wait_for_everyone()

    @staticmethod
    def _log(path: Path, record: dict) -> None:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
