"""Error types the CLI turns into one clear line on stderr (no traceback unless --debug)."""

from __future__ import annotations


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
