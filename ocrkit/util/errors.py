"""Error types the CLI turns into one clear line on stderr (no traceback unless --debug)."""

from __future__ import annotations

import sys


class OcrkitError(Exception):
    """Base class: the message is complete and user-facing."""


class InputError(OcrkitError):
    """An input file cannot be used (missing, empty, corrupt, unsupported, too large)."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


class ModelError(OcrkitError):
    """A model folder is missing, incomplete or corrupt."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)
        self.problem = problem


def report_error(message: object) -> None:
    """Print `ocrkit: error: <message>` on stderr: the one spelling of every error line, whichever part
    of ocrkit reports it. Written through tqdm, which keeps the line whole under a progress bar."""
    from tqdm.auto import tqdm

    tqdm.write(f"ocrkit: error: {message}", file=sys.stderr)


def printable(text: str) -> str:
    """`text` as valid UTF-8: bytes of a file name that are not UTF-8 (which Python keeps as lone
    surrogates) become U+FFFD, so JSON/XML outputs and messages can always be written."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")
