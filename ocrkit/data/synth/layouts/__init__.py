"""Page layouts: receipts, prose (1-3 columns), tables, forms, letters, Fraktur book pages, handwriting.

One module per kind of document; each keeps its distribution knobs (named probabilities and ranges) in
one frozen table beside its drawing code, and its words in `synth.vocabulary`. Every call to
`Canvas.text` is one run of words with no large gap, so columns, tab stops and the gap between an item
and its price always produce separate boxes.
"""

from __future__ import annotations

from collections.abc import Callable

from ocrkit.data.synth.canvas import Canvas
from ocrkit.data.synth.layouts.form import form
from ocrkit.data.synth.layouts.handwriting import handwriting
from ocrkit.data.synth.layouts.letter import letter
from ocrkit.data.synth.layouts.plan import KINDS, PagePlan, plan_page
from ocrkit.data.synth.layouts.prose import fraktur, prose
from ocrkit.data.synth.layouts.receipt import receipt
from ocrkit.data.synth.layouts.table import table
from ocrkit.data.synth.text import TextGen

LAYOUTS: dict[str, Callable[[Canvas, TextGen], None]] = {
    "receipt": receipt,
    "prose": prose,
    "table": table,
    "form": form,
    "letter": letter,
    "fraktur": fraktur,
    "handwriting": handwriting,
}

__all__ = ["KINDS", "LAYOUTS", "PagePlan", "draw", "plan_page"]


def draw(plan: PagePlan, cv: Canvas, tg: TextGen) -> None:
    LAYOUTS[plan.kind](cv, tg)
