"""Throughput and latency of `ocrkit serve` at 1, 2 and 4 concurrent clients, and pages/s of
`ocrkit infer --out` with and without `--ray`, on the same pages and models.

    python benchmarks/serve_and_ray.py                       # shipped models, ONNX, the sample pages
    python benchmarks/serve_and_ray.py --backend torch --requests 12 --copies 3

Each measurement runs the real command in its own process; the server is warmed up with one request
first. The batch rows time the whole command (start-up and model loading included), which is what a
user waits for; the Ray row also shows the rate Ray reports once its actors run.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
OCRKIT = [sys.executable, "-m", "ocrkit.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model_args(args: argparse.Namespace) -> list[str]:
    out = ["--backend", args.backend]
    if args.det_model:
        out += ["--det-model", str(args.det_model)]
    if args.rec_model:
        out += ["--rec-model", str(args.rec_model)]
    return out


def bench_server(args: argparse.Namespace, pages: list[Path]) -> None:
    port = free_port()
    cmd = [*OCRKIT, "serve", "--port", str(port), *model_args(args), "--workers", str(args.workers)]
    cmd += ["--threads", str(args.threads), "--queue", "64", "--log-level", "warning"]
    server = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=5).raise_for_status()
                break
            except httpx.TransportError:
                if server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.5)
        bodies = [(p.name, p.read_bytes()) for p in pages]

        def one(i: int) -> float:
            name, data = bodies[i % len(bodies)]
            start = time.perf_counter()
            got = httpx.post(f"{url}/v1/ocr", files={"file": (name, data)}, timeout=600)
            got.raise_for_status()
            return time.perf_counter() - start

        one(0)  # warm-up
        print(f"\nocrkit serve: {args.backend}, --workers {args.workers} --threads {args.threads}")
        print("| clients | requests | pages/s | p50 latency (s) | p95 latency (s) |\n|---|---|---|---|---|")
        for clients in args.clients:
            start = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                latencies = sorted(pool.map(one, range(args.requests)))
            wall = time.perf_counter() - start
            p95 = latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))]
            print(
                f"| {clients} | {args.requests} | {args.requests / wall:.2f} | "
                f"{statistics.median(latencies):.2f} | {p95:.2f} |",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(60)


def bench_batch(args: argparse.Namespace, pages: list[Path]) -> None:
    plain = args.plain_threads or args.threads * args.workers
    print(f"\nocrkit infer --out, {len(pages)} pages, {args.backend}, {plain} threads without Ray, ", end="")
    print(f"{args.threads} per actor with")
    print("| run | wall (s) | pages/s (wall) | reported by the command |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "without --ray": ["--threads", str(plain)],
            "--ray (local)": ["--ray", "--threads", str(args.threads)],
        }
        for n, (label, extra) in enumerate(runs.items()):
            cmd = [*OCRKIT, "infer", *map(str, pages), "--out", f"{tmp}/{n}", *model_args(args), *extra]
            start = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(done.stderr[-2000:])
            summary = [line for line in done.stderr.splitlines() if "pages read" in line]
            note = summary[-1].removeprefix("ocrkit: ") if summary else ""
            print(f"| {label} | {wall:.1f} | {len(pages) / wall:.2f} | {note} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pages", nargs="*", type=Path, help="images (default: samples/*.jpg)")
    p.add_argument("--backend", choices=("onnx", "torch"), default="onnx")
    p.add_argument("--det-model", type=Path)
    p.add_argument("--rec-model", type=Path)
    p.add_argument("--workers", type=int, default=2, help="server requests read at once")
    p.add_argument("--threads", type=int, default=1, help="CPU threads per request / per Ray actor")
    p.add_argument("--plain-threads", type=int, help="threads without --ray (default: workers × threads)")
    p.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--requests", type=int, default=8, help="requests per client count")
    p.add_argument("--copies", type=int, default=2, help="copies of each page in the batch runs")
    p.add_argument("--skip-server", action="store_true")
    p.add_argument("--skip-batch", action="store_true")
    args = p.parse_args()
    pages = args.pages or sorted((ROOT / "samples").glob("*.jpg"))
    if not args.skip_server:
        bench_server(args, pages)
    if not args.skip_batch:
        with tempfile.TemporaryDirectory() as tmp:
            copies = []
            for n in range(args.copies):
                for page in pages:
                    copies.append(Path(tmp) / f"{page.stem}-{n}{page.suffix}")
                    shutil.copy(page, copies[-1])
            bench_batch(args, copies)


if __name__ == "__main__":
    main()
