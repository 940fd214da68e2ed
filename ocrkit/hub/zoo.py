"""The model zoo: the models ocrkit ships, the folder a model name or path stands for, and the ONNX
copies of the shipped models.

Commands and the OCR pipeline ask here which folder to load instead of knowing where models live.
The repository ships only torch weights (the ONNX graphs would triple its size), so the ONNX backend
exports a shipped model once, on first use, into a user cache folder keyed by a hash of its weights:
new shipped weights get a new export instead of a stale one.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ocrkit.hub.model_folder import Kind, has_spec, read_spec, spec_path
from ocrkit.util.errors import ModelError
from ocrkit.util.extras import require

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
# What an export imports beyond the core install (the 'export' extra); checked before any work starts.
EXPORT_MODULES = ("torch", "transformers", "torchvision", "onnx", "optimum.exporters.onnx")
DEFAULTS: dict[Kind, str] = {
    "detector": "detector",
    "recognizer": "recognizer",
    "orientation": "orientation",
}  # kind → shipped name
MODEL_OPTIONS: dict[Kind, str] = {  # the command-line option that names a folder of each kind
    "detector": "--det-model",
    "recognizer": "--rec-model",
    "orientation": "--orientation-model",
}


@dataclass(frozen=True)
class ShippedModel:
    name: str  # what `resolve` accepts instead of a path
    kind: Kind
    path: Path


def list_models() -> list[ShippedModel]:
    """The installed shipped models, by name (a folder without readable settings is none)."""
    found = []
    for folder in sorted(MODELS_DIR.iterdir()) if MODELS_DIR.is_dir() else []:
        try:
            found.append(ShippedModel(folder.name, read_spec(folder).kind, folder))
        except (ModelError, RecursionError):  # RecursionError: settings nested too deep for the JSON reader
            continue
    return found


def resolve(name_or_path: str | Path | None, kind: Kind) -> Path:
    """The folder to load as `kind`: None → the shipped default; an existing folder, or a path with a
    folder in it → that path (its loader reports what is wrong with it); otherwise the shipped model of
    that name. An existing folder wins over a shipped name, so a local folder is never shadowed. A bare
    name that is neither, but close to the name of a shipped `kind`, is a ModelError suggesting it."""
    if name_or_path is None:
        return _shipped(DEFAULTS[kind], kind)
    path = Path(name_or_path)
    if path.is_dir() or len(path.parts) != 1 or not (MODELS_DIR / path.name).is_dir():
        if len(path.parts) == 1 and not path.exists():
            _refuse_near_miss(path.name, kind)
        return path
    return _shipped(path.name, kind)


def nearest_name(name: str, names: list[str]) -> str | None:
    """The one of `names` that `name` most likely mistypes (difflib's ratio 0.6 or more), if any."""
    matches = difflib.get_close_matches(name, names, n=1)
    return matches[0] if matches else None


def _refuse_near_miss(name: str, kind: Kind) -> None:
    """A name that is no folder and no shipped model, but close to the name of a shipped `kind`, is a
    ModelError suggesting that name; any other name is left to the loader, which says it is missing."""
    match = nearest_name(name, [model.name for model in list_models() if model.kind == kind])
    if match is not None:
        raise ModelError(name, f"no such folder, nor a shipped {kind} of that name; did you mean {match!r}?")


# The files of a torch model folder's weights: one file, or the index of a sharded set.
TORCH_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")


def is_onnx_export(folder: Path) -> bool:
    """Whether `folder` holds an ONNX export (.onnx graphs and no torch weights beside them)."""
    folder = Path(folder)
    return any(folder.glob("*.onnx")) and not any((folder / name).is_file() for name in TORCH_WEIGHTS)


def refuse_onnx_export(folder: Path, remedy: str) -> None:
    """A ModelError saying what to do (`remedy`) when `folder`, about to be loaded through torch, is an
    ONNX export: transformers would otherwise fail on it with a message listing every model type it
    knows (or, for a recognizer export, on the torch weights it lacks)."""
    if is_onnx_export(folder):
        raise ModelError(folder, f"holds an ONNX export: {remedy}")


def _shipped(name: str, kind: Kind) -> Path:
    folder = MODELS_DIR / name
    if not has_spec(folder):
        if name == DEFAULTS[kind]:
            option = MODEL_OPTIONS[kind]
            raise ModelError(folder, f"no default {kind} model installed yet; pass {option} DIR")
        raise ModelError(folder, f"the shipped model {name!r} is not installed")
    read_spec(folder, kind)  # a shipped model of the other kind fails here, naming it
    return folder


def is_shipped(folder: Path) -> bool:
    """Whether `folder` is one of the shipped model folders (by place, so a linked one counts too)."""
    return Path(os.path.abspath(folder)).parent == Path(os.path.abspath(MODELS_DIR))


def onnx_ready(folder: Path, kind: Kind) -> bool:
    """Whether the ONNX backend can load `folder` without a new install: it is an export, or a shipped
    model whose export is cached or can be made here (the export extra is installed)."""
    if is_onnx_export(folder):
        return True
    if not is_shipped(folder):
        return False
    return has_spec(export_target(folder, kind)) or all(_importable(module) for module in EXPORT_MODULES)


def auto_backend(folders: dict[Kind, Path], device: str) -> str:
    """The backend "auto" stands for: onnxruntime (about 1.4x faster per page on a CPU, and the same
    readings within rounding) when every folder can go through it, else torch; torch on a GPU."""
    if device != "cpu" or not _importable("onnxruntime"):
        return "torch"
    return "onnx" if all(onnx_ready(folder, kind) for kind, folder in folders.items()) else "torch"


def _importable(module: str) -> bool:
    """Whether `module` could be imported, found without importing it (torch alone takes seconds)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing
        return False


def cache_root() -> Path:
    """$OCRKIT_CACHE, else $XDG_CACHE_HOME/ocrkit, else ~/.cache/ocrkit."""
    if os.environ.get("OCRKIT_CACHE"):
        return Path(os.environ["OCRKIT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ocrkit"


def open_model_file(path: Path, max_bytes: int | None = None):
    """`path` opened for binary reading, if it is a regular file (or a link to one) of at most
    `max_bytes`; else a ModelError naming it. Opened without blocking and checked on the open file, so
    a FIFO never hangs the reader and a link to a device such as /dev/zero is never read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ModelError(path, f"cannot read ({exc.strerror or exc})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ModelError(path, "not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        os.close(fd)
        raise ModelError(path, f"larger than {max_bytes // 1024} KB")
    return os.fdopen(fd, "rb")


def weights_digest(model_dir: Path) -> str:
    """Short content hash of a model folder's safetensors and settings: its version. Read in blocks,
    regular files only; one that cannot be read is a ModelError naming it."""
    digest = hashlib.sha256()
    for path in sorted(model_dir.glob("*.safetensors")) + [spec_path(model_dir)]:
        digest.update(path.name.encode())
        with open_model_file(path) as fh:
            try:
                while block := fh.read(1 << 20):
                    digest.update(block)
            except OSError as exc:
                raise ModelError(path, f"cannot read ({exc.strerror or exc})") from None
    return digest.hexdigest()[:16]


# The export layout per kind, part of the cache key: a runtime that needs a newer layout (the recognizer
# decoders' cross-attention mask, layout 2; the detector graph's same-line rule, layout 2, and its
# containers read by the lines around them, layout 3) gets a fresh export instead of an older cached one.
EXPORT_LAYOUTS: dict[str, int] = {"detector": 3, "recognizer": 2, "orientation": 1}


def require_exporter(kind: Kind) -> None:
    """One line naming the export extra when the shipped `kind` must be exported and cannot be here."""
    for module in EXPORT_MODULES:
        require(module, "export", f"exporting the shipped {kind} to ONNX")


def check_onnx_ready(folder: Path, kind: Kind) -> None:
    """Before anything loads: a shipped model the ONNX backend would have to export needs the extra."""
    if is_shipped(folder) and not onnx_ready(folder, kind):
        require_exporter(kind)


def export_target(model_dir: Path, kind: Kind) -> Path:
    """Where the cached export of `model_dir` lives: keyed by its weights and the export layout."""
    return cache_root() / "onnx" / f"{kind}-{weights_digest(model_dir)}-layout{EXPORT_LAYOUTS[kind]}"
