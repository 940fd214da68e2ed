"""OCR results: a Page of Lines, with boxes in original-image pixels, in reading order."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from ocrkit.reading_order import same_row


@dataclass
class Line:
    bbox: list[float]  # [x0, y0, x1, y1] in original-image pixels
    text: str = ""
    score: float = 0.0  # det_score × rec_score: how likely the line is real AND read right
    det_score: float = 0.0
    rec_score: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["bbox"] = [round(float(v), 2) for v in self.bbox]
        for key in ("score", "det_score", "rec_score"):
            d[key] = round(float(d[key]), 5)
        return d


@dataclass
class Page:
    image: str
    width: int
    height: int
    page: int = 1
    seconds: float = 0.0
    lines: list[Line] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Lines in reading order; lines sharing a row (item … price) joined by a space."""
        out: list[str] = []
        prev: Line | None = None
        for line in self.lines:
            if prev is not None and same_row(prev.bbox, line.bbox):
                out[-1] += " " + line.text
            else:
                out.append(line.text)
            prev = line
        return "\n".join(out)

    def to_dict(self) -> dict:
        return {
            "image": self.image,
            "page": self.page,
            "width": self.width,
            "height": self.height,
            "seconds": round(self.seconds, 4),
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
        )

    def boxes(self) -> np.ndarray:
        return np.array([line.bbox for line in self.lines], np.float32).reshape(-1, 4)
