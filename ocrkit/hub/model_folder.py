"""The model-folder contract: the settings file that travels beside a model's weights.

Every model folder (a trained torch folder, a shipped one, an ONNX export) holds `ocrkit.json`: what
the model is for, the preprocessing it was trained with, how it decodes or post-processes, and, for an
export, the names of its graphs. Inference reads the same file training wrote, so it can never resize
or threshold differently. This module is the only one that knows the file's name and layout; the rest
of ocrkit reads and writes it as a typed `DetectorSpec` or `RecognizerSpec`.

The file is one flat JSON object (older readers pick the keys they know and skip the rest):
`format_version`, `task`, then the settings. Files written before the version existed are version 0
and have the same keys, so they load unchanged. numpy-only: the torch-free runtime reads it too.
"""

from __future__ import annotations

import json
import typing
from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

import numpy as np

from ocrkit.decode.ctc import DECODINGS, CtcHead, Decoding
from ocrkit.decode.joint import CTC_ALTERNATIVES, DEFAULT_CTC_WEIGHT, JointSettings
from ocrkit.decode.read import ReadSettings
from ocrkit.decode.routing import DecoderRouting
from ocrkit.images.line_preprocess import LinePreprocess
from ocrkit.images.postprocess import PostConfig
from ocrkit.images.preprocess import PageSizing
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import ModelError

SETTINGS_NAME = "ocrkit.json"
CTC_HEAD_FILE = "ctc_head.safetensors"
FORMAT_VERSION = 1  # bump when a key changes meaning; a new optional key does not need it
Kind = Literal["detector", "recognizer", "orientation"]
# kind → the file's task
TASKS: dict[str, str] = {"detector": "detection", "recognizer": "recognition", "orientation": "orientation"}
HEADER = ("format_version", "task")
NESTED = ("sizing", "post", "preprocess", "extra", "format_version")  # spec fields that are not flat settings


@dataclass(frozen=True)
class DetectorSpec:
    """A line detector's settings: page sizing, post-processing, and the graph of an ONNX export."""

    kind: ClassVar[Kind] = "detector"
    sizing: PageSizing  # how pages are letterboxed (the file keeps its five values flat)
    arch: str | None = None  # transformers model_type, e.g. "d_fine"
    post: PostConfig = field(default_factory=PostConfig)
    onnx: str | None = None  # set in an ONNX export: its graph file (model + NMS)
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know, kept as read
    format_version: int = FORMAT_VERSION  # of the file it was read from


@dataclass(frozen=True)
class RecognizerSpec:
    """A line recognizer's settings: crop preprocessing and decoding. None: the decoder's default."""

    kind: ClassVar[Kind] = "recognizer"
    preprocess: LinePreprocess = field(default_factory=LinePreprocess)
    size: str | None = None  # the model size it was built with (recognition/model.py), for reports
    max_target_length: int | None = None  # longest training target, in tokens
    decoding: Decoding = Decoding.ATTENTION
    joint_ctc_weight: float | None = None
    joint_gate: float | None = None  # None: no gate, the decoder reads every line
    joint_alternatives: int | None = None
    ctc_head: str = CTC_HEAD_FILE  # the CTC head's weights in the folder (read by ctc and joint decoding)
    ctc_frames_per_patch: int = 1  # CTC frames each encoder patch emits (ocrkit.decode.ctc.CtcHead)
    decoder_max_chars: int | None = None  # attention decoding: longer CTC readings are kept (decode.routing)
    decoder_gate: float | None = None  # attention decoding: lines this sure in every CTC frame keep CTC's
    # attention decoding: lines in whose CTC reading no letter or digit stands keep it (decode.routing)
    decoder_needs_letters: bool = False
    min_confidence: float | None = None  # pages: lines read less sure than this are dropped (None: none)
    # pages: lines whose box overlaps a neighbour's are read again cut to their line once the page is
    # upright (ocrkit.pipeline); the other lines and the orientation are read as without it
    trim_crowded: bool = False
    # pages: lines whose box ends inside their print are read again from the box grown to where it
    # stops (ocrkit.images.box_ends), once the page is upright; kept where read at least as surely
    grow_cut_ends: bool = False
    # pages: print standing in a line's row that no box holds is read, and kept as a line where it reads
    # as text, sure (ocrkit.images.stray_ink), once the page is upright
    read_stray_print: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def read_settings(self, decoding: Decoding) -> ReadSettings:
        """How this folder reads its crops with `decoding` (chosen_decoding: its own or the caller's)."""
        joint = self.joint_settings() if decoding is Decoding.JOINT else None
        return ReadSettings(self.preprocess, decoding, joint, self.decoder_routing())

    def decoder_routing(self) -> DecoderRouting:
        """Which lines attention decoding leaves to the CTC head (none without a CTC head to read)."""
        return DecoderRouting(self.decoder_max_chars, self.decoder_gate, self.decoder_needs_letters)

    def joint_settings(self) -> JointSettings:
        """How joint decoding weighs and gates the two decoders; library defaults where unset."""
        weight, alternatives = self.joint_ctc_weight, self.joint_alternatives
        return JointSettings(
            DEFAULT_CTC_WEIGHT if weight is None else weight,
            self.joint_gate,
            CTC_ALTERNATIVES if alternatives is None else alternatives,
        )


@dataclass(frozen=True)
class OrientationSpec:
    """A page-orientation classifier's settings: how pages are cut into the windows it reads, and how
    sure it must be to turn a page (ocrkit.orientation)."""

    kind: ClassVar[Kind] = "orientation"
    arch: str = "mobilenetv3_small_050"  # the timm architecture
    page_side: int = 1024  # pages scaled to this long side before windows are cut
    window: int = 128  # the square windows' side, the network's input
    windows: int = 8  # windows read per page, their votes summed
    # a page is turned on the classifier's word when it is at least this sure of the turn (1.0: never, the
    # page's lines settle the direction), and turned for its lines to settle when this sure of the axis
    min_confidence: float = 0.9
    axis_confidence: float = 0.9
    onnx: str | None = None  # set in an ONNX export: its graph file
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION


def chosen_decoding(spec: RecognizerSpec, override: str | None, folder: str | Path) -> Decoding:
    """The folder's own decoding, or `override` (attention | ctc | joint); ModelError for another name."""
    if override is None:
        return spec.decoding
    if override not in DECODINGS:
        raise ModelError(folder, f"unknown decoding {override!r} ({' | '.join(DECODINGS)})")
    return Decoding(override)


def load_ctc_head(folder: str | Path, spec: RecognizerSpec) -> CtcHead:
    """The CTC head a recognizer folder holds (float32); ModelError naming the file when absent or broken."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    path = Path(folder) / spec.ctc_head
    if not path.is_file():
        raise ModelError(folder, f"decoding reads the CTC head but {spec.ctc_head} is missing")
    try:
        tensors = load_file(str(path))
        weight, bias = tensors["weight"].astype(np.float32), tensors["bias"].astype(np.float32)
    except (OSError, KeyError, SafetensorError) as exc:
        raise ModelError(path, f"unreadable CTC head ({exc.__class__.__name__}: {exc})") from None
    if weight.ndim != 2 or weight.shape[0] % spec.ctc_frames_per_patch or bias.shape != weight.shape[:1]:
        raise ModelError(path, f"CTC head of shape {weight.shape} does not fit ctc_frames_per_patch")
    return CtcHead(weight, bias, spec.ctc_frames_per_patch)


def folder_ctc_head(folder: str | Path, spec: RecognizerSpec, decoding: Decoding) -> CtcHead | None:
    """The CTC head to read with: required by ctc and joint decoding; with attention decoding loaded when
    the folder has one, because lines wider than the preprocessing's `longest` are read by CTC windows."""
    if decoding.reads_head or (Path(folder) / spec.ctc_head).is_file():
        return load_ctc_head(folder, spec)
    return None


Spec = DetectorSpec | RecognizerSpec | OrientationSpec


def spec_path(folder: str | Path) -> Path:
    """Where a folder's settings live (to hash them with the weights as the folder's version)."""
    return Path(folder) / SETTINGS_NAME


def has_spec(folder: str | Path) -> bool:
    """Whether `folder` holds settings at all (a finished export, an installed model), unvalidated."""
    return spec_path(folder).is_file()


@overload
def read_spec(folder: str | Path, kind: Literal["detector"]) -> DetectorSpec: ...
@overload
def read_spec(folder: str | Path, kind: Literal["recognizer"]) -> RecognizerSpec: ...
@overload
def read_spec(folder: str | Path, kind: Literal["orientation"]) -> OrientationSpec: ...
@overload
def read_spec(folder: str | Path, kind: None = None) -> Spec: ...
def read_spec(folder: str | Path, kind: Kind | None = None) -> Spec:
    """The folder's settings as a spec (of `kind`, when given); ModelError naming the folder otherwise.

    A file with a newer `format_version` than this ocrkit knows is refused: its keys may mean something
    else now. Unknown keys in a supported version are kept in `extra`, not refused: version-0 files
    carry whatever their writer put there, and a newer ocrkit may add an optional setting without a new
    version (an older reader may skip it). Kept, a rewrite (shipping, export) never drops them silently.
    """
    folder = Path(folder)
    path = spec_path(folder)
    if not path.is_file():
        what = "model folder not found" if not folder.is_dir() else f"{SETTINGS_NAME} is missing"
        raise ModelError(folder, what if kind is None else f"not a {kind} model folder: {what}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(folder, f"{SETTINGS_NAME} is not valid JSON ({exc})") from None
    spec = spec_from_settings(data, folder)
    if kind is not None and spec.kind != kind:
        raise ModelError(folder, f"not a {TASKS[kind]} model ({SETTINGS_NAME} says task {data['task']!r})")
    return spec


def write_spec(folder: str | Path, spec: Spec) -> Path:
    """Write the folder's settings in the current format, atomically (a reader never sees half a file)."""
    path = spec_path(folder)
    write_atomic(path, json.dumps(settings_of(spec), indent=2) + "\n")
    return path


@overload
def check_folder(folder: str | Path, kind: Literal["detector"]) -> DetectorSpec: ...
@overload
def check_folder(folder: str | Path, kind: Literal["recognizer"]) -> RecognizerSpec: ...
@overload
def check_folder(folder: str | Path, kind: Literal["orientation"]) -> OrientationSpec: ...
def check_folder(folder: str | Path, kind: Kind) -> Spec:
    """The spec of a complete `kind` folder, torch or ONNX export; else one ModelError naming the problem.

    Checked before any weights load, so a wrong or incomplete folder fails with a clear message rather
    than deep inside transformers or onnxruntime.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelError(folder, f"{kind} model folder not found")
    spec = read_spec(folder, kind)
    if isinstance(spec, DetectorSpec):
        needed = [spec.onnx] if spec.onnx else ["config.json", "model.safetensors"]
    elif isinstance(spec, OrientationSpec):
        needed = [spec.onnx or "model.safetensors"]
    elif any(folder.glob("*.onnx")):  # an export: graphs, their config and the tokenizer
        needed = ["config.json", "tokenizer.json"]
    else:
        needed = ["config.json"] + ([] if any(folder.glob("*.safetensors")) else ["model.safetensors"])
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise ModelError(folder, f"{kind} model folder is missing {', '.join(missing)}")
    return spec


def setting_names(spec: Spec) -> list[str]:
    """Every setting a spec of this kind can hold, as spelled in the file."""
    return [k for k in settings_of(replace(spec, extra={}), keep_unset=True) if k not in HEADER]


def with_settings(spec: Spec, changes: dict[str, Any], folder: str | Path) -> Spec:
    """`spec` with some settings replaced (spelled as in the file), validated like a read. A key that
    is no setting of this kind is an error naming `folder`: a typo must not ship a setting nothing reads."""
    unknown = sorted(set(changes) - set(setting_names(spec)))
    if unknown:
        known = ", ".join(setting_names(spec))
        raise ModelError(folder, f"{', '.join(unknown)}: not a {spec.kind} setting (known: {known})")
    return spec_from_settings({**settings_of(spec), **changes}, folder)


def settings_of(spec: Spec, keep_unset: bool = False) -> dict[str, Any]:
    """The flat mapping the file holds; unset (None) settings are left out so the reader's default
    applies, unless `keep_unset`."""
    if isinstance(spec, DetectorSpec):
        body = {"arch": spec.arch, **asdict(spec.sizing), **asdict(spec.post), "onnx": spec.onnx}
    elif isinstance(spec, OrientationSpec):
        body = {f.name: getattr(spec, f.name) for f in fields(OrientationSpec) if f.name not in NESTED}
    else:
        own = {f.name: getattr(spec, f.name) for f in fields(RecognizerSpec) if f.name not in NESTED}
        body = {**asdict(spec.preprocess), **own}
    body = {k: v for k, v in body.items() if keep_unset or v is not None}
    return {"format_version": FORMAT_VERSION, "task": TASKS[spec.kind], **body, **spec.extra}


def spec_from_settings(data: object, folder: str | Path) -> Spec:
    """The spec a flat settings mapping describes; ModelError (naming `folder`) for anything wrong."""
    if not isinstance(data, dict):
        raise ModelError(folder, f"{SETTINGS_NAME} must hold a JSON object")
    data = dict(data)
    version = data.pop("format_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise ModelError(folder, f"{SETTINGS_NAME}: format_version must be a whole number, got {version!r}")
    if version > FORMAT_VERSION:
        raise ModelError(
            folder,
            f"{SETTINGS_NAME} has format_version {version}, newer than this ocrkit reads "
            f"(up to {FORMAT_VERSION}): upgrade ocrkit",
        )
    task = data.pop("task", None)
    if task == TASKS["detector"]:
        if "longest" not in data:
            raise ModelError(folder, f"{SETTINGS_NAME}: a detection model needs 'longest'")
        sizing = _take(data, PageSizing, folder)
        post = _take(data, PostConfig, folder)
        own = _take(data, DetectorSpec, folder, skip=NESTED)
        return DetectorSpec(
            PageSizing(**sizing), **own, post=PostConfig(**post), extra=data, format_version=version
        )
    if task == TASKS["recognizer"]:
        preprocess = _take(data, LinePreprocess, folder)
        own = _take(data, RecognizerSpec, folder, skip=NESTED)
        cut = own.get("min_confidence")
        if cut is not None and not 0.0 <= cut < 1.0:  # a confidence is below 1: a cut of 1 or more drops all
            raise ModelError(
                folder, f"{SETTINGS_NAME}: min_confidence must be at least 0 and below 1, got {cut!r}"
            )
        return RecognizerSpec(LinePreprocess(**preprocess), **own, extra=data, format_version=version)
    if task == TASKS["orientation"]:
        own = _take(data, OrientationSpec, folder, skip=NESTED)
        for key in ("min_confidence", "axis_confidence"):
            if not 0.0 <= own.get(key, 0.0) <= 1.0:
                raise ModelError(folder, f"{SETTINGS_NAME}: {key} must be in [0, 1], got {own[key]!r}")
        return OrientationSpec(**own, extra=data, format_version=version)
    raise ModelError(
        folder, f"{SETTINGS_NAME}: unknown task {task!r} (detection | recognition | orientation)"
    )


def _take(data: dict[str, Any], cls: type, folder: str | Path, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Pop the keys of dataclass `cls` from `data`, each checked against its type hint."""
    hints = typing.get_type_hints(cls)
    return {
        f.name: _checked(data.pop(f.name), hints[f.name], f.name, folder)
        for f in fields(cls)
        if f.name not in skip and f.name in data
    }


def _checked(value: object, hint: object, key: str, folder: str | Path) -> object:
    if isinstance(hint, type) and issubclass(hint, Enum):
        names = [m.value for m in hint]
        if value not in names:
            raise ModelError(
                folder, f"{SETTINGS_NAME}: {key} must be one of {' | '.join(names)}, got {value!r}"
            )
        return hint(value)
    allowed = typing.get_args(hint) or (hint,)
    if value is None and type(None) in allowed:
        return None
    if isinstance(value, bool):
        if bool in allowed:
            return value
    elif int in allowed and isinstance(value, int):
        return value
    elif float in allowed and isinstance(value, int | float):
        return float(value)
    elif str in allowed and isinstance(value, str):
        return value
    expected = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
    raise ModelError(folder, f"{SETTINGS_NAME}: {key} must be {expected}, got {value!r}")
