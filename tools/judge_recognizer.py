"""Judge a recognizer checkpoint against the shipped one by the release rule of the recognizer training log.

Both are read the way the shipped folder reads (its settings; the candidate's weights copied into a copy
of it, as shipping would), on the same lines, crops as given:

- unseen-source validation: a seeded sample of at most 400 lines per source of `data/unseen` (sources no
  training config reads), each source's CER weighted by its line count;
- in-source validation: a seeded sample of at most 200 lines of each `data/real/lines/<subset>_val.jsonl`,
  weighted the same way;
- development crops, reported per subset.

Score = 0.5 × unseen CER + 0.5 × in-source CER. Every subset also gets the paired standard error of the
CER difference, so that a rise can be told from noise. Writes a JSON report and prints a table.

    python tools/judge_recognizer.py runs/rec/best --out eval/judge.json [--base ocrkit/models/recognizer]
    python tools/judge_recognizer.py ocrkit/models/recognizer --set decoding=joint --out eval/judge.json
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch

from ocrkit.data.manifest import read_manifest
from ocrkit.hub.model_folder import read_spec, with_settings, write_spec
from ocrkit.images.io import PageSource, load_page
from ocrkit.recognition import load_recognizer
from ocrkit.recognition.metrics import ErrorCounts
from ocrkit.util.config import apply_overrides

WEIGHT_FILES = ("model.safetensors", "ctc_head.safetensors")


def sample(records: list[dict], limit: int, seed: int) -> list[dict]:
    """A seeded sample of at most `limit` records, in a stable order."""
    records = sorted(records, key=lambda r: r["image"])
    return records if len(records) <= limit else random.Random(seed).sample(records, limit)


def judge_sets(real: Path, unseen: Path, dev: Path | None, seed: int) -> dict[str, dict]:
    """{subset: {"part": unseen|in-source|dev, "weight": lines in the source, "lines": sampled records}}."""
    sets: dict[str, dict] = {}
    by_source: dict[str, list[dict]] = {}
    for manifest in sorted((unseen / "lines").glob("*.jsonl")):
        if manifest.stem.endswith(("_train", "_val", "_test")):
            for r in read_manifest(manifest):
                r["image"] = str(Path(r["image"]).resolve())
                by_source.setdefault(r.get("subset", manifest.stem.rsplit("_", 1)[0]), []).append(r)
    for name, records in by_source.items():
        sets[name] = {"part": "unseen", "weight": len(records), "lines": sample(records, 400, seed)}
    for manifest in sorted((real / "lines").glob("*_val.jsonl")):
        if manifest.name.startswith(("group_", "judge_")):
            continue
        records = read_manifest(manifest)
        for r in records:
            r["image"] = str(Path(r["image"]).resolve())
        if records:
            sets[manifest.stem[: -len("_val")]] = {
                "part": "in-source",
                "weight": len(records),
                "lines": sample(records, 200, seed),
            }
    if dev is not None:
        for r in read_manifest(dev):
            r["image"] = str(Path(r["image"]).resolve())
            sets.setdefault("dev_" + r["subset"], {"part": "dev", "weight": 0, "lines": []})["lines"].append(
                r
            )
    return sets


def as_shipped(base: Path, candidate: Path, into: Path, settings: list[str] | None = None) -> Path:
    """A copy of the shipped folder holding the candidate's weights and the base's settings with
    `settings` (`KEY=VALUE`, as `ocrkit models ship --set` takes them) changed: read exactly as it
    would ship. The candidate may be the base itself, to judge a change of settings alone."""
    shutil.copytree(base, into)
    for name in WEIGHT_FILES:
        if (candidate / name).exists():
            shutil.copy2(candidate / name, into / name)
    if settings:
        write_spec(into, with_settings(read_spec(into), apply_overrides({}, settings), into))
    return into


def line_errors(folder: Path, records: list[dict], batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-line (character edits, reference characters), the crops read as given."""
    recognizer = load_recognizer(folder)
    crops = [load_page(PageSource(Path(r["image"]), Path(r["image"]).name)) for r in records]
    read = recognizer.recognize(crops, batch_size=batch_size, trim_margins=False)
    edits, chars = np.zeros(len(records)), np.zeros(len(records))
    for n, (r, (text, _)) in enumerate(zip(records, read, strict=True)):
        counts = ErrorCounts()
        counts.add(r["text"], text, r.get("case_sensitive", True))
        edits[n], chars[n] = counts.char_edits, counts.ref_chars
    return edits, chars


def paired(base: np.ndarray, cand: np.ndarray, chars: np.ndarray) -> tuple[float, float]:
    """CER difference (candidate − base) on the same lines and its standard error over lines."""
    d = cand - base
    return float(d.sum() / chars.sum()), float(np.sqrt(len(d) * d.var(ddof=1)) / chars.sum())


def part_cer(rows: dict[str, dict], part: str, key: str) -> float:
    """The part's CER: each subset's CER weighted by its line count."""
    picked = [r for r in rows.values() if r["part"] == part]
    return sum(r[key] * r["weight"] for r in picked) / sum(r["weight"] for r in picked)


def subset_rows(
    sets: dict[str, dict], base_edits: np.ndarray, cand_edits: np.ndarray, chars: np.ndarray
) -> dict[str, dict]:
    """Per subset: both CERs, the paired difference and its SE, and whether it counts as worse:
    a judged subset of 20+ lines whose CER rose by more than max(0.003, 2 SE)."""
    rows: dict[str, dict] = {}
    start = 0
    for name, s in sets.items():
        end = start + len(s["lines"])
        b, c, n = base_edits[start:end], cand_edits[start:end], chars[start:end]
        diff, se = paired(b, c, n)
        rows[name] = {
            "part": s["part"],
            "weight": s["weight"],
            "lines": end - start,
            "base": float(b.sum() / n.sum()),
            "candidate": float(c.sum() / n.sum()),
            "diff": diff,
            "se": se,
            "worse": s["part"] != "dev" and end - start >= 20 and diff > max(0.003, 2 * se),
        }
        start = end
    return rows


def decide(rows: dict[str, dict]) -> tuple[dict[str, dict], bool]:
    """Both parts and the score for base and candidate; the candidate ships when its score is lower
    and no judged subset is worse."""
    summary = {}
    for key in ("base", "candidate"):
        unseen, insource = part_cer(rows, "unseen", key), part_cer(rows, "in-source", key)
        summary[key] = {"unseen": unseen, "in-source": insource, "score": 0.5 * unseen + 0.5 * insource}
    ships = summary["candidate"]["score"] < summary["base"]["score"] and not any(
        r["worse"] for r in rows.values()
    )
    return summary, ships


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("candidate", type=Path, help="checkpoint folder (model and CTC head)")
    ap.add_argument("--base", type=Path, default=Path("ocrkit/models/recognizer"))
    ap.add_argument("--real", type=Path, default=Path("data/real"))
    ap.add_argument("--unseen", type=Path, default=Path("data/unseen"))
    ap.add_argument("--dev", type=Path, help="development lines.jsonl (reported, not judged)")
    ap.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting the candidate ships with, changed from the base's (repeatable)",
    )
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    sets = judge_sets(args.real, args.unseen, args.dev, args.seed)
    records = [r for s in sets.values() for r in s["lines"]]
    with tempfile.TemporaryDirectory() as tmp:
        cand_folder = as_shipped(args.base, args.candidate, Path(tmp) / "candidate", args.settings)
        base_edits, chars = line_errors(args.base, records, args.batch_size)
        cand_edits, _ = line_errors(cand_folder, records, args.batch_size)
    rows = subset_rows(sets, base_edits, cand_edits, chars)
    summary, verdict = decide(rows)
    report = {"summary": summary, "subsets": rows, "ships": verdict, "seed": args.seed}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print("| subset | part | lines | base | candidate | diff | 2 SE |\n|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        flag = " **worse**" if r["worse"] else ""
        print(
            f"| {name} | {r['part']} | {r['lines']} | {r['base']:.4f} | {r['candidate']:.4f} | "
            f"{r['diff']:+.4f}{flag} | {2 * r['se']:.4f} |"
        )
    for key, s in summary.items():
        print(f"{key}: unseen {s['unseen']:.4f}  in-source {s['in-source']:.4f}  score {s['score']:.4f}")
    print("ships" if verdict else "does not ship")


if __name__ == "__main__":
    main()
