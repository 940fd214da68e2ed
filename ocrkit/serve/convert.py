"""The body of POST /v1/convert: pages as /v1/ocr returned them in JSON, to be written again as text,
hOCR, ALTO or PAGE-XML without reading the page a second time (the web page's download links)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ocrkit.pages.document import Page

# NaN or infinity cannot be a coordinate or a score, and strict JSON cannot carry them back
_FINITE = ConfigDict(allow_inf_nan=False)


class WordIn(BaseModel):
    model_config = _FINITE
    bbox: list[float] = Field(min_length=4, max_length=4, description="[x0, y0, x1, y1] in page pixels")
    text: str = ""
    score: float = 0.0


class LineIn(BaseModel):
    model_config = _FINITE
    bbox: list[float] = Field(min_length=4, max_length=4, description="[x0, y0, x1, y1] in page pixels")
    text: str = ""
    score: float = 0.0
    det_score: float = 0.0
    rec_score: float = 0.0
    words: list[WordIn] = []
    polygon: list[list[float]] | None = None


class OrientationIn(BaseModel):
    model_config = _FINITE
    angle: int = Field(description="degrees clockwise the page was sent turned: 0, 90, 180 or 270")
    confidence: float = 1.0
    applied: int = 0
    skew: float = 0.0


class PageIn(BaseModel):
    model_config = _FINITE
    image: str
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    page: int = Field(1, ge=1)
    seconds: float = 0.0
    orientation: OrientationIn | None = None
    lines: list[LineIn] = []


class PagesIn(BaseModel):
    """`{"pages": [...]}`, exactly the JSON that /v1/ocr answers."""

    pages: list[PageIn] = Field(min_length=1)

    def to_pages(self) -> list[Page]:
        return [Page.from_dict(p.model_dump()) for p in self.pages]


def parse_pages(body: bytes) -> list[Page]:
    """The pages of a request body, parsed as strict JSON: a lone surrogate (not text) or a non-finite
    number is a pydantic ValidationError like any other malformed body, never a failure later on."""
    return PagesIn.model_validate_json(body).to_pages()


def body_schema() -> dict:
    """The JSON schema of the body for the API docs, its definitions put in place: the handler reads the
    raw body itself, and a schema's own `$defs` would not resolve inside the OpenAPI document."""
    schema = PagesIn.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: object) -> object:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].rsplit("/", 1)[1]])
            return {key: inline(value) for key, value in node.items()}
        if isinstance(node, list):
            return [inline(value) for value in node]
        return node

    return inline(schema)  # type: ignore[return-value]
