"""`ocrkit data prepare`: import every listed public source found in a folder of clones, with a data card.

The sources file (configs/data/sources.yaml) is data: repository, pinned commit, licence, formats, include
and exclude globs, markup rules and subset name per source. A clone is found as `owner+name` or `name`.
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ocrkit.data.ground_truth.importer import (
    Annotation,
    Importer,
    ImportSettings,
    check_subset,
    find_annotations,
)
from ocrkit.data.ground_truth.phash import NearDuplicates
from ocrkit.data.ground_truth.text_rules import DEFAULT_MARKUP, TextRules
from ocrkit.pages.outputs import write_atomic
from ocrkit.util.errors import InputError, OcrkitError

REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")  # owner/name, as GitHub spells them


@dataclass
class Source:
    repo: str  # owner/name on GitHub
    commit: str
    license: str
    subset: str
    include: list[str] = field(default_factory=lambda: ["**"])  # globs relative to the clone
    exclude: list[str] = field(default_factory=list)
    format: str = "auto"
    split_by: str = "file"
    case_sensitive: bool = True
    rules: dict = field(default_factory=dict)  # TextRules fields: replace, strip, drop, markup
    note: str = ""


def load_sources(path: str | Path) -> list[Source]:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, f"cannot read sources file ({exc})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("sources"), list):
        raise InputError(path, "expected a mapping with a 'sources' list")
    try:
        sources = [Source(**entry) for entry in raw["sources"]]
    except TypeError as exc:
        raise InputError(path, f"bad source entry ({exc})") from None
    for source in sources:
        if not isinstance(source.repo, str) or not REPO.fullmatch(source.repo) or ".." in source.repo:
            raise InputError(path, f"bad source entry (repo {source.repo!r}: expected owner/name)")
        try:
            check_subset(source.subset)
        except OcrkitError as exc:
            raise InputError(path, f"bad source entry ({exc})") from None
    return sources


def find_clone(clones: Path, repo: str) -> Path | None:
    owner, name = repo.split("/", 1)
    for candidate in (clones / f"{owner}+{name}", clones / name):
        if candidate.is_dir():
            return candidate
    return None


def selected_files(clone: Path, source: Source) -> tuple[list[Annotation], Counter]:
    """Annotation files under the clone that match the include globs and none of the exclude globs."""

    def keep(path: Path) -> bool:
        rel = path.relative_to(clone).as_posix()
        return any(fnmatch.fnmatch(rel, g) for g in source.include) and not any(
            fnmatch.fnmatch(rel, g) for g in source.exclude
        )

    return find_annotations([clone], source.format, keep)


def clone_commit(clone: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def prepare(
    sources_file: str | Path,
    clones: str | Path,
    out: str | Path,
    reserved: set[str],
    near: NearDuplicates | None = None,
) -> Importer:
    """Import each source present in `clones` into `out`; write out/DATA_CARD.md. Returns the importer.
    `near`: perceptual hashes of the reserved pages, whose resized, re-encoded, bordered or turned copies
    are refused too."""
    clones, out = Path(clones), Path(out)
    importer = Importer(out, reserved, near=near)
    rows = []
    for source in load_sources(sources_file):
        clone = find_clone(clones, source.repo)
        if clone is None:
            print(f"{source.repo}: no clone in {clones}; skipped")
            continue
        commit = clone_commit(clone)
        if source.commit and commit and not commit.startswith(source.commit):
            importer.warn(f"{clone}: at {commit[:12]}, the sources file pins {source.commit[:12]}")
        before = _snapshot(importer)
        started = time.perf_counter()
        rules = TextRules(
            **{"markup": DEFAULT_MARKUP, **source.rules, "case_sensitive": source.case_sensitive}
        )
        settings = ImportSettings(
            source=f"{source.repo}@{(commit or source.commit)[:12]}",
            license=source.license,
            subset=source.subset,
            fmt=source.format,
            rules=rules,
            split_by=source.split_by,
            root=clone,
        )
        files, refused = selected_files(clone, source)
        importer.summary.failed.update(refused)
        importer.add(files, settings)
        rows.append(
            (
                source,
                commit or source.commit,
                _delta(before, _snapshot(importer)),
                time.perf_counter() - started,
            )
        )
        print(
            f"{source.repo}: {rows[-1][2]['pages']} pages, {rows[-1][2]['lines']} lines ({rows[-1][3]:.0f} s)"
        )
    importer.finish()
    write_atomic(out / "DATA_CARD.md", data_card(rows, importer))
    return importer


def _snapshot(importer: Importer) -> dict:
    return importer.summary.totals()


def _delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in after}


def data_card(rows: list, importer: Importer) -> str:
    """Markdown: per source pages, lines, characters, licence, and what was dropped or refused."""
    out = [
        "# Imported real ground truth",
        "",
        "Written by `ocrkit data prepare`. Pages are split into train/val by document (a hash of the path).",
        "",
        "| subset | source @ commit | licence | pages | line boxes | line crops | characters | refused "
        "(reserved) | duplicates | unreadable | dropped lines |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for source, commit, d, _ in rows:
        out.append(
            f"| {source.subset} | `{source.repo}` @ `{commit[:12]}` | {source.license} | {d['pages']} | "
            f"{d['boxes']} | {d['lines']} | {d['chars']} | {d['refused']} | {d['duplicates']} | "
            f"{d['failed']} | {d['dropped']} |"
        )
    out += ["", "Dropped lines by reason (all sources):", ""]
    out += [f"- {reason}: {n}" for reason, n in sorted(importer.summary.dropped.items())] or ["- none"]
    notes = [f"- `{s.repo}`: {s.note}" for s, *_ in rows if s.note]
    if notes:
        out += ["", "Notes:", "", *notes]
    return "\n".join(out) + "\n"
