"""What a page command tells its user while it works: which models it loads, each finished page (a
bar on a terminal, a plain line per page in a log), and one closing summary."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from ocrkit.pages.document import Page

BACKEND_NAMES = {"onnx": "onnxruntime", "torch": "torch"}


def say(message: str, stream: TextIO | None = None) -> None:
    """One `ocrkit: ` line on stderr, at once (stderr may be a buffered pipe)."""
    stream = stream or sys.stderr
    print(f"ocrkit: {message}", file=stream, flush=True)


def loading_line(releases: list[str], backend: str, chosen: bool) -> str:
    """What is about to load, said before the seconds it takes; `chosen`: the backend was picked by
    "auto", so the line says how to pick the other."""
    other = "torch" if backend == "onnx" else "onnx"
    hint = f" (--backend {other} for {BACKEND_NAMES[other]})" if chosen else ""
    return f"loading {', '.join(releases)} on {BACKEND_NAMES[backend]}{hint}"


class PageProgress:
    """Counts pages as they are finished, not as they are handed over: a bar on a terminal, one plain
    line per page elsewhere (a log file stays readable); nothing for a single page."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.done, self.failed, self.lines = total, 0, 0, 0
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.bar = None
        if total > 1 and self.stream.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="page", file=self.stream)

    def finished(self, label: str, page: Page | None) -> None:
        """One page done: `page` None when it failed (its error is reported on its own)."""
        self.done += 1
        self.failed += page is None
        self.lines += len(page.lines) if page is not None else 0
        if self.bar is not None:
            self.bar.update(1)
        elif self.total > 1:
            result = "failed" if page is None else f"{len(page.lines)} lines in {page.seconds:.1f} s"
            say(f"[{self.done}/{self.total}] {label}: {result}", self.stream)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def summary(self, out: Path) -> str:
        """One line closing a run that wrote files: pages, lines, time (models loaded included), where."""
        seconds = time.perf_counter() - self.start
        read = self.done - self.failed
        per_page = f" ({seconds / read:.2f} s/page)" if read else ""
        failed_part = f", {self.failed} failed" if self.failed else ""
        return (
            f"{read} of {self.total} pages read{failed_part}, {self.lines} lines, "
            f"in {seconds:.1f} s{per_page}; written to {out}"
        )
