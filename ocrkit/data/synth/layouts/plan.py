"""The page plan: which layout, what page size, what paper and ink, drawn before anything is drawn."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ocrkit.data.synth.layouts.choice import Choice

# (layout, weight): receipts dominate because SROIE is the main scored set.
KINDS = {
    "receipt": 0.38,
    "prose": 0.18,
    "table": 0.08,
    "form": 0.07,
    "letter": 0.10,
    "fraktur": 0.10,
    "handwriting": 0.09,
}


@dataclass(frozen=True)
class ReceiptPage:
    # SROIE scans are 1.4-3.2 times as tall as wide (median 2.3); narrower synthetic receipts made their
    # lines smaller after the letterbox than real ones, and the detector learnt to keep boxes short
    height: tuple[float, float] = (1000, 1800)
    aspect: tuple[float, float] = (1.7, 3.2)  # height / width
    min_width: int = 420
    paper: Choice = Choice(("thermal", "white", "tinted"), (0.5, 0.35, 0.15))
    ink: Choice = Choice(("black", "faded", "blue"), (0.6, 0.32, 0.08))


@dataclass(frozen=True)
class SheetPage:
    """Every other layout: A4-like sheets, some prose and table pages in landscape."""

    long_side: tuple[float, float] = (1100, 1800)
    aspect_jitter: tuple[float, float] = (0.92, 1.06)  # times 1/sqrt(2)
    landscape: float = 0.15  # prose and table pages only
    paper: Choice = Choice(("white", "tinted", "old"), (0.65, 0.2, 0.15))
    handwriting_paper: Choice = Choice(("old", "white", "tinted"))
    ink: Choice = Choice(("black", "faded", "blue"), (0.8, 0.15, 0.05))
    handwriting_ink: Choice = Choice(("blue", "black", "brown"), (0.45, 0.35, 0.2))
    fraktur_ink: Choice = Choice(("black", "brown", "faded"), (0.6, 0.25, 0.15))


RECEIPT_PAGE = ReceiptPage()
SHEET_PAGE = SheetPage()


@dataclass
class PagePlan:
    """What to draw: the layout kind, page size and the paper/ink look handed to the degrader."""

    kind: str
    width: int
    height: int
    paper: str  # "white" | "thermal" | "old" | "tinted"
    ink: str  # "black" | "blue" | "faded" | "brown"


def plan_page(rng: np.random.Generator, kinds: dict[str, float] | None = None) -> PagePlan:
    kinds = kinds or KINDS
    names = list(kinds)
    p = np.array([kinds[k] for k in names], float)
    kind = names[int(rng.choice(len(names), p=p / p.sum()))]
    if kind == "receipt":
        r = RECEIPT_PAGE
        h = int(rng.uniform(*r.height))
        w = max(r.min_width, int(h / rng.uniform(*r.aspect)))
        return PagePlan(kind, w, h, str(r.paper.draw(rng)), str(r.ink.draw(rng)))
    s = SHEET_PAGE
    long_side = int(rng.uniform(*s.long_side))
    short = int(long_side / 1.414 * rng.uniform(*s.aspect_jitter))
    landscape = kind in ("prose", "table") and rng.random() < s.landscape
    w, h = (long_side, short) if landscape else (short, long_side)
    paper = {"fraktur": "old", "handwriting": str(s.handwriting_paper.draw(rng))}.get(
        kind, str(s.paper.draw(rng))
    )
    ink = {
        "handwriting": str(s.handwriting_ink.draw(rng)),
        "fraktur": str(s.fraktur_ink.draw(rng)),
    }.get(kind, str(s.ink.draw(rng)))
    return PagePlan(kind, w, h, paper, ink)
