"""Optional features whose packages come from an install extra (pyproject.toml's optional-dependencies):
torch inference, training, ONNX export, the HTTP service, Ray batches."""

from __future__ import annotations

import importlib
from types import ModuleType

from ocrkit.util.errors import OcrkitError

# The extra that installs each optional top-level module; a module missing from here belongs to the core
# install, so its absence is a broken install, not a choice.
EXTRA_OF_MODULE = {
    "torch": "torch",
    "transformers": "torch",
    "accelerate": "train",
    "pycocotools": "train",
    "faker": "train",
    "fontTools": "train",
    "matplotlib": "train",
    "rapidfuzz": "train",
    "pyarrow": "train",
    "torchvision": "export",
    "onnx": "export",
    "optimum": "export",
    "fastapi": "serve",
    "starlette": "serve",
    "uvicorn": "serve",
    "python_multipart": "serve",
    "multipart": "serve",
    "fastapi_offline": "serve",
    "ray": "ray",
}


def needs_extra(feature: str, extra: str, module: str) -> OcrkitError:
    """One line naming the extra to install: users should not have to read an ImportError traceback."""
    return OcrkitError(
        f"{feature} needs the '{extra}' extra ({module} is not installed): pip install 'ocrkit[{extra}]'"
    )


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import `module`, or fail with one line saying which extra to install: the core install must keep
    working without these packages."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise needs_extra(feature, extra, module) from None


def missing_extra(exc: ModuleNotFoundError, feature: str) -> OcrkitError | None:
    """The one-line error for a module that an extra installs and this install lacks; None when the
    missing module belongs to no extra (a broken install, whose traceback is the useful part)."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    return needs_extra(feature, extra, module) if extra else None
