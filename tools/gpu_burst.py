"""Train the recognizer or the detector for a few minutes on a GPU and write the weights back small.

  bash tools/gpu_burst.sh --minutes 7 --out "$OUT"              # the recognizer, on a machine with a CUDA GPU
  bash tools/gpu_burst.sh --task det --minutes 7 --out "$OUT"   # the detector, on page shards
  python tools/gpu_burst.py [--task det] --dry-run --out /tmp/burst   # a tiny CPU run of the same path

Built for short loans of a GPU that sees only a copy of the working tree: the data come as Parquet shards
inside the tree (`ocrkit data pack`, see configs/recognizer/burst.yaml and configs/detector/burst.yaml),
training stops on the time budget after validating, and the result is a handful of files under --out: the
best model's weights in fp16 safetensors (+ the recognizer's CTC head, the detector's config.json), its
settings, the metrics log, and a summary of the throughput measured.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the copied tree may not be pip-installed where the GPU is

from ocrkit.util.argparse_kit import Parser  # noqa: E402
from ocrkit.util.config import ConfigError, load_config, to_dict  # noqa: E402
from ocrkit.util.errors import OcrkitError, report_error  # noqa: E402

DRY_RUN = [  # tiny and CPU-only: proves the path end to end in CI
    "train.device=cpu",
    "train.steps=2",
    "train.batch_size=2",
    "train.log_every=1",
    "train.eval_every=2",
    "train.save_every=2",
    "train.num_workers=0",
    "train.mixed_precision='no'",
    "data.val_limit=4",
    "data.eval_batch_size=4",
]
TASKS = {  # --task: (default config, what one training sample is called)
    "rec": (ROOT / "configs/recognizer/burst.yaml", "lines"),
    "det": (ROOT / "configs/detector/burst.yaml", "pages"),
}


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=tuple(TASKS), default="rec", help="rec: recognizer, det: detector")
    parser.add_argument("-c", "--config", help="training config (default: the task's burst.yaml)")
    parser.add_argument("--minutes", type=float, default=7.0, help="training budget (validation included)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the returned files")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--synth",
        type=int,
        default=0,
        help="recognizer: first render this many synthetic lines into data/burst/synth (all cores but one)",
    )
    parser.add_argument("--dry-run", action="store_true", help="a few CPU steps, to test the path")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (ConfigError, OcrkitError) as exc:
        report_error(exc)
        return 2


def run(args: argparse.Namespace) -> int:
    import torch

    from ocrkit.engine.trainer import Trainer

    if args.synth:
        render_synthetic(args.synth, ROOT / "data/burst/synth")
    default_config, unit = TASKS[args.task]
    overrides = [f"train.max_minutes={args.minutes}", *(DRY_RUN if args.dry_run else []), *args.overrides]
    config_class, task_class = task_classes(args.task)
    config = load_config(config_class, args.config or str(default_config), overrides)
    run_dir = Path(config.train.out_dir)
    if run_dir.exists() and not args.dry_run:
        shutil.rmtree(run_dir)  # a burst starts fresh; --resume is for ocrkit train recognizer
    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    import transformers

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, device: {device}", flush=True)
    started = time.perf_counter()
    state = Trainer(task_class(config), config.train, config=to_dict(config)).fit()
    seconds = time.perf_counter() - started
    summary = throughput(run_dir / "metrics.jsonl", config.train.batch_size * config.train.grad_accum, unit)
    summary.update(
        steps=state.step,
        seconds=round(seconds, 1),
        best_step=state.best_step,
        best_value=state.best_value,
        gpu_max_memory_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None,
        transformers=transformers.__version__,
    )
    kind = "detector" if args.task == "det" else "recognizer"
    export(run_dir / "best" if (run_dir / "best").is_dir() else run_dir / "model", args.out, run_dir, kind)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(json.dumps(summary), flush=True)
    return 0


def task_classes(task: str) -> tuple[type, type]:
    """(config schema, training task) of `--task`."""
    if task == "det":
        from ocrkit.detection.config import DetectorConfig
        from ocrkit.detection.task import DetectionTask

        return DetectorConfig, DetectionTask
    from ocrkit.recognition.config import RecognizerConfig
    from ocrkit.recognition.task import RecognitionTask

    return RecognizerConfig, RecognitionTask


def render_synthetic(n: int, out: Path) -> None:
    """Synthetic lines rendered where the training runs: cheaper to make there than to carry."""
    import os

    from ocrkit.cli import main as cli

    workers = max(1, (os.cpu_count() or 2) - 1)
    started = time.perf_counter()
    argv = ["synth", "lines", "--n", str(n), "--out", str(out), "--seed", "31", "--workers", str(workers)]
    code = cli(argv)
    if code:
        raise OcrkitError(f"rendering synthetic lines failed (exit code {code})")
    print(f"rendered {n} synthetic lines in {time.perf_counter() - started:.0f} s", flush=True)


def throughput(metrics: Path, samples_per_step: int, unit: str = "lines") -> dict:
    """Median steps/s and samples/s (`unit`: lines or pages) over the logged training windows
    (validation time excluded)."""
    windows = []
    for line in metrics.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if "s_per_step" in rec:
            windows.append(rec["s_per_step"])
    if not windows:
        return {}
    s_per_step = sorted(windows)[len(windows) // 2]
    return {"steps_per_s": round(1 / s_per_step, 2), f"{unit}_per_s": round(samples_per_step / s_per_step, 1)}


def export(model_dir: Path, out: Path, run_dir: Path, kind: str = "recognizer") -> None:
    """fp16 weights + settings + metrics, and the detector's config.json or the recognizer's CTC head: what
    a shipped folder needs beside the recognizer's tokenizer and config."""
    from safetensors.torch import load_file, save_file

    from ocrkit.hub.model_folder import read_spec, write_spec

    out.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(model_dir / "model.safetensors"))
    half = {k: v.half() if v.is_floating_point() else v for k, v in weights.items()}
    save_file({k: v.contiguous() for k, v in half.items()}, str(out / "model.safetensors"), {"format": "pt"})
    if (model_dir / "ctc_head.safetensors").is_file():
        shutil.copy2(model_dir / "ctc_head.safetensors", out / "ctc_head.safetensors")
    if kind == "detector":  # the recognizer's architecture is the shipped one's
        shutil.copy2(model_dir / "config.json", out / "config.json")
    write_spec(out, read_spec(model_dir, kind))
    shutil.copy2(run_dir / "metrics.jsonl", out / "metrics.jsonl")


if __name__ == "__main__":
    sys.exit(main())
