"""Speed race on real pages: ocrkit (torch, onnx, onnx-int8) beside the peers, same pages, same machine.

  python benchmarks/pages.py DIR_OR_COCO [--engines ocrkit-torch,ocrkit-onnx,...] [--threads 2]
         [--det-model DIR] [--rec-model DIR] [--onnx OUT] [--onnx-int8 OUT-int8]
         [--peers ~/.cache/ocr-peers] [--peer-script run_peer.py] [--work runs/bench]

Each engine runs in its own child process (one process tree), loads its models once, warms up on one
page, then reads every page once; the table gives median s/page, peak RSS (MiB) and, when the pages
come with a COCO file that has line texts, the accuracy columns of ocrkit evaluate (line F1, page
CER in row order, bag-of-words F1). Peers (tesseract, rapidocr3) run through a harness script
(--peer-script or $OCRKIT_PEER_SCRIPT; it takes --engine NAME --threads N --out DIR IMAGES... and writes
the same JSON per page) with the Python of the venv under --peers; missing ones are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PEER_VENVS = {"tesseract": "venv-tess", "rapidocr3": "venv-rapid3"}
STAGES_FILE = "_stages.json"  # an ocrkit child's detection and recognition seconds per page


def child_ocrkit(args: argparse.Namespace) -> int:
    """Runs inside the child process: one ocrkit engine over the pages, JSON per page into --out."""
    from ocrkit.images.io import load_image
    from ocrkit.pipeline import OCR

    if args.models:
        det, rec = Path(args.models) / "detector", Path(args.models) / "recognizer"
    else:
        det, rec = args.det_model, args.rec_model  # None = the shipped defaults
    ocr = OCR(det, rec, backend=args.backend, threads=args.threads)
    images = [Path(p) for p in args.images]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ocr.read(load_image(images[0]))  # warm-up, untimed
    clock = {"orient": 0.0, "detect": 0.0, "recognize": 0.0}
    ocr.detector.predict = _timed(ocr.detector.predict, clock, "detect")
    ocr.recognizer.read_placed = _timed(ocr.recognizer.read_placed, clock, "recognize")
    # setting a page upright and level (its classifier, turn and skew estimate), and its lines read both
    # ways up where its first reading is unsure
    ocr._lines_direction = _timed(ocr._lines_direction, clock, "orient")
    ocr._upright = _timed(ocr._upright, clock, "orient")
    stages = {}
    for path in images:
        image = load_image(path)  # decode is not timed, as in the peers' harness
        clock.update(orient=0.0, detect=0.0, recognize=0.0)
        page = ocr.read(image, name=str(path))
        stages[path.stem] = dict(clock)
        (out / f"{path.stem}.json").write_text(page.to_json(), encoding="utf-8")
    (out / STAGES_FILE).write_text(json.dumps(stages), encoding="utf-8")
    return 0


def _timed(method: Callable[..., Any], clock: dict[str, float], stage: str) -> Callable[..., Any]:
    """`method`, adding its wall time to clock[stage]: a page's orientation, detection and recognition
    apart."""

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            clock[stage] += time.perf_counter() - start

    return timed


def stage_medians(out: Path) -> dict[str, float]:
    """Median seconds per page of each ocrkit stage (empty for peers, which write no stage file)."""
    path = out / STAGES_FILE
    if not path.is_file():
        return {}
    stages = json.loads(path.read_text(encoding="utf-8")).values()
    timed = [k for k in ("orient", "detect", "recognize") if all(k in s for s in stages)]
    return {f"{k}_s": statistics.median(s[k] for s in stages) for k in timed}


def run_engine(engine: str, images: list[Path], out: Path, args: argparse.Namespace) -> float | None:
    """Start one engine as a child; returns its peak RSS in MiB (None when the engine is unavailable)."""
    # each engine runs alone, so OpenMP keeps its default (active) wait policy: PASSIVE, used here at
    # first, made token-by-token decoding ~2.6x slower (threads fall asleep between tiny ops)
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    env.pop("OMP_WAIT_POLICY", None)
    if engine.startswith("ocrkit"):
        backend = "torch" if engine == "ocrkit-torch" else "onnx"
        models = {"ocrkit-onnx": args.onnx, "ocrkit-onnx-int8": args.onnx_int8}.get(engine)
        if backend == "onnx" and not models:
            print(f"skip {engine}: pass --onnx / --onnx-int8 export folders", file=sys.stderr)
            return None
        cmd = [
            sys.executable,
            __file__,
            "_child",
            "--backend",
            backend,
            "--threads",
            str(args.threads),
            "--out",
            str(out),
            *(["--models", models] if models else []),
            *(["--det-model", args.det_model] if backend == "torch" and args.det_model else []),
            *(["--rec-model", args.rec_model] if backend == "torch" and args.rec_model else []),
            *map(str, images),
        ]
    else:
        python = Path(args.peers).expanduser() / PEER_VENVS[engine] / "bin" / "python"
        if not args.peer_script or not Path(args.peer_script).is_file():
            print(f"skip {engine}: pass --peer-script (or set $OCRKIT_PEER_SCRIPT)", file=sys.stderr)
            return None
        if not python.exists():
            print(f"skip {engine}: {python} not installed", file=sys.stderr)
            return None
        cmd = [
            str(python),
            str(args.peer_script),
            "--engine",
            engine,
            "--threads",
            str(args.threads),
            "--out",
            str(out),
            *map(str, images),
        ]
    with tempfile.TemporaryFile(mode="w+") as stderr:
        child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=stderr, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, not the max over all children
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            stderr.seek(0)
            print(f"{engine} failed:\n{stderr.read()[-2000:]}", file=sys.stderr)
            return None
    return usage.ru_maxrss / 1024  # KiB on Linux


def cmd_pages(args: argparse.Namespace) -> int:
    from ocrkit.evaluation import load_coco, markdown_table, read_prediction_dir, score_subset

    src = Path(args.pages)
    coco_path = (
        src if src.suffix == ".json" else (src / "coco.json" if (src / "coco.json").is_file() else None)
    )
    if coco_path:
        images = [coco_path.parent / im["file_name"] for im in load_coco(coco_path).dataset["images"]]
    else:
        images = sorted(p for p in src.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg", ".tif"})
    rows = []
    for engine in args.engines.split(","):
        out = Path(args.work) / engine
        start = time.perf_counter()
        rss = run_engine(engine, images, out, args)
        if rss is None:
            continue
        pages = read_prediction_dir(out)
        seconds = [p.seconds for p in pages.values()]
        row = {
            "engine": engine,
            "s_per_page": statistics.median(seconds),
            "peak_rss_mib": rss,
            "wall_s": time.perf_counter() - start,
            **stage_medians(out),
        }
        if coco_path:
            s = score_subset(coco_path, pages)
            row.update(f1=s["f1"], cer=s["cer"], bow_f1=s["bow_f1"])
        rows.append(row)
    keys = [
        "engine",
        "s_per_page",
        "orient_s",
        "detect_s",
        "recognize_s",
        "peak_rss_mib",
        "f1",
        "cer",
        "bow_f1",
    ]
    print(markdown_table(rows, keys))
    Path(args.work).mkdir(parents=True, exist_ok=True)
    (Path(args.work) / "results.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    if args.record:
        from ocrkit.results import append_records, new_records

        data = coco_path.parent.name if coco_path and coco_path.name == "coco.json" else src.stem
        context = {"threads": args.threads, "cpu": cpu_name(), "pages": len(images)}
        for row in rows:
            metrics = {k: v for k, v in row.items() if k != "engine"}
            append_records(Path(args.record), new_records("speed", row["engine"], {data: metrics}, **context))
    return 0


def cpu_name() -> str:
    """The CPU's model name (Linux), so a recorded speed says what it was measured on."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_child"]:  # one engine, inside its own process (started by cmd_pages)
        c = argparse.ArgumentParser(prog="pages.py _child")
        c.add_argument("images", nargs="+")
        c.add_argument("--backend", default="torch")
        c.add_argument("--models")
        c.add_argument("--det-model")
        c.add_argument("--rec-model")
        c.add_argument("--threads", type=int, default=2)
        c.add_argument("--out", required=True)
        return child_ocrkit(c.parse_args(argv[1:]))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pages", help="a folder of page images, or a COCO json (or a folder holding coco.json)")
    p.add_argument("--engines", default="ocrkit-torch,ocrkit-onnx,ocrkit-onnx-int8,tesseract,rapidocr3")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--det-model", help="detector folder for ocrkit-torch (default: the shipped one)")
    p.add_argument("--rec-model", help="recognizer folder for ocrkit-torch (default: the shipped one)")
    p.add_argument("--onnx", help="ocrkit export output folder (fp32)")
    p.add_argument("--onnx-int8", help="ocrkit export --quantize int8 output folder")
    p.add_argument("--peers", default=os.environ.get("PEERS", "~/.cache/ocr-peers"))
    p.add_argument(
        "--peer-script",
        default=os.environ.get("OCRKIT_PEER_SCRIPT"),
        help="harness that runs a peer engine (default: $OCRKIT_PEER_SCRIPT; without it peers are skipped)",
    )
    p.add_argument("--work", default="runs/bench")
    p.add_argument("--record", help="also append each engine's row, dated, to this results file")
    return cmd_pages(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
