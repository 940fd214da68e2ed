"""Lazy package attributes: a package names what it exports and from which module, and that module is
imported on first use, so importing a package never pulls in torch or transformers by itself."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]) -> tuple[list[str], Callable[[str], Any]]:
    """(`__all__`, module `__getattr__`) for a package exporting `modules[module]` names from each module."""
    home = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home[name]), name)

    return sorted(home), __getattr__
