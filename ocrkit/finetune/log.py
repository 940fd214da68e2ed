"""The run's log: what `ocrkit finetune` prints, each line stamped with the clock time, also kept in a file.

A run lasts minutes to hours; a user coming back to it (or reading it after a crash) needs to know when
each phase began and ended, so every line of standard output gets the time on the console and in
OUT/train.log, and standard error is kept in the log too. Worker processes append to the same file.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


class StampedLines:
    """A text stream that writes whole lines, stamped, to a log file and (stamped or not) to a console."""

    def __init__(self, console: TextIO, log: TextIO, stamp_console: bool) -> None:
        self.console, self.log, self.stamp_console = console, log, stamp_console
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            stamp = time.strftime("%H:%M:%S")
            self.console.write(f"{stamp} {line}\n" if self.stamp_console else f"{line}\n")
            self.log.write(f"{stamp} {line}\n")
        if lines:
            self.flush()
        return len(text)

    def flush(self) -> None:
        self.console.flush()
        self.log.flush()

    def isatty(self) -> bool:
        return False  # progress bars turn into lines; a log holds no carriage returns


@contextmanager
def stamped_output(path: Path) -> Iterator[None]:
    """Standard output stamped on the console and both streams appended to `path` while inside."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as log:
        out = StampedLines(sys.stdout, log, stamp_console=True)
        err = StampedLines(sys.stderr, log, stamp_console=False)
        previous = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            yield
        finally:
            for stream, rest in ((out, out.pending), (err, err.pending)):
                if rest:
                    stream.write("\n")
            sys.stdout, sys.stderr = previous
