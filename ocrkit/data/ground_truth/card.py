"""DATA_CARD.md for an import: what was taken, from where, under which licence, and what was kept out.

A trained model is only as explainable as the record of its data; `ocrkit data import` and `ocrkit finetune`
write this card beside the manifests, `ocrkit data prepare` its own per-source card (sources.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from ocrkit.data.ground_truth.importer import Importer, ImportSettings


def import_card(importer: Importer, settings: Sequence[ImportSettings], reserved: str) -> str:
    """Markdown: per subset its source, licence and counts by split; then what was refused or dropped.
    `reserved` says which reserved list guarded the import (or that none did)."""
    s = importer.summary
    by_subset = {st.subset: st for st in settings}
    out = [
        "# Imported ground truth",
        "",
        "Pages are split into train and val by document, never by line.",
        "",
        "| subset | source | licence | train documents | val documents | pages | line boxes | line crops "
        "| characters |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for subset in sorted(set(s.pages) | set(s.lines)):
        st = by_subset.get(subset, ImportSettings())
        out.append(
            f"| {subset} | {st.source or '–'} | {st.license or '–'} | {s.documents[subset, 'train']} | "
            f"{s.documents[subset, 'val']} | {s.pages[subset]} | {s.boxes[subset]} | {s.lines[subset]} | "
            f"{s.chars[subset]} |"
        )
    out += [
        "",
        f"- Reserved list: {reserved}",
        f"- Refused as reserved for evaluation (identical or resized/re-encoded copies): {s.refused}",
        f"- Duplicates skipped: {s.duplicates}; unreadable files: {sum(s.failed.values())}",
    ]
    out += [f"- Dropped lines, {reason}: {n}" for reason, n in sorted(s.dropped.items())]
    return "\n".join(out) + "\n"
