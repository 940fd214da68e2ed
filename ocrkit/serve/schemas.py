"""The typed answers of the service for its OpenAPI document: what a client generated from /openapi.json
gets to work with (the pages' schema is ocrkit.serve.convert's, shared with /v1/convert's body)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ErrorAnswer(BaseModel):
    """Every refusal and failure: a stable code to branch on and a sentence to show."""

    error: str = Field(description="a stable code, e.g. too_large, unsupported_media_type, busy")
    detail: str = Field(description="what was wrong, in one sentence")
    request_id: str | None = Field(None, description="on internal errors: the id to find it in the log")


class Health(BaseModel):
    status: str = Field(description='"ok" while requests are accepted')
    models_loaded: bool
    in_flight: int = Field(description="requests being read or waiting")
    capacity: int = Field(description="workers + queue: requests accepted at once")


class ModelDescription(BaseModel):
    name: str = Field(description="the model folder's name")
    release: str = Field(description='what the model is called, e.g. "ocrkit line detector 0.7.0"')
    version: str = Field(description="a hash of the weights and settings")
    task: str | None = None
    arch: str | None = None
    size: str | None = None
    longest: int | None = Field(None, description="detector: the longest side pages are read at")
    decoding: str | None = Field(None, description="recognizer: attention | ctc | joint")
    score_threshold: float | None = Field(None, description="detector: boxes below this are dropped")


class LimitsAnswer(BaseModel):
    max_upload_bytes: int
    max_pixels: int = Field(description="pixels of a decoded page")
    max_pages: int = Field(description="pages of a PDF or TIFF per request (or ask one with page=N)")


class ModelsAnswer(BaseModel):
    ocrkit: str = Field(description="the package version")
    backend: str = Field(description="torch or onnx")
    detector: ModelDescription
    recognizer: ModelDescription
    min_confidence: float = Field(description="lines read less sure are dropped unless a request says")
    limits: LimitsAnswer


ERRORS = {
    status: {"model": ErrorAnswer, "description": what}
    for status, what in {
        400: "empty upload",
        413: "upload, page or page count over the limits",
        415: "not an image or a PDF",
        422: "a file or request that cannot be read",
        500: "internal error",
        503: "every worker busy; see Retry-After",
    }.items()
}
