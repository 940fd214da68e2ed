"""OCR results: a Page of Lines, with boxes in original-image pixels, in reading order."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ocrkit.images import boxes as B
from ocrkit.pages.reading_order import same_row


@dataclass
class Word:
    """A word of a line: the characters between spaces, placed by the recognizer's CTC alignment
    (ocrkit.pages.words)."""

    bbox: list[float]  # [x0, y0, x1, y1] in original-image pixels, inside its line's box
    text: str
    score: float = 0.0  # mean CTC probability of its characters on the frames they were read from

    def to_dict(self) -> dict:
        return {
            "bbox": [round(float(v), 2) for v in self.bbox],
            "text": self.text,
            "score": round(float(self.score), 5),
        }


@dataclass
class Line:
    bbox: list[float]  # [x0, y0, x1, y1] in original-image pixels
    text: str = ""
    score: float = 0.0  # det_score × rec_score: how likely the line is real AND read right
    det_score: float = 0.0
    rec_score: float = 0.0
    words: list[Word] = field(default_factory=list)  # left to right; empty when nothing was read
    # the line's four corners (clockwise from its top left) where the page was straightened: its box
    # is then turned on the page as sent, and `bbox` bounds it
    polygon: list[list[float]] | None = None

    def to_dict(self) -> dict:
        d = {"bbox": [round(float(v), 2) for v in self.bbox], "text": self.text}
        if self.polygon is not None:
            d["polygon"] = [[round(float(x), 2), round(float(y), 2)] for x, y in self.polygon]
        for key in ("score", "det_score", "rec_score"):
            d[key] = round(float(getattr(self, key)), 5)
        d["words"] = [word.to_dict() for word in self.words]
        return d


@dataclass(frozen=True)
class Orientation:
    """How a page was sent: turned `angle` degrees clockwise from upright (0, 90, 180, 270), with the
    classifier's `confidence`; `applied` is the turn undone before reading (0 when it was unsure), and
    `skew` the small turn (degrees counter-clockwise) its print had and that was undone after it.
    `method`: how the turn was found: "classifier" (sure of it), "lines" (sure of the lines' axis only:
    the page's widest lines read both ways up decided their direction, or, where their votes split,
    the whole page read both ways up), "reading" (unsure of the axis, or the page skewed steeply: the
    page read on its first axis and turned a quarter turn decided the axis, its lines the direction),
    "unsure" (no text found either way: read as sent) or "told" (the caller)."""

    angle: int
    confidence: float
    applied: int
    skew: float = 0.0
    method: str = "classifier"

    @property
    def turns(self) -> int:
        """Quarter turns undone before reading."""
        return self.applied // 90

    def as_read(self, points: np.ndarray) -> np.ndarray:
        """(n, 2) points on the page as sent → the same points on the page as it was read (turned upright,
        then straightened), up to a shift: where rows are told apart, as lines lie level only there."""
        x, y = np.asarray(points, np.float64).T
        x, y = ((x, y), (y, -x), (-x, -y), (-y, x))[self.turns % 4]
        a = np.deg2rad(self.skew)
        return np.stack([np.cos(a) * x - np.sin(a) * y, np.sin(a) * x + np.cos(a) * y], axis=1)

    def to_dict(self) -> dict:
        return {
            "angle": self.angle,
            "confidence": round(self.confidence, 4),
            "applied": self.applied,
            "skew": round(self.skew, 2),
            "method": self.method,
        }


@dataclass
class Page:
    image: str
    width: int
    height: int
    page: int = 1
    seconds: float = 0.0
    lines: list[Line] = field(default_factory=list)
    orientation: Orientation | None = None  # None: read as sent, nothing classified
    # lines read as text but less sure than the pipeline's min_confidence: out of the page's text and
    # files, kept so an overlay can show where they were
    unsure: list[Line] = field(default_factory=list)
    # boxes whose reading is not text (ocrkit.pages.not_text), dropped from the page: kept out of its text and
    # files too, so an evaluation can count the real lines the filter would lose
    not_text: list[Line] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Lines in reading order; lines sharing a row (item … price) joined by a space. Rows are told
        apart on the page as it was read: on a page sent sideways or skewed, the boxes as sent overlap
        across rows (a receipt sent a quarter turn joined its first 12 lines into one row)."""
        out: list[str] = []
        prev: list[float] | None = None
        for line in self.lines:
            box = self._box_as_read(line)
            if prev is not None and same_row(prev, box):
                out[-1] += " " + line.text
            else:
                out.append(line.text)
            prev = box
        return "\n".join(out)

    def _box_as_read(self, line: Line) -> list[float]:
        if self.orientation is None or (self.orientation.turns % 4 == 0 and not self.orientation.skew):
            return line.bbox
        corners = np.asarray(line.polygon) if line.polygon is not None else B.corners(line.bbox)[0]
        points = self.orientation.as_read(corners)
        return [*points.min(0).tolist(), *points.max(0).tolist()]

    def to_dict(self) -> dict:
        return {
            "image": self.image,
            "page": self.page,
            "width": self.width,
            "height": self.height,
            "seconds": round(self.seconds, 4),
            "orientation": self.orientation.to_dict() if self.orientation else None,
            "lines": [line.to_dict() for line in self.lines],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)

    @classmethod
    def from_dict(cls, d: dict) -> Page:
        lines = [
            Line(
                bbox=[float(v) for v in ln["bbox"]],
                text=ln.get("text", ""),
                score=ln.get("score", 0.0),
                det_score=ln.get("det_score", ln.get("score", 0.0)),
                rec_score=ln.get("rec_score", 0.0),
                words=[
                    Word([float(v) for v in w["bbox"]], w.get("text", ""), w.get("score", 0.0))
                    for w in ln.get("words", [])
                ],
                polygon=ln.get("polygon"),
            )
            for ln in d.get("lines", [])
        ]
        return cls(
            image=d["image"],
            width=int(d["width"]),
            height=int(d["height"]),
            page=int(d.get("page", 1)),
            seconds=float(d.get("seconds", 0.0)),
            lines=lines,
            orientation=Orientation(**d["orientation"]) if d.get("orientation") else None,
        )

    def boxes(self) -> np.ndarray:
        return np.array([line.bbox for line in self.lines], np.float32).reshape(-1, 4)

    def boxes_as_read(self) -> np.ndarray:
        """The lines' boxes on the page as it was read (upright and level, up to a shift), as (n, 4) xyxy:
        where rows of a page sent turned or skewed are told apart."""
        return np.array([self._box_as_read(line) for line in self.lines], np.float32).reshape(-1, 4)
