"""YAML configs → typed dataclasses.

A config file may name base files under `include:` (paths relative to it); later files and then
`--set key.sub=value` overrides win. Every key must exist in the dataclass schema: a typo is an
error naming the key, never a silently ignored setting.

A schema may name the settings of the model folder a run starts from (`start_folder_settings`): those
replace what the included base files say, and only the named file itself or a `--set` overrides them, so
a config that fine-tunes a shipped folder keeps its architecture and reading settings unless it sets
them on purpose.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class ConfigError(ValueError):
    """A config file or override is invalid; the message names the file/key."""


def _deep_merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def read_yaml(path: str | Path, includes: bool = True) -> dict:
    """Read a YAML file, resolving `include:` (a path or a list of paths) recursively, or (`includes`
    false) only the file's own keys."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    named = data.pop("include", []) or []
    if not includes:
        return data
    merged: dict = {}
    for inc in [named] if isinstance(named, str) else named:
        merged = _deep_merge(merged, read_yaml(path.parent / inc))
    return _deep_merge(merged, data)


def split_override(item: str) -> tuple[str, str]:
    """`--set key=value` → (key, raw value): the one syntax every `--set` option shares."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
    return key.strip(), raw


def apply_overrides(data: dict, overrides: list[str]) -> dict:
    """Apply `a.b.c=value` strings; the value is parsed as YAML (numbers, bools, lists)."""
    data = dict(data)
    for item in overrides:
        key, raw = split_override(item)
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {item!r}: {part!r} is not a section")
        try:
            node[parts[-1]] = yaml.safe_load(raw)
        except yaml.YAMLError:
            raise ConfigError(f"override {item!r}: the value is not valid YAML") from None
    return data


def _coerce(value: Any, annotation: Any, key: str) -> Any:
    origin = typing.get_origin(annotation)
    if dataclasses.is_dataclass(annotation):
        return from_dict(annotation, value, prefix=key)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if value is None:
            return None
        return _coerce(value, args[0], key) if len(args) == 1 else value
    if annotation is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if annotation is float and isinstance(value, str):  # PyYAML reads "1e4" / "1.0e4" as strings
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"{key}: expected a number, got {value!r}") from None
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if annotation in (int, float, str, bool) and not isinstance(value, annotation):
        raise ConfigError(f"{key}: expected {annotation.__name__}, got {value!r}")
    if origin in (list, tuple) and not isinstance(value, list | tuple):
        raise ConfigError(f"{key}: expected a list, got {value!r}")
    if origin is tuple:
        return tuple(value)
    return value


def from_dict(schema: type[T], data: dict | None, prefix: str = "") -> T:
    """Build dataclass `schema` from `data`; unknown keys raise ConfigError naming the full key."""
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(schema)
    names = {f.name for f in dataclasses.fields(schema)}
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(f"unknown config key '{where}{unknown[0]}' (valid: {', '.join(sorted(names))})")
    kwargs = {k: _coerce(v, hints[k], f"{prefix}.{k}" if prefix else k) for k, v in data.items()}
    return schema(**kwargs)


def load_config(schema: type[T], path: str | Path | None, overrides: list[str] | None = None) -> T:
    """Read YAML (with includes), apply `--set` overrides, validate against `schema`."""
    data = apply_overrides(read_yaml(path) if path else {}, overrides or [])
    inherit = getattr(schema, "start_folder_settings", None)
    if inherit is not None:
        inherited = inherit(data)
        if inherited:
            explicit = apply_overrides(read_yaml(path, includes=False) if path else {}, overrides or [])
            data = _deep_merge(_deep_merge(data, inherited), explicit)
    return from_dict(schema, data)


def to_dict(config: Any) -> dict:
    """Dataclass → plain dict (for saving the resolved config next to a run)."""
    return dataclasses.asdict(config)
