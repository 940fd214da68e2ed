"""Measurements kept as data: a results file holds one JSON object per measured subset, appended by the
tools that measure (`ocrkit evaluate --record`, `benchmarks/pages.py --record`). The tables of the README
and the model cards are rendered from it (`tools/render_results.py`), so each number is written once,
by what measured it, with its date, engine and settings.

A record: {"date", "kind" (pages | crops | speed), "engine" (what was measured, e.g. the model releases
or a peer's name), "data" (the subset), ...context (backend, threads, machine), ...metrics}. Later
records of the same kind, engine and data replace earlier ones in the tables; the file keeps them all.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

KINDS = ("pages", "crops", "speed")


def new_records(kind: str, engine: str, rows: dict[str, dict], **context: Any) -> list[dict]:
    """One record per subset of `rows` (subset name → its metrics), dated today; "all" rows are not
    measurements of a subset and are left out."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    today = dt.date.today().isoformat()
    return [
        {"date": today, "kind": kind, "engine": engine, "data": name, **context, **metrics}
        for name, metrics in rows.items()
        if not name.startswith("all")
    ]


def append_records(path: Path, records: list[dict]) -> None:
    """Append `records` to the results file, one line each (created with its folder if missing). One
    write call of whole lines: a reader never sees half a record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def read_records(path: Path) -> list[dict]:
    """Every record of a results file, in the order written."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def latest(records: list[dict]) -> dict[tuple[str, str, str], dict]:
    """The newest record per (kind, engine, data): the one a table shows."""
    return {(r["kind"], r["engine"], r["data"]): r for r in records}
