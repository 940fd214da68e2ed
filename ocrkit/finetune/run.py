"""`ocrkit finetune`: import a user's pages, fine-tune both models within a time budget, ship, export, report.

The budget is the whole command. It pays, in order: the import; the start pair's scores on validation
pages (at most EVAL_SHARE of the budget, the pages read then are read again at the end); the two
training runs, each fitting its cosine schedule to the time left (engine/budget.py); the fp16 copies
and their ONNX export (EXPORT_SECONDS); and the final scores. The two runs go side by side, one thread
each, when there are two or more cores: on the 2-core reference machine that gave each model more steps
than running them one after the other with both threads (docs/training.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

from ocrkit.finetune.data import Provenance, UserData, import_user_data
from ocrkit.finetune.log import StampedLines, stamped_output
from ocrkit.finetune.recipe import Mixing, Model, detector_config, load_recipe, recognizer_config
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import check_folder
from ocrkit.util.config import ConfigError
from ocrkit.util.errors import OcrkitError

EVAL_SHARE = 0.1  # of the budget, for the start pair's page scores (the same again at the end)
EXPORT_SECONDS = 40.0  # fp16 copies + ONNX export of both models (~25 s measured on 2 cores)
SAFETY = 0.03  # of the budget, kept free for what the estimates miss
LOG = "train.log"
SYNTH_SEED = 7  # the synthetic sets are seeded, so a cached set is the one a render would give
COMPLETE = "COMPLETE"  # written last into a rendered synthetic set
TIMED_PAGES, TIMED_ROUNDS = 3, 2  # the speed row: pages the two pairs read in turns, and how often
MIN_TRAIN_SECONDS = 10.0  # less left for training is refused: no step would count
MAX_MINUTES = 7 * 24 * 60  # a longer budget is a typo (and a deadline past what a clock can show)
# READING: pages are scored with half the threads. With one other busy process on a 2-core machine, a page
# took 54 s to read with 2 threads and 8.5 s with 1 (threads waiting for a busy core stall each other).
KINDS: tuple[Model, ...] = ("detector", "recognizer")
T = TypeVar("T")
R = TypeVar("R")


@dataclass
class TrainRequest:
    paths: list[Path]
    out: Path
    minutes: float = 30.0
    val_paths: list[Path] = field(default_factory=list)
    test_paths: list[Path] = field(default_factory=list)  # scored once at the end, never chosen on
    det_model: str | None = None
    rec_model: str | None = None
    only: str | None = None  # det | rec
    reserved: Path | None = None
    provenance: Provenance = field(default_factory=lambda: Provenance(subset=""))
    val_share: float = 0.1
    parallel: bool | None = None  # None: side by side when both models train and there are >= 2 cores
    overrides: dict[str, list[str]] = field(default_factory=dict)  # kind → `--set`-style recipe overrides
    threads: int = 0  # 0: all cores
    export: bool = True
    started: float = 0.0  # time.time() the budget counts from (0: when train() is called)


@dataclass
class Job:
    """One model's training run, as handed to a worker process."""

    kind: Model
    config: Any  # DetectorConfig | RecognizerConfig
    threads: int
    deadline: float  # time.time() by which the run, its last validation included, is over
    synth: int  # synthetic items to render first
    synth_dir: Path
    log: Path


def say(message: str) -> None:
    print(message, flush=True)


def train(req: TrainRequest) -> dict:
    """Run everything `ocrkit finetune` does; returns the report (also written to OUT/report.json). What
    it prints is stamped with the time and kept in OUT/train.log. Everything that can be checked before
    the import is, before anything is written, so a corrected command can use the same --out."""
    started = req.started or time.time()
    check_out_dir(req.out)
    starts = {
        "detector": zoo.resolve(req.det_model, "detector"),
        "recognizer": zoo.resolve(req.rec_model, "recognizer"),
    }
    for kind, folder in starts.items():
        check_folder(folder, kind)
    recipes = {kind: load_recipe(kind, req.overrides.get(kind)) for kind in KINDS}
    check_before_import(req, recipes, starts)
    with stamped_output(req.out / LOG):
        return _train(req, starts, recipes, started)


def _import(req: TrainRequest) -> UserData:
    """The user's pages imported once (the reserved list refused), with what was imported said."""
    from ocrkit.data.ground_truth.reserve import describe_reserved, guarded_importer

    importer = guarded_importer(req.out / "data", req.reserved)
    data = import_user_data(
        req.paths,
        req.val_paths,
        req.out / "data",
        importer,
        req.provenance,
        req.val_share,
        describe_reserved(req.reserved, importer),
        req.test_paths,
    )
    for line in data.summary.lines_out():
        say(f"import: {line}")
    return data


def _score_start(
    req: TrainRequest, starts: dict[str, Path], data: UserData, reading: int, work: Path
) -> tuple[Path | None, dict | None]:
    """The start pair on the validation pages (within its share of the budget): the pages it scored and
    its scores, or (None, None) without validation pages."""
    if data.val_pages is None:
        say("no validation pages (only line images): the pair is not scored, only the recognizer")
        return None, None
    from ocrkit.finetune.scoring import score_pair_within

    report_pages, before = score_pair_within(
        starts["detector"], starts["recognizer"], data.val_pages, EVAL_SHARE * req.minutes * 60, reading, work
    )
    say(f"start pair on {before['pages']} validation pages: " + _pair_line(before))
    return report_pages, before


def _train(req: TrainRequest, starts: dict[str, Path], recipes: dict, started: float) -> dict:
    deadline = started + req.minutes * 60
    phases = Phases(started)
    work = req.out / "work"
    data = _import(req)
    phases.done("import")
    kinds = trainable(req.only, data)
    threads = req.threads or os.cpu_count() or 1
    reading = max(1, threads // 2)  # threads for page scoring (see READING)
    work.mkdir(parents=True, exist_ok=True)

    t = time.time()
    report_pages, before = _score_start(req, starts, data, reading, work)
    eval_seconds = time.time() - t
    phases.done("start pair scored")

    end_of_training = deadline - eval_seconds - EXPORT_SECONDS - SAFETY * req.minutes * 60
    if before is not None:  # the side-by-side timing and the test pages at the end
        end_of_training -= 2 * TIMED_ROUNDS * min(TIMED_PAGES, before["pages"]) * before["s_per_page"]
        end_of_training -= 2 * page_count(data.test_pages) * before["s_per_page"]
    parallel = req.parallel if req.parallel is not None else (len(kinds) > 1 and threads >= 2)
    jobs = plan_jobs(kinds, recipes, starts, data, work, req, threads, parallel, end_of_training)
    until = time.strftime("%H:%M:%S", time.localtime(jobs[-1].deadline))
    how = "side by side" if parallel and len(kinds) > 1 else "one after the other"
    say(f"training {' and '.join(kinds)} {how}, {jobs[0].threads} thread(s) each, until {until}")
    runs = run_jobs(jobs, parallel)
    phases.done("training (synthetic data included)")

    finals = dict(starts)
    outputs: dict[str, str] = {}
    for kind, run in runs.items():
        finals[kind] = ship_best(kind, run, req.out / kind)
        outputs[kind] = str(finals[kind])

    after, timing = None, None
    if report_pages is not None:
        after = fit_cuts(finals, runs, report_pages, reading)
        phases.done("shipping and thresholds")
        timing = time_pairs(starts, finals, report_pages, reading, before)
        phases.done("speed in turns")
    test = None
    if data.test_pages is not None:
        test = score_test(starts, finals, data.test_pages, reading)
        phases.done("test pages")
    if req.export:
        outputs.update(export_models({k: finals[k] for k in runs}, req.out / "onnx"))
        phases.done("ONNX export")

    from ocrkit.finetune.report import write_report

    return write_report(
        req.out,
        {
            "budget_minutes": req.minutes,
            "elapsed_minutes": round((time.time() - started) / 60, 2),
            "plan": {
                "side_by_side": parallel and len(kinds) > 1,
                "threads_per_model": jobs[0].threads,
                "start_scoring_seconds": round(eval_seconds, 1),
            },
            "start_models": {k: str(v) for k, v in starts.items()},
            "before": before,
            "after": after,
            "timed_side_by_side": timing,
            "test": test,
            "phases_seconds": phases.spent,
            "peak_memory_gb": peak_memory_gb(),
            "runs": runs,
            "outputs": outputs,
        },
        data,
    )


class Phases:
    """Seconds per phase of the run, in order, for the report: where the budget went."""

    def __init__(self, started: float) -> None:
        self.last = started
        self.spent: dict[str, float] = {}

    def done(self, phase: str) -> None:
        now = time.time()
        self.spent[phase] = round(self.spent.get(phase, 0.0) + now - self.last, 1)
        self.last = now


def fit_cuts(finals: dict[str, Path], runs: dict[str, dict], pages: Path, threads: int) -> dict:
    """Choose the fine-tuned models' thresholds on the validation pages and write them into their
    folders (before the export, which builds the detector's threshold into its graph): the detector's
    score cut when it was trained, the recognizer's `min_confidence` when it was. Returns the pair's
    scores at the chosen cuts."""
    from ocrkit.finetune.scoring import CONFIDENCE_CUTS, DETECTOR_CUTS, score_pair_choosing_cuts
    from ocrkit.hub.model_folder import read_spec

    det_cuts: tuple[float | None, ...] = (None,)
    if "detector" in runs:
        own = read_spec(finals["detector"], "detector").post.score_threshold
        det_cuts = tuple(sorted({*DETECTOR_CUTS, own}))
        set_setting(finals["detector"], "detector", "score_threshold", det_cuts[0])
    own_cut = read_spec(finals["recognizer"], "recognizer").min_confidence or 0.0
    confidence_cuts = CONFIDENCE_CUTS if "recognizer" in runs else (own_cut,)
    cuts, after = score_pair_choosing_cuts(
        finals["detector"], finals["recognizer"], pages, threads, det_cuts, confidence_cuts
    )
    if cuts.det_score is not None:
        set_setting(finals["detector"], "detector", "score_threshold", cuts.det_score)
        runs["detector"]["score_threshold"] = cuts.det_score
        say(f"detector: keeps boxes scored {cuts.det_score} or more (lowest page CER on these pages)")
    if "recognizer" in runs:
        set_setting(finals["recognizer"], "recognizer", "min_confidence", cuts.min_confidence or None)
        runs["recognizer"]["min_confidence"] = cuts.min_confidence
        say(f"recognizer: pages drop lines read less sure than {cuts.min_confidence} (the same pages)")
    say(f"fine-tuned pair on the same {after['pages']} pages: " + _pair_line(after))
    return after


def time_pairs(
    starts: dict[str, Path], finals: dict[str, Path], pages: Path, threads: int, before: dict
) -> dict[str, float]:
    """Seconds per page of the start pair and the fine-tuned pair, reading the same pages in turns."""
    from ocrkit.finetune.scoring import time_side_by_side

    count = min(TIMED_PAGES, before["pages"])
    pairs = {
        "before": (starts["detector"], starts["recognizer"]),
        "after": (finals["detector"], finals["recognizer"]),
    }
    timing = time_side_by_side(pairs, pages, threads, count, TIMED_ROUNDS)
    say(
        f"speed, the two pairs in turns on {count} page(s): {timing['before']:.2f} s/page before, "
        f"{timing['after']:.2f} s/page after"
    )
    return {**{k: round(v, 3) for k, v in timing.items()}, "pages": count, "rounds": TIMED_ROUNDS}


def score_test(starts: dict[str, Path], finals: dict[str, Path], pages: Path, threads: int) -> dict:
    """Both pairs on the test pages, once: the only scores in the report no choice was made on."""
    from ocrkit.finetune.scoring import score_pair

    scores = {}
    for side, pair in (("before", starts), ("after", finals)):
        scores[side] = score_pair(pair["detector"], pair["recognizer"], pages, threads)
        say(f"{side} on {scores[side]['pages']} test pages: " + _pair_line(scores[side]))
    return scores


def page_count(coco_path: Path | None) -> int:
    """Pages in a COCO file (0 for none)."""
    if coco_path is None:
        return 0
    return len(json.loads(coco_path.read_text(encoding="utf-8"))["images"])


def peak_memory_gb() -> dict[str, float]:
    """Peak resident memory of this process and of the largest finished worker process, in GB."""
    import resource

    def gb(who: int) -> float:
        return round(resource.getrusage(who).ru_maxrss / 1024**2, 2)  # Linux reports KiB

    return {"main": gb(resource.RUSAGE_SELF), "largest_worker": gb(resource.RUSAGE_CHILDREN)}


def check_out_dir(out: Path) -> None:
    """OUT must be new or empty: a run never mixes its files with an earlier one's."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OcrkitError(f"--out {out}: exists and is not empty; choose a new folder")
    source_tree = zoo.MODELS_DIR.parent  # the package folder
    if out.resolve() == source_tree or source_tree in out.resolve().parents:
        raise OcrkitError(f"--out {out}: inside the ocrkit package; choose a folder outside it")


def trainable(only: str | None, data: UserData) -> list[Model]:
    """The models this data can train (`only` narrows them): pages with boxes for the detector, line
    crops for the recognizer, each with its validation split."""
    wanted = {"det": ["detector"], "rec": ["recognizer"], None: list(KINDS)}[only]
    kinds: list[Model] = []
    for kind in wanted:
        have = (
            (data.train_pages, data.val_pages) if kind == "detector" else (data.train_lines, data.val_lines)
        )
        if all(p is not None for p in have):
            kinds.append(kind)
        elif only is not None or kind == "recognizer":
            raise OcrkitError(f"the imported data has no {kind} training and validation set")
        else:
            say("the data holds no pages with line boxes: only the recognizer is trained")
    return kinds


def plan_jobs(
    kinds: list[Model],
    recipes: dict,
    starts: dict[str, Path],
    data: UserData,
    work: Path,
    req: TrainRequest,
    threads: int,
    parallel: bool,
    end: float,
) -> list[Job]:
    """One Job per model: its config (recipe + start folder + data), threads and deadline."""
    now = time.time()
    if end - now < MIN_TRAIN_SECONDS:
        raise OcrkitError(
            f"--minutes {req.minutes:g}: after the import and the start scores, {max(0, end - now):.0f} s "
            "are left for training; give a larger budget"
        )
    side = parallel and len(kinds) > 1
    per_model = max(1, threads // len(kinds)) if side else threads
    jobs, start_at = [], now
    for i, kind in enumerate(kinds):
        recipe, mixing = recipes[kind]
        share = 1.0 if side else 1.0 / (len(kinds) - i)  # sequential: an equal part of what is left
        count = mixing.count(req.minutes)
        synth_dir = synthetic_cache(kind, count, SYNTH_SEED)
        synth_file = synth_dir / ("coco.json" if kind == "detector" else "lines.jsonl")
        own = (data.train_pages, data.val_pages) if kind == "detector" else (data.train_lines, data.val_lines)
        synth = str(synth_file) if count else None
        config = build_config(kind, recipe, starts[kind], (str(own[0]), str(own[1])), synth, mixing, work)
        config.train.torch_threads = per_model
        deadline = end if side else start_at + (end - start_at) * share
        jobs.append(Job(kind, config, per_model, deadline, count, synth_dir, req.out / LOG))
        if not side:
            start_at = deadline
    return jobs


def build_config(
    kind: Model,
    recipe: dict,
    start: Path,
    data: tuple[str, str],
    synth: str | None,
    mixing: Mixing,
    work: Path,
) -> Any:
    """One model's training config (recipe + `--set` overrides + start folder + data); a bad recipe
    value is one error line naming the model."""
    build = detector_config if kind == "detector" else recognizer_config
    try:
        return build(recipe, start, *data, synth, mixing.synth_weight, work / kind)
    except ConfigError as exc:
        raise OcrkitError(f"{kind} recipe: {exc}") from None


def check_before_import(req: TrainRequest, recipes: dict, starts: dict[str, Path]) -> None:
    """What would otherwise stop the run only after the import and the start scores (and leave --out
    non-empty, so that the corrected command is refused): a budget that cannot hold the fixed costs, or
    is beyond any real run, and recipe values that do not make a config."""
    fixed = EXPORT_SECONDS + MIN_TRAIN_SECONDS
    if req.minutes * 60 * (1 - SAFETY) < fixed:
        raise OcrkitError(
            f"--minutes {req.minutes:g}: the export and the shortest training need {fixed / 60:.1f} "
            "minutes or more; give a larger budget"
        )
    if req.minutes > MAX_MINUTES:
        raise OcrkitError(f"--minutes {req.minutes:g}: at most {MAX_MINUTES} (a week)")
    for kind, (recipe, mixing) in recipes.items():
        build_config(kind, recipe, starts[kind], ("train", "val"), None, mixing, req.out / "work")


def run_jobs(jobs: list[Job], parallel: bool) -> dict[str, dict]:
    """Run the jobs (in worker processes side by side, or here one after the other)."""
    if parallel and len(jobs) > 1:
        return dict(zip((job.kind for job in jobs), side_by_side(fit_job, jobs), strict=True))
    return {job.kind: fit_job(job) for job in jobs}


def side_by_side(fn: Callable[[T], R], items: list[T]) -> list[R]:
    """fn(item) for every item, each in its own spawned worker process. SIGTERM is taken as Ctrl-C
    while they run, and any way out but their results ends the workers: a supervisor (or `timeout`)
    signals only this process, and the workers would otherwise train on, orphaned, into a run that is
    gone and then wait for ever for a parent that will not read their results."""
    pool = ProcessPoolExecutor(len(items), mp_context=get_context("spawn"))
    in_main = threading.current_thread() is threading.main_thread()  # signal handlers live there only
    previous = signal.signal(signal.SIGTERM, _interrupt) if in_main else None
    try:
        futures = [pool.submit(fn, item) for item in items]
        return [future.result() for future in futures]
    except BaseException:
        for process in list((pool._processes or {}).values()):  # no public way before Python 3.14
            process.terminate()
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        pool.shutdown(wait=True, cancel_futures=True)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def fit_job(job: Job) -> dict:
    """Render the job's synthetic data, then train until its deadline (in a worker process or here)."""
    if not isinstance(sys.stdout, StampedLines):  # a worker process: stamp and log as the run does
        with stamped_output(job.log):
            return _fit(job)
    return _fit(job)


def _fit(job: Job) -> dict:
    import torch

    from ocrkit.engine.trainer import Trainer
    from ocrkit.util.config import to_dict

    torch.set_num_threads(job.threads)
    if job.synth:
        render_synthetic(job)
    if job.kind == "detector":
        from ocrkit.detection.task import DetectionTask as TaskClass
    else:
        from ocrkit.recognition.task import RecognitionTask as TaskClass
    task = TaskClass(job.config)
    job.config.train.fit_minutes = max(0.05, (job.deadline - time.time()) / 60)
    trainer = Trainer(task, job.config.train, config=to_dict(job.config), name=job.kind)
    trainer.fit()
    out = Path(job.config.train.out_dir)
    best = out / "best"
    return {
        "dir": str(best if best.is_dir() else out / "model"),
        "summary": trainer.summary,
        "evals": trainer.evals,
        "synthetic": job.synth,
        "threads": job.threads,
    }


def render_synthetic(job: Job) -> None:
    """The synthetic pages or lines of the job's mixture, rendered into the cache unless they are there."""
    from ocrkit.data.synth import generate_lines, generate_pages

    t = time.time()
    make = generate_pages if job.kind == "detector" else generate_lines
    what = "pages" if job.kind == "detector" else "lines"
    if (job.synth_dir / COMPLETE).is_file():
        say(f"{job.kind}: {job.synth} synthetic {what} from the cache ({job.synth_dir})")
        return
    part = job.synth_dir.with_name(f"{job.synth_dir.name}.part-{os.getpid()}")
    shutil.rmtree(part, ignore_errors=True)
    make(part, job.synth, seed=SYNTH_SEED, progress=False)
    (part / COMPLETE).write_text("", encoding="utf-8")
    try:
        part.rename(job.synth_dir)
    except OSError:  # another run rendered the same set first: its copy is as good
        shutil.rmtree(part, ignore_errors=True)
    say(f"{job.kind}: {job.synth} synthetic {what} rendered in {time.time() - t:.0f} s (kept for later runs)")


def synthetic_cache(kind: Model, count: int, seed: int) -> Path:
    """Where a job's synthetic set lives: seeded renders come out the same every run, so each set (kind,
    count, seed, generator code) is rendered once per machine and read from the cache after that. Under
    load, rendering took 3.3 minutes of a 30-minute budget."""
    from ocrkit.data import synth

    digest = hashlib.sha256()
    for source in sorted(Path(synth.__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return zoo.cache_root() / "synthetic" / f"{kind}-{count}-seed{seed}-{digest.hexdigest()[:12]}"


def set_setting(folder: Path, kind: Model, key: str, value: object) -> None:
    """Write one reading setting into a model folder's ocrkit.json."""
    from ocrkit.hub.model_folder import read_spec, with_settings, write_spec

    spec = read_spec(folder, kind)
    write_spec(folder, with_settings(spec, {key: value}, folder))


def ship_best(kind: Model, run: dict, dst: Path) -> Path:
    """The kept model (best by validation) as an fp16 folder at `dst`. A recognizer with a CTC head
    reads with the decoding (attention, ctc, joint) that scored best at the kept step: on a new hand the
    TrOCR decoder may adapt faster than the CTC head that joint decoding also trusts."""
    from ocrkit.finetune.report import kept_eval
    from ocrkit.hub.model_folder import read_spec, with_settings
    from ocrkit.hub.shipping import ship

    trained = Path(run["dir"])
    spec = read_spec(trained)
    scores = {name: kept_eval(run).get(f"cer_{name}") for name in ("attention", "ctc", "joint")}
    scores = {name: cer for name, cer in scores.items() if cer is not None}
    if kind == "recognizer" and scores:
        best = min(scores, key=lambda name: (scores[name], name != spec.decoding))
        run["decoding"] = best
        if best != spec.decoding:
            say(
                f"recognizer: reads with {best} decoding (validation CER {scores[best]:.4f}, "
                f"{spec.decoding} {scores[spec.decoding]:.4f})"
            )
            spec = with_settings(spec, {"decoding": best}, trained)
    return ship(trained, dst, spec)


def export_models(folders: dict[str, Path], out: Path) -> dict[str, str]:
    """ONNX exports of the fine-tuned folders (for `--backend onnx`); a missing extra is a warning."""
    try:
        for module in zoo.EXPORT_MODULES:
            from ocrkit.util.extras import require

            require(module, "export", "exporting the fine-tuned models to ONNX")
    except OcrkitError as exc:
        print(f"warning: {exc}; no ONNX export written", file=sys.stderr)
        return {}
    import contextlib
    import warnings

    from ocrkit.export.detector import export_detector
    from ocrkit.export.recognizer import export_recognizer

    done = {}
    out.mkdir(parents=True, exist_ok=True)
    # the exporters' own messages (tracer warnings, tolerance checks) go to a log, not the console
    with open(out / "export.log", "w", encoding="utf-8") as log, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind, folder in folders.items():
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                (export_detector if kind == "detector" else export_recognizer)(folder, out / kind)
            done[f"onnx_{kind}"] = str(out / kind)
    say(f"ONNX export: {', '.join(done.values())} (messages in {out / 'export.log'})")
    return done


def _pair_line(scores: dict) -> str:
    return (
        f"line F1 {scores['f1']:.3f}, page CER {scores['cer']:.3f}, BoW F1 {scores['bow_f1']:.3f}, "
        f"{scores['s_per_page']:.2f} s/page"
    )
