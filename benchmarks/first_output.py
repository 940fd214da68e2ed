"""The first seconds of a new user: a fresh `ocrkit infer` process on one page, beside Tesseract.

    python benchmarks/first_output.py [--page samples/synthetic_receipt.jpg] [--rounds 3] [--backend auto]

Each round starts a new process (imports, model loading, the page) and records when its first line
reached stderr (the loading line) and when its text reached stdout and it exited; rounds of ocrkit and
Tesseract alternate, so both see the same machine. The ONNX export of the shipped models is made once
before the rounds (it is cached for every later run), so the table is what every run after the first pays.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def timed(command: list[str]) -> dict[str, float]:
    """Seconds from start to the first stderr line, the first stdout bytes and the exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: dict[str, float] = {}

    def first(stream, key: str) -> None:
        if stream.read(1):
            seen[key] = time.perf_counter() - start
        stream.read()

    readers = [
        threading.Thread(target=first, args=(proc.stderr, "first stderr")),
        threading.Thread(target=first, args=(proc.stdout, "first stdout")),
    ]
    for reader in readers:
        reader.start()
    code = proc.wait()
    for reader in readers:
        reader.join()
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited with {code}")
    seen["exit"] = time.perf_counter() - start
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--page", type=Path, default=Path("samples/synthetic_receipt.jpg"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()
    ocrkit = [sys.executable, "-m", "ocrkit", "infer", str(args.page), "--backend", args.backend]
    engines = {f"ocrkit infer (--backend {args.backend})": ocrkit}
    if shutil.which("tesseract"):
        engines["tesseract PAGE stdout"] = ["tesseract", str(args.page), "stdout"]
    timed(ocrkit)  # makes the cached export if there is none yet
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, command in engines.items():
            runs[name].append(timed(command))
    print(f"{args.page}, {args.rounds} fresh processes each, median seconds")
    print("| command | first line on stderr | first text on stdout | exit |")
    print("|---|---|---|---|")
    for name, rows in runs.items():
        cells = [
            f"{statistics.median(r[key] for r in rows):.2f}" if all(key in r for r in rows) else "–"
            for key in ("first stderr", "first stdout", "exit")
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
