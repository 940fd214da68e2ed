"""The options every command shares, declared once: their names, types, defaults and help agree across
`ocrkit infer`, `detect`, `recognize`, `serve` and the data commands, and a new command gets them by
calling the same function. They are parsed by ocrkit.util.argparse_kit.Parser.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ocrkit.decode.ctc import DECODINGS
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import Kind, read_spec
from ocrkit.pipeline import (  # the library's defaults
    BACKENDS,
    BATCH_SIZE,
    COMMAND_BACKEND,
    DEVICE,
    PAGES_PER_BATCH,
)


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """argparse type: a whole number in [low, high] (high: unbounded when None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be {high} or less, got {value}")
        return value

    parse.__name__ = "whole number"  # argparse names the type in its own messages
    return parse


positive_int = int_range(1)  # a count where 0 would fail every item or hang
non_negative_int = int_range(0)


def positive_float(text: str) -> float:
    """argparse type: a finite number above 0 (a size or a limit; infinity is no size to compute with)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text}")
    return value


def folder(text: str) -> Path:
    """argparse type: a folder to write into. It may not exist yet, but neither it nor a folder above
    it may be an existing file (it could not be created)."""
    path = Path(text)
    for above in (path, *path.parents):
        if above.exists():
            if not above.is_dir():
                where = "" if above == path else f" (in {text!r})"
                raise argparse.ArgumentTypeError(f"must be a folder, and {str(above)!r} is a file{where}")
            break
    return path


def existing_file(text: str) -> Path:
    """argparse type: a file to read, checked before any work starts."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text!r}")
    return path


def probability(text: str) -> float:
    """argparse type: a number in [0, 1) (a confidence below which something is dropped)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be at least 0 and below 1, got {text}")
    return value


def add_folder_options(group: Any, *, detector: bool = True, recognizer: bool = True) -> None:
    """--det-model / --rec-model: a model folder, or a shipped model's name."""
    for wanted, flag, kind in (
        (detector, "--det-model", "detector"),
        (recognizer, "--rec-model", "recognizer"),
    ):
        if wanted:
            group.add_argument(
                flag,
                type=Path,
                metavar="DIR_OR_NAME",
                help=f"{kind} folder, or the name of a shipped model (see `ocrkit models`); "
                f"default: the shipped {kind}",
            )


def add_provenance_options(parser: argparse.ArgumentParser, first: str) -> None:
    """How imported ground truth is read and recorded (`data import`, `train`); `first`: what the
    default subset is named after."""
    parser.add_argument("--format", default="auto", help="auto | page | alto | sroie | lines")
    parser.add_argument("--license", default="", help="licence recorded on every page and line")
    parser.add_argument(
        "--source", default="", help="provenance recorded on every page, e.g. owner/name@commit"
    )
    parser.add_argument(
        "--subset", default="", help=f"subset name of the lines (default: the first {first}'s name, printed)"
    )
    parser.add_argument(
        "--case-insensitive", action="store_true", help="transcriptions ignore the print's case"
    )


def add_model_options(
    parser: argparse.ArgumentParser,
    *,
    detector: bool = True,
    recognizer: bool = True,
    backend: bool = True,
    pages: bool = False,
) -> None:
    """The options that choose and run the models: which folders, which backend, where and how wide.

    `detector` / `recognizer`: the command loads that model; `backend`: it can read through onnxruntime
    as well as torch (commands that only have a torch path leave it out); `pages`: it reads pages in
    batches (ocrkit.pipeline.OCR.read_many)."""
    g = parser.add_argument_group("models")
    add_folder_options(g, detector=detector, recognizer=recognizer)
    if recognizer:
        g.add_argument(
            "--decoding",
            choices=DECODINGS,
            help="override the decoder the recognizer's settings choose",
        )
    if detector and recognizer:
        g.add_argument(
            "--min-confidence",
            type=probability,
            metavar="P",
            help="drop lines read less sure than this (0 keeps every line); "
            "default: the `min_confidence` of the recognizer folder's ocrkit.json (none: 0)",
        )
        g.add_argument(
            "--orientation",
            type=orientation_choice,
            default="auto",
            metavar="auto|0|90|180|270",
            help="how pages were sent: auto (default) finds out per page and reads it upright; an angle "
            "(degrees clockwise from upright) is undone on every page, 0 reads pages as they come. "
            "Boxes are always given on the page as sent",
        )
        g.add_argument(
            "--orientation-model",
            type=Path,
            metavar="DIR_OR_NAME",
            help="orientation classifier folder or shipped name; default: the shipped classifier",
        )
    if backend:
        g.add_argument(
            "--backend",
            choices=BACKENDS,
            default=COMMAND_BACKEND,
            help="auto: onnxruntime when every model can go through it (an ONNX export, or a shipped "
            "model: exported once, on first use, into the cache folder, which needs the export extra), "
            "else torch; torch or onnx to choose",
        )
    g.add_argument(
        "--device", default=DEVICE, help="torch device: cpu, cuda or cuda:N (onnx runs on the CPU)"
    )
    g.add_argument(
        "--threads",
        type=positive_int,
        help="CPU threads for the models; default: the backend's own choice (one per physical core)",
    )
    if recognizer:
        g.add_argument(
            "--batch-size", type=positive_int, default=BATCH_SIZE, help="line crops per recognizer batch"
        )
    if pages:
        g.add_argument(
            "--pages-per-batch",
            type=positive_int,
            default=PAGES_PER_BATCH,
            help="pages whose lines are recognised together (more: fuller batches, more pages in memory)",
        )


def ocr_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ocrkit.pipeline.OCR that the model options in `args` ask for, the
    backend chosen ("auto" settled here, so it can be said before loading). A model folder the chosen
    backend cannot load (an ONNX export given to torch) is refused here, in one line that names the
    option to add, before any model loads."""
    folders = model_folders(args)
    backend = zoo.auto_backend(folders, args.device) if args.backend == "auto" else args.backend
    if backend == "torch":
        for kind in ("detector", "recognizer"):
            zoo.refuse_onnx_export(folders[kind], "add --backend onnx")
    names = (
        "det_model",
        "rec_model",
        "device",
        "batch_size",
        "threads",
        "decoding",
        "min_confidence",
        "orientation",
        "orientation_model",
    )
    return {"backend": backend} | {name: getattr(args, name) for name in names}


def model_folders(args: argparse.Namespace) -> dict[Kind, Path]:
    """The folders the model options in `args` stand for (the orientation classifier only when pages
    are classified), each checked to hold settings of its kind."""
    folders: dict[Kind, Path] = {
        "detector": zoo.resolve(args.det_model, "detector"),
        "recognizer": zoo.resolve(args.rec_model, "recognizer"),
    }
    if args.orientation == "auto":
        folders["orientation"] = zoo.resolve(args.orientation_model, "orientation")
    for kind, folder in folders.items():
        read_spec(folder, kind)  # a missing or broken folder is one line now, before anything is said
    return folders


def orientation_choice(text: str) -> str | int:
    """argparse type for --orientation: auto, or a quarter turn in degrees."""
    if text == "auto":
        return text
    if text in ("0", "90", "180", "270"):
        return int(text)
    raise argparse.ArgumentTypeError(f"expected auto, 0, 90, 180 or 270, got {text!r}")
