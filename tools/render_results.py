"""Render the README's and the model cards' result tables from results/results.jsonl.

    python tools/render_results.py            # rewrite the tables in place
    python tools/render_results.py --check    # exit 1 if a file's tables differ from the results

Each table of results/tables.yaml replaces what lies between `<!-- results:NAME -->` and
`<!-- /results:NAME -->` in its file; nothing else of the file changes. The test suite runs the check,
so a table edited by hand, or results added without rendering, fail it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

from ocrkit.results import latest, read_records

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results" / "results.jsonl"
TABLES = REPO / "results" / "tables.yaml"


def cell(newest: dict, selector: dict, fmt: str) -> str:
    """The value(s) `selector` (kind, engine, data) picks, written with `fmt`: "" where nothing was
    measured or the record lacks a field the format names; a list of data joined by " / "."""
    engine = selector["engine"]
    if isinstance(engine, dict):
        engine = engine.get(selector["kind"])
    data = selector["data"]
    values = []
    for name in data if isinstance(data, list) else [data]:
        record = newest.get((selector["kind"], engine, name))
        try:
            values.append(fmt.format(**record) if record else None)
        except KeyError:
            values.append(None)
    if not any(values):
        return ""
    return " / ".join(v or "–" for v in values)


def render_table(spec: dict, newest: dict) -> str:
    """A Markdown table: a row per `rows` entry, a column per `columns` entry, each cell chosen by the
    row's and the column's keys together (the column's win)."""
    head = [spec["corner"]] + [c["label"] for c in spec["columns"]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in spec["rows"]:
        cells = []
        for column in spec["columns"]:
            selector = {**row, **column}
            cells.append(cell(newest, selector, selector["format"]))
        lines.append("| " + " | ".join([row["label"], *cells]) + " |")
    return "\n".join(lines)


def rendered(text: str, name: str, table: str) -> str:
    """`text` with the table between its markers replaced; a file without them is an error."""
    pattern = re.compile(rf"(<!-- results:{name} -->\n)(?:.*?\n)?(<!-- /results:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"render_results: no <!-- results:{name} --> ... <!-- /results:{name} --> markers")
    return pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text)


def render_all(results: Path = RESULTS, tables: Path = TABLES, root: Path = REPO) -> dict[Path, str]:
    """Every file named in `tables`, as it reads with its tables rendered from `results`."""
    newest = latest(read_records(results))
    specs = yaml.safe_load(tables.read_text(encoding="utf-8"))
    out: dict[Path, str] = {}
    for name, spec in specs.items():
        path = root / spec["file"]
        text = out.get(path) or path.read_text(encoding="utf-8")
        out[path] = rendered(text, name, render_table(spec, newest))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="only say which files differ (exit 1 if any)")
    args = parser.parse_args()
    stale = []
    for path, text in render_all().items():
        if path.read_text(encoding="utf-8") != text:
            stale.append(path)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{path.relative_to(REPO)}: {'differs from the results' if args.check else 'tables rendered'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
