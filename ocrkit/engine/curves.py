"""Loss and metric curves from metrics.jsonl → one PNG (written at each evaluation)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from ocrkit.pages.outputs import write_atomic


def read_metrics(path: Path) -> tuple[list[dict], list[dict]]:
    """(training records, evaluation records) from a metrics.jsonl file."""
    train, evals = [], []
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            (evals if "eval" in rec else train).append(rec)
    return train, evals


def plot_curves(metrics_path: Path, out_png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train, evals = read_metrics(metrics_path)
    names = sorted({k for rec in evals for k in rec["eval"]})
    fig, axes = plt.subplots(1, 1 + len(names), figsize=(4 * (1 + len(names)), 3), squeeze=False)
    ax = axes[0][0]
    ax.plot([r["step"] for r in train], [r["loss"] for r in train], lw=0.8)
    ax.set_yscale("log")
    ax.set_title("train loss")
    ax.set_xlabel("step")
    for ax, name in zip(axes[0][1:], names, strict=True):
        pts = [(r["step"], r["eval"][name]) for r in evals if name in r["eval"]]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3)
        ax.set_title(name)
        ax.set_xlabel("step")
    save_figure(fig, out_png)


def save_figure(fig, out_png: Path) -> None:
    """Lay out, write as PNG atomically (a reader never sees half a picture) and release a figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=80)
    plt.close(fig)
    write_atomic(out_png, png.getvalue())
