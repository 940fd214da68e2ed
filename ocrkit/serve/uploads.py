"""An uploaded file → the Pages of its text, or an UploadError that says which HTTP status fits.

Decoding goes through ocrkit.io (the same checks as `ocrkit infer`), so the service accepts and refuses
exactly what the command line does; only the limits are the service's own.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from ocrkit.document import Page
from ocrkit.errors import InputError
from ocrkit.io import load_image, load_pdf_page, pdf_page_count

# Declared types that cannot be a page; anything else (image/*, PDF, octet-stream, none) is sniffed.
ACCEPTED_TYPES = ("image/", "application/pdf", "application/x-pdf", "application/octet-stream")

# io.InputError problems (their leading words) → (HTTP status, error code); anything else is a 422.
_PROBLEMS = (
    ("image too large", 413, "too_many_pixels"),
    ("not a recognised image format", 422, "not_an_image"),
    ("corrupt or truncated", 422, "corrupt_image"),
    ("image has zero width", 422, "corrupt_image"),
    ("encrypted PDF", 422, "encrypted_pdf"),
    ("cannot open PDF", 422, "corrupt_pdf"),
    ("cannot render PDF page", 422, "corrupt_pdf"),
)


class PageReader(Protocol):
    def read(self, image: np.ndarray, name: str | None = ..., page: int = ...) -> Page: ...


@dataclass(frozen=True)
class Limits:
    max_upload_bytes: int
    max_pixels: int
    max_pages: int


class UploadError(Exception):
    """A request the service refuses, with the status and the JSON body's error code and detail."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


def check_media_type(content_type: str | None) -> None:
    declared = (content_type or "").split(";")[0].strip().lower()
    if declared and not declared.startswith(ACCEPTED_TYPES):
        raise UploadError(415, "unsupported_media_type", f"{declared} is not an image or a PDF")


def read_upload(
    ocr: PageReader, data: bytes, name: str, limits: Limits, page: int | None = None
) -> list[Page]:
    """Every page of an image or PDF upload (or only `page` of a PDF), read one page at a time so a
    long PDF never holds more than one decoded page in memory."""
    if not data:
        raise UploadError(400, "empty_file", "the uploaded file is empty (0 bytes)")
    if len(data) > limits.max_upload_bytes:
        raise UploadError(413, "too_large", f"the upload is larger than {limits.max_upload_bytes} bytes")
    is_pdf = data.startswith(b"%PDF-")
    if page is not None and page > 1 and not is_pdf:
        raise UploadError(422, "no_such_page", f"an image has one page, not {page}")
    with tempfile.TemporaryDirectory(prefix="ocrkit-upload-") as tmp:
        path = Path(tmp) / ("upload.pdf" if is_pdf else "upload")
        path.write_bytes(data)
        try:
            if not is_pdf:
                return [ocr.read(load_image(path, limits.max_pixels), name=name)]
            numbers = _pdf_pages(path, limits.max_pages, page)
            return [
                ocr.read(load_pdf_page(path, n, max_pixels=limits.max_pixels), name=name, page=n)
                for n in numbers
            ]
        except InputError as exc:
            raise _upload_error(exc) from None


def _pdf_pages(path: Path, max_pages: int, page: int | None) -> list[int]:
    count = pdf_page_count(path)
    if count == 0:
        raise UploadError(422, "empty_pdf", "the PDF has no pages")
    if page is not None:
        if page > count:
            raise UploadError(422, "no_such_page", f"the PDF has {count} pages, not {page}")
        return [page]
    if count > max_pages:
        detail = f"the PDF has {count} pages; at most {max_pages} per request (or pass page=N)"
        raise UploadError(413, "too_many_pages", detail)
    return list(range(1, count + 1))


def _upload_error(exc: InputError) -> UploadError:
    for prefix, status, error in _PROBLEMS:
        if exc.problem.startswith(prefix):
            return UploadError(status, error, exc.problem)
    return UploadError(422, "unreadable_input", exc.problem)
