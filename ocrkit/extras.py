"""Optional features (the HTTP service, Ray batches) whose packages come from an install extra."""

from __future__ import annotations

import importlib
from types import ModuleType

from ocrkit.errors import OcrkitError


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import `module`, or fail with one line saying which extra to install: the core install must keep
    working without these packages, and users should not have to read an ImportError traceback."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise OcrkitError(
            f"{feature} needs the '{extra}' extra ({module} is not installed): pip install 'ocrkit[{extra}]'"
        ) from None
