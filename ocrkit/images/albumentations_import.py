"""albumentations for ocrkit's resizing, without the torch it loads whenever torch is installed.

`import albumentations` imports its torch bridge (`albumentations.pytorch`) and so torch itself. The
ONNX runtime resizes pages and lines with albumentations but never touches torch: in a full install
that import cost 470 MiB of memory and 1 s at start (2-core AMD EPYC, torch 2.x). Imported here before
torch, albumentations skips the bridge; the bridge stays importable (`import albumentations.pytorch`).
"""

from __future__ import annotations

import sys
from types import ModuleType

BRIDGE = "albumentations.pytorch"


def import_albumentations() -> ModuleType:
    """The albumentations module; its torch bridge left out when torch is not loaded yet."""
    if "albumentations" in sys.modules or "torch" in sys.modules:
        import albumentations

        return albumentations
    sys.modules[BRIDGE] = None  # importing it raises ImportError, which albumentations passes over
    try:
        import albumentations
    finally:
        if BRIDGE in sys.modules and sys.modules[BRIDGE] is None:
            del sys.modules[BRIDGE]
    return albumentations
