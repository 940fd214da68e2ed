"""The training loop on a toy task: accumulation, resume after a kill or a time budget, DDP, devices."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from fixtures import SCRIPTS, ToyData, ToyTask, toy_settings
from safetensors.torch import load_file

from ocrkit.engine.checkpoint import latest_checkpoint
from ocrkit.engine.schedule import lr_multiplier
from ocrkit.engine.settings import TrainSettings
from ocrkit.engine.trainer import Trainer, accumulate, choose_device, cpu_has_bf16, slow_bf16_warning
from ocrkit.util.errors import OcrkitError


def weights(path):
    return load_file(str(path / "model.safetensors"))


def test_accumulation_equals_one_big_batch():
    task = ToyTask()
    torch.manual_seed(0)
    model = task.build_model().eval()  # no dropout: compare exact gradients
    data = ToyData(6)
    items = [data.items[i] for i in range(6)]  # row counts 1..5,1: different "lengths"
    micro = [task.collate(items[:1]), task.collate(items[1:4]), task.collate(items[4:])]
    accumulate(model, task, micro)
    g_acc = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    accumulate(model, task, [task.collate(items)])
    for a, b in zip(g_acc, [p.grad for p in model.parameters()], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    # the naive mean of per-micro-batch means differs (so the test above can fail)
    model.zero_grad()
    sum(task.loss(model, b) / task.units(b) for b in micro).backward()
    naive = [p.grad.clone() / 3 for p in model.parameters()]
    assert not torch.allclose(naive[0], g_acc[0], rtol=1e-3)


def test_schedule_warmup_then_cosine():
    s = TrainSettings(steps=100, warmup_steps=10, min_lr_ratio=0.1)
    assert lr_multiplier(0, s) == pytest.approx(0.1)
    assert lr_multiplier(10, s) == pytest.approx(1.0)
    assert lr_multiplier(100, s) == pytest.approx(0.1)
    flat = TrainSettings(steps=100, warmup_steps=10, schedule="flat_cosine", flat_fraction=0.5)
    assert lr_multiplier(49, flat) == 1.0 and lr_multiplier(75, flat) < 1.0


def test_training_reduces_loss_keeps_best_and_writes_outputs(tmp_path):
    state = Trainer(ToyTask(), toy_settings(tmp_path)).fit()
    assert state.step == 12 and state.best_step in (6, 12)
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert any('"eval"' in x for x in lines) and (tmp_path / "curves.png").stat().st_size > 0
    assert (tmp_path / "model" / "model.safetensors").is_file() and (tmp_path / "best").is_dir()
    assert latest_checkpoint(tmp_path / "checkpoints").name == "step-0000012"
    assert len(list((tmp_path / "checkpoints").glob("step-*"))) == 2  # old ones pruned


@pytest.mark.slow
def test_killed_run_resumes_to_identical_weights(tmp_path):
    script = [sys.executable, str(SCRIPTS / "toy_train_slow.py")]
    subprocess.run([*script, str(tmp_path / "full"), "fresh"], check=True, capture_output=True, timeout=300)
    run = subprocess.Popen(
        [*script, str(tmp_path / "cut"), "fresh"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    ckpts = tmp_path / "cut" / "checkpoints"
    deadline = time.time() + 240
    while time.time() < deadline and (
        latest_checkpoint(ckpts) is None or latest_checkpoint(ckpts).name < "step-0000008"
    ):
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert latest_checkpoint(ckpts).name == "step-0000008"
    assert not (tmp_path / "cut" / "model").exists()  # killed before the end
    subprocess.run([*script, str(tmp_path / "cut"), "resume"], check=True, capture_output=True, timeout=300)
    full, resumed = weights(tmp_path / "full" / "model"), weights(tmp_path / "cut" / "model")
    for k in full:
        torch.testing.assert_close(full[k], resumed[k], rtol=0, atol=1e-7)


def test_non_finite_gradient_step_is_skipped(tmp_path):
    class Exploding(ToyTask):
        def loss(self, model, batch):
            return super().loss(model, batch) * float("inf")

    Trainer(Exploding(), toy_settings(tmp_path, steps=2, eval_every=0, ema_decay=0.0)).fit()
    log = (tmp_path / "metrics.jsonl").read_text()
    assert log.count('"skipped": true') == 2
    torch.manual_seed(0)
    untouched = Exploding().build_model().state_dict()  # same seed as the run: the initial weights
    after = weights(tmp_path / "model")
    for k in after:
        torch.testing.assert_close(after[k], untouched[k])


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="gloo DDP test runs on linux")
def test_two_process_ddp_ranks_end_identical(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(SCRIPTS.parent)}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        "29517",
        str(SCRIPTS / "ddp_toy_train.py"),
        str(tmp_path),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "world 2 gloo" in res.stdout
    r0, r1 = load_file(str(tmp_path / "rank0.safetensors")), load_file(str(tmp_path / "rank1.safetensors"))
    for k in r0:
        torch.testing.assert_close(r0[k], r1[k], rtol=0, atol=0)
    assert (tmp_path / "model" / "model.safetensors").is_file()


def test_bf16_warning_only_where_bf16_would_be_emulated():
    assert "slower" in slow_bf16_warning("cpu", "bf16", native_bf16=False)
    assert slow_bf16_warning("cpu", "bf16", native_bf16=True) is None
    assert slow_bf16_warning("cpu", "no", native_bf16=False) is None
    assert slow_bf16_warning("cuda", "bf16", native_bf16=False) is None


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="needs /proc/cpuinfo")
def test_cpu_bf16_detection_agrees_with_cpuinfo_flags():
    flags = set(Path("/proc/cpuinfo").read_text().split())
    assert cpu_has_bf16() == bool({"avx512_bf16", "amx_tile"} & flags)


def test_time_budget_stops_validated_and_checkpointed_and_resume_finishes_exactly(tmp_path):
    full = Trainer(ToyTask(), toy_settings(tmp_path / "full")).fit()
    task = ToyTask()
    cut = Trainer(task, toy_settings(tmp_path / "cut", max_minutes=1e-9)).fit()
    assert cut.step == 1 and task.evaluated == 1
    assert latest_checkpoint(tmp_path / "cut" / "checkpoints").name == "step-0000001"
    resumed = Trainer(ToyTask(), toy_settings(tmp_path / "cut"), resume=True).fit()
    assert resumed.step == full.step == 12
    a = load_file(str(tmp_path / "full" / "model" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "model" / "model.safetensors"))
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-7)


def test_device_choice():
    assert choose_device("auto", True) == "cuda" and choose_device("auto", False) == "cpu"
    assert choose_device("cpu", True) == "cpu" and choose_device("cuda", True) == "cuda"
    with pytest.raises(OcrkitError, match="no CUDA device"):
        choose_device("cuda", False)
    with pytest.raises(OcrkitError, match="expected auto, cpu or cuda"):
        choose_device("tpu", True)
