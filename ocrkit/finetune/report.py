"""OUT/REPORT.md, OUT/report.json and OUT/learning_curves.png of an `ocrkit finetune` run.

Before and after, side by side: the pair on validation pages (line F1, page CER, bag-of-words F1, s/page),
the recognizer's CER on the annotated line boxes, the detector's line F1 during its own validation, and
the data card of what the models were trained on.
"""

from __future__ import annotations

import json
from pathlib import Path

from ocrkit.engine.curves import read_metrics, save_figure
from ocrkit.finetune.data import UserData
from ocrkit.pages.outputs import write_atomic

CURVES = "learning_curves.png"
CHOSEN_SETTINGS = (  # (model, report key, sentence): the settings a run chose for its folders
    (
        "recognizer",
        "decoding",
        "The fine-tuned recognizer reads with {} decoding, the best at its kept step.",
    ),
    (
        "recognizer",
        "min_confidence",
        "Pages drop the lines it reads less sure than {} (`min_confidence`), the cut with the lowest "
        "page CER on the validation pages above (0 keeps every line).",
    ),
    (
        "detector",
        "score_threshold",
        "The fine-tuned detector keeps boxes it scores {} or more (`score_threshold`), chosen with the cut "
        "above, on the same pages.",
    ),
)


def kept_eval(run: dict) -> dict:
    """The validation of the kept model: at the best step, else the last."""
    best = run["summary"].get("best_step")
    evals = run["evals"]
    chosen = [e for e in evals if e["step"] == best] or evals[-1:]
    return chosen[0] if chosen else {}


def model_scores(runs: dict) -> dict:
    """Per trained model: steps, pace, and its own validation at step 0 and for the kept model."""
    out = {}
    for kind, run in runs.items():
        evals = run["evals"]
        out[kind] = {
            "steps": run["summary"].get("steps"),
            "s_per_step": run["summary"].get("s_per_step"),
            "best_step": run["summary"].get("best_step"),
            "threads": run.get("threads"),
            "synthetic_items": run.get("synthetic"),
            "decoding": run.get("decoding"),
            "min_confidence": run.get("min_confidence"),
            "score_threshold": run.get("score_threshold"),
            "before": _clean(evals[0]) if evals else None,
            "after": _clean(kept_eval(run)) if evals else None,
        }
    return out


def _clean(record: dict) -> dict:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()}


def write_report(out: Path, facts: dict, data: UserData) -> dict:
    """Write the three report files; returns the report.json content."""
    runs = facts.pop("runs")
    report = {**facts, "models": model_scores(runs), "data": _data_facts(data)}
    rec = report["models"].get("recognizer")
    for side in ("before", "after"):
        if report.get(side) is not None and rec and rec[side]:
            chosen = rec["decoding"] if side == "after" and rec.get("decoding") else None
            report[side]["box_cer"] = rec[side].get(f"cer_{chosen}", rec[side].get("cer"))
    plot_curves(
        {kind: Path(run["dir"]).parent / "metrics.jsonl" for kind, run in runs.items()},
        out / CURVES,
        {kind: run["summary"].get("best_step") for kind, run in runs.items()},
    )
    write_atomic(out / "report.json", json.dumps(report, indent=2, default=str))
    write_atomic(out / "REPORT.md", markdown(report, data.card))
    return report


def _data_facts(data: UserData) -> dict:
    s = data.summary
    totals = s.totals()
    return {
        "documents": {f"{subset}/{split}": n for (subset, split), n in sorted(s.documents.items())},
        "pages": totals["pages"],
        "line_boxes": totals["boxes"],
        "line_crops": totals["lines"],
        "refused_reserved": totals["refused"],
        "duplicates": totals["duplicates"],
        "unreadable": totals["failed"],
    }


def _f(value: object, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, int | float) and not isinstance(value, bool) else "–"


def markdown(report: dict, card: str) -> str:
    """REPORT.md: the pair before and after on the validation and test pages, each model on its own
    validation, the settings chosen, where the budget went, how to use the models, the data card."""
    lines = [
        "# Fine-tuning report",
        "",
        f"Budget {report['budget_minutes']:g} min, used {report['elapsed_minutes']:g} min. Start models: "
        + ", ".join(f"{k} `{v}`" for k, v in report["start_models"].items())
        + ".",
        "",
    ]
    lines += _pair_section(report) + _test_section(report) + _models_section(report)
    lines += _run_section(report) + _usage_section(report)
    lines += card.splitlines()[2:]  # the card without its title
    return "\n".join(lines).rstrip() + "\n"


def _pair_section(report: dict) -> list[str]:
    before, after = report.get("before"), report.get("after")
    if before is None:
        return []
    lines = [
        f"## The pair on {before['pages']} validation pages",
        "",
        "| | line F1 | precision | recall | page CER | BoW F1 | CER on annotated boxes | s/page in turns |",
        "|---|---|---|---|---|---|---|---|",
    ]
    timing = report.get("timed_side_by_side") or {}
    for side, name, row in (
        ("before", "before (start models)", before),
        ("after", "after (fine-tuned)", after),
    ):
        if row is not None:
            lines.append(
                f"| {name} | {_f(row['f1'])} | {_f(row['precision'])} | {_f(row['recall'])} | "
                f"{_f(row['cer'])} | {_f(row['bow_f1'])} | {_f(row.get('box_cer'))} | "
                f"{_f(timing.get(side), 2)} |"
            )
    for caveat in _caveats(report, timing):
        lines += ["", caveat]
    return lines + [""]


def _test_section(report: dict) -> list[str]:
    test = report.get("test")
    if not test:
        return []
    lines = [
        f"## The pair on {test['before']['pages']} test pages",
        "",
        "Scored once, at the end; no step, threshold or decoding was chosen on these pages.",
        "",
        "| | line F1 | precision | recall | page CER | BoW F1 |",
        "|---|---|---|---|---|---|",
    ]
    for side, name in (("before", "before (start models)"), ("after", "after (fine-tuned)")):
        row = test[side]
        lines.append(
            f"| {name} | {_f(row['f1'])} | {_f(row['precision'])} | {_f(row['recall'])} | "
            f"{_f(row['cer'])} | {_f(row['bow_f1'])} |"
        )
    return lines + [""]


def _models_section(report: dict) -> list[str]:
    lines = [
        "## Each model on its own validation",
        "",
        "| model | steps | s/step | kept step | metric | step 0 | kept |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, m in report["models"].items():
        keys = (
            ("f1", "map50") if kind == "detector" else ("cer", "cer_attention", "cer_ctc", "cer_joint", "wer")
        )
        for key in keys:
            if key not in (m["before"] or {}):
                continue
            lines.append(
                f"| {kind} | {m['steps']} | {_f(m['s_per_step'], 2)} | {m['best_step']} | {key} | "
                f"{_f((m['before'] or {}).get(key))} | {_f((m['after'] or {}).get(key))} |"
            )
    return lines


def _run_section(report: dict) -> list[str]:
    """The settings chosen, where the budget went, peak memory and the training plan."""
    lines: list[str] = []
    for kind, key, sentence in CHOSEN_SETTINGS:
        value = report["models"].get(kind, {}).get(key)
        if value is not None and value != "":
            lines += ["", sentence.format(value)]
    phases = report.get("phases_seconds") or {}
    if phases:
        spent = ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in phases.items())
        lines += ["", f"Where the budget went: {spent}."]
    memory = report.get("peak_memory_gb") or {}
    if memory:
        lines += [
            "",
            f"Peak memory: {memory['main']:.1f} GB in the command, {memory['largest_worker']:.1f} GB in its "
            "largest training process.",
        ]
    plan = report["plan"]
    return lines + [
        "",
        f"Training plan: {'side by side' if plan['side_by_side'] else 'one after the other'}, "
        f"{plan['threads_per_model']} thread(s) per model; the schedules were fitted to the budget and the "
        "model kept is the best by validation (line F1 for the detector, CER for the recognizer).",
        "",
        f"![learning curves]({CURVES})",
        "",
    ]


def _usage_section(report: dict) -> list[str]:
    outputs = report["outputs"]
    det = outputs.get("detector", report["start_models"]["detector"])
    rec = outputs.get("recognizer", report["start_models"]["recognizer"])
    lines = [
        "## Using the models",
        "",
        "```bash",
        f"ocrkit infer page.png --det-model {det} --rec-model {rec}",
    ]
    if "onnx_detector" in outputs or "onnx_recognizer" in outputs:
        onnx_det = outputs.get("onnx_detector", "detector")
        onnx_rec = outputs.get("onnx_recognizer", "recognizer")
        lines.append(f"ocrkit infer page.png --backend onnx --det-model {onnx_det} --rec-model {onnx_rec}")
    return lines + ["```", "", "## Data"]


def _caveats(report: dict, timing: dict) -> list[str]:
    """What the pair table cannot show: which pages chose what, and how the speed was taken."""
    said = [
        "These validation pages also chose each model's kept step and the thresholds below, so the "
        "after-row is measured on the pages it was tuned on and flatters it; pages no choice was made on "
        "(`--test PATH`, or `ocrkit evaluate pages --gt …` later) say what the gain is."
    ]
    if timing:
        said.append(
            f"Speed: the two pairs read the same {timing['pages']} page(s) in turns, "
            f"{timing['rounds']} rounds, in one sitting (median s/page); timings taken apart on a "
            "shared machine do not compare." + _slower(report, timing)
        )
    return said


def _slower(report: dict, timing: dict) -> str:
    """Why the fine-tuned pair is slower, where it is (by more than a tenth): the lines it finds and how
    it reads them."""
    before, after = report.get("before") or {}, report.get("after") or {}
    if timing["after"] <= 1.1 * timing["before"] or not before.get("pages") or "lines_read" not in after:
        return ""
    lines_before, lines_after = before["lines_read"] / before["pages"], after["lines_read"] / after["pages"]
    decoding = report["models"].get("recognizer", {}).get("decoding")
    how = f", with {decoding} decoding" if decoding else ""
    return (
        f" The fine-tuned pair takes {timing['after'] / timing['before']:.2f}× the time per page: it reads "
        f"{lines_after:.0f} lines per validation page where the start pair read {lines_before:.0f}{how}."
    )


def plot_curves(metrics: dict[str, Path], out_png: Path, kept: dict[str, int | None] | None = None) -> None:
    """Per model: training loss and validation metric over steps, one row of panels, the kept step
    marked by a dashed line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k, p in metrics.items() if p.is_file()]
    if not kinds:
        return
    fig, axes = plt.subplots(len(kinds), 2, figsize=(9, 3 * len(kinds)), squeeze=False)
    for row, kind in zip(axes, kinds, strict=True):
        train, evals = read_metrics(metrics[kind])
        row[0].plot([r["step"] for r in train], [r["loss"] for r in train], lw=0.8)
        row[0].set_title(f"{kind}: training loss")
        key = "f1" if kind == "detector" else "cer"
        pts = [(r["step"], r["eval"][key]) for r in evals if key in r["eval"]]
        row[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3)
        row[1].set_title(f"{kind}: validation {'line F1' if key == 'f1' else 'CER'}")
        for ax in row:
            ax.set_xlabel("step")
            if (kept or {}).get(kind) is not None:
                ax.axvline(kept[kind], color="grey", ls="--", lw=0.8, label=f"kept: step {kept[kind]}")
        if (kept or {}).get(kind) is not None:
            row[1].legend(loc="best", fontsize=8)
    save_figure(fig, out_png)
