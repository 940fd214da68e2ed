"""The body of POST /v1/convert: pages as /v1/ocr returned them in JSON, to be written again as text,
hOCR, ALTO or PAGE-XML without reading the page a second time (the web page's download links)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ocrkit.document import Page


class WordIn(BaseModel):
    bbox: list[float] = Field(min_length=4, max_length=4, description="[x0, y0, x1, y1] in page pixels")
    text: str = ""
    score: float = 0.0


class LineIn(BaseModel):
    bbox: list[float] = Field(min_length=4, max_length=4, description="[x0, y0, x1, y1] in page pixels")
    text: str = ""
    score: float = 0.0
    det_score: float = 0.0
    rec_score: float = 0.0
    words: list[WordIn] = []


class PageIn(BaseModel):
    image: str
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    page: int = Field(1, ge=1)
    seconds: float = 0.0
    lines: list[LineIn] = []


class PagesIn(BaseModel):
    """`{"pages": [...]}`, exactly the JSON that /v1/ocr answers."""

    pages: list[PageIn] = Field(min_length=1)

    def to_pages(self) -> list[Page]:
        return [Page.from_dict(p.model_dump()) for p in self.pages]
