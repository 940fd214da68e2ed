"""What a model folder is, in a few lines a user can act on: its name and release, its version (the hash
of its weights and settings), architecture, the input it expects, and the licence conditions its
training data carries — read from the files the folder already holds (ocrkit.json, config.json and the
YAML metadata of MODEL_CARD.md: `model_name`, `license`, `data_conditions`, as on the Hugging Face hub),
so the description can never disagree with what loads.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from ocrkit.hub.model_folder import (
    SETTINGS_NAME,
    DetectorSpec,
    OrientationSpec,
    RecognizerSpec,
    Spec,
    read_spec,
)
from ocrkit.hub.zoo import open_model_file, weights_digest
from ocrkit.util.errors import ModelError

CARD_NAME = "MODEL_CARD.md"
MAX_TEXT_BYTES = 1 << 20  # a card or config.json larger than this is no description to read


@dataclass(frozen=True)
class ModelInfo:
    name: str
    kind: str
    folder: str
    release: str  # the card's `model_name` (else its title), e.g. "ocrkit line recognizer 0.3.0"
    version: str  # weights_digest: changes whenever the weights or settings do
    architecture: str
    input: str
    decoding: str  # recognizers: attention | ctc | joint; "" for a detector
    licence: str  # the card's `license` of the weights; "" without one
    data_conditions: str  # the card's `data_conditions`: what the training data's licences ask; "" without

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def describe(folder: Path) -> ModelInfo:
    """The description of a model folder (torch or ONNX export); ModelError, one line naming the folder
    or its file, if it is none or one of the files it is described from cannot be read."""
    try:
        spec = read_spec(folder)
    except RecursionError:  # the JSON reader gives up on settings nested this deep
        raise ModelError(folder, f"{SETTINGS_NAME} is not valid JSON (nested too deeply)") from None
    config = _json(folder / "config.json")
    card = _text(folder / CARD_NAME) if os.path.lexists(folder / CARD_NAME) else ""
    meta = front_matter(card)
    return ModelInfo(
        name=folder.name,
        kind=spec.kind,
        folder=str(folder),
        release=_release(card, meta),
        version=weights_digest(folder),
        architecture=_architecture(spec, config),
        input=_input(spec),
        decoding=spec.decoding if isinstance(spec, RecognizerSpec) else "",
        licence=_field(meta, "license"),
        data_conditions=" ".join(_field(meta, "data_conditions").split()),
    )


def release_name(folder: Path) -> str:
    """What a user calls the model in `folder`: its card's title ("ocrkit line detector 0.7.0"), else
    the folder's name. Cheap (no weights read): said before the models load."""
    try:
        card = _text(folder / CARD_NAME) if os.path.lexists(folder / CARD_NAME) else ""
    except ModelError:
        card = ""
    return _release(card, front_matter(card)) or str(folder)


def _release(card: str, meta: dict) -> str:
    """The card's `model_name`; for a card without one, its title (the first `# ` heading)."""
    match = re.search(r"^# (.+)$", card, re.MULTILINE)
    return _field(meta, "model_name") or (match.group(1).strip() if match else "")


def _field(meta: dict, key: str) -> str:
    value = meta.get(key)
    return str(value).strip() if value is not None else ""


def _text(path: Path) -> str:
    """A UTF-8 text file of the folder, read only if it is a regular file of at most MAX_TEXT_BYTES."""
    with open_model_file(path, MAX_TEXT_BYTES) as fh:
        try:
            return fh.read().decode("utf-8")
        except OSError as exc:
            raise ModelError(path, f"cannot read ({exc.strerror or exc})") from None
        except UnicodeDecodeError as exc:
            raise ModelError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _json(path: Path) -> dict:
    """config.json as a mapping; {} when it is absent or unreadable (the description then says less)."""
    try:
        data = json.loads(_text(path))
    except (ModelError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def front_matter(card: str) -> dict:
    """The card's YAML metadata block (a Hugging Face model card opens with one); {} without a readable
    one, so a broken block costs the licence line, not the description."""
    if not card.startswith("---"):
        return {}
    try:
        data = yaml.safe_load(card[3:].split("\n---", 1)[0])
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def _architecture(spec: Spec, config: dict) -> str:
    """The transformers class and its parts, e.g. "VisionEncoderDecoderModel (vit + trocr), size small"."""
    classes = config.get("architectures")
    classes = [str(c) for c in classes] if isinstance(classes, list) else []
    name = ", ".join(classes) or str(config.get("model_type", "unknown"))
    parts = [
        str(config[part]["model_type"])
        for part in ("encoder", "decoder")
        if isinstance(config.get(part), dict) and "model_type" in config[part]
    ]
    if isinstance(spec, DetectorSpec) and spec.arch:
        parts = [spec.arch]
    if isinstance(spec, OrientationSpec):
        return f"timm {spec.arch}, four classes (quarter turns)"
    text = f"{name} ({' + '.join(parts)})" if parts else name
    size = getattr(spec, "size", None)
    return f"{text}, size {size}" if size else text


def _input(spec: Spec) -> str:
    if isinstance(spec, OrientationSpec):
        return (
            f"gray page at long side {spec.page_side} px, the {spec.windows} "
            f"{spec.window} × {spec.window} px windows holding most letters"
        )
    if isinstance(spec, DetectorSpec):
        page = spec.sizing
        if page.square:
            return f"RGB page, letterboxed to {page.longest} × {page.longest} px"
        side = f"long side {page.longest} px"
        if page.min_short > 0 and page.max_longest > page.longest:
            side += f" (a narrow page: up to {page.max_longest} px, short side at least {page.min_short} px)"
        return f"RGB page, {side}, padded to multiples of {page.divisor}"
    pre = spec.preprocess
    colour = "grayscale" if pre.grayscale else "RGB"
    height = f", at most {pre.max_height} px high" if pre.max_height > 0 else ""
    side = f"long side at most {pre.longest} px{height}"
    if pre.windowed and pre.max_height > 0:
        side += f" (a wider line keeps that height and is read in overlapping {pre.longest}-px windows)"
    return f"{colour} line crop, {side}, padded to multiples of {pre.divisor}"
