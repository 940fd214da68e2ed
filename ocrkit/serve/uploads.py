"""An uploaded file → the Pages of its text, or an UploadError that says which HTTP status fits.

Decoding goes through ocrkit.images.io (the same checks as `ocrkit infer`), so the service accepts and refuses
exactly what the command line does; only the limits are the service's own.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from ocrkit.images.io import load_image, load_pdf_page, pdf_page_count, tiff_page_count
from ocrkit.pages.document import Page
from ocrkit.pages.searchable_pdf import SearchablePdf, pdf_page_sizes
from ocrkit.util.errors import InputError

# Declared types that cannot be a page; anything else (image/*, PDF, octet-stream, none) is sniffed.
ACCEPTED_TYPES = ("image/", "application/pdf", "application/x-pdf", "application/octet-stream")
PDF_HEADER_WITHIN = 1024  # PDF readers (PDFium included) accept bytes before %PDF- up to here
TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")  # TIFF and BigTIFF, both byte orders

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
    def read(
        self, image: np.ndarray, name: str | None = ..., page: int = ..., min_confidence: float | None = ...
    ) -> Page: ...


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


@dataclass(frozen=True)
class Upload:
    """One request's file and what the request asks of it."""

    data: bytes
    name: str  # what the pages are called in the answer
    limits: Limits
    page: int | None = None  # only this page of a PDF or TIFF
    min_confidence: float | None = None  # the request's cut instead of the service's


def read_upload(ocr: PageReader, upload: Upload) -> list[Page]:
    """Every page of an image, multi-page TIFF or PDF upload (or only its `page`), read one page at a
    time so a long document never holds more than one decoded page in memory: what `ocrkit infer` reads
    from the same file."""
    return _read(ocr, upload, None)


def read_upload_pdf(ocr: PageReader, upload: Upload) -> bytes:
    """`read_upload` as one searchable PDF (ocrkit.pages.searchable_pdf): a PDF upload keeps its own pages
    with the text laid over them (only page `page`'s text when given), a picture goes under its text."""
    document = SearchablePdf()
    _read(ocr, upload, document)
    return document.to_bytes()


def _read(ocr: PageReader, upload: Upload, document: SearchablePdf | None) -> list[Page]:
    """The pages read; with `document`, each also added to it (a PDF upload's own pages laid under
    their text before the upload's temporary file goes)."""
    data, limits, page = upload.data, upload.limits, upload.page
    if not data:
        raise UploadError(400, "empty_file", "the uploaded file is empty (0 bytes)")
    if len(data) > limits.max_upload_bytes:
        raise UploadError(413, "too_large", f"the upload is larger than {limits.max_upload_bytes} bytes")
    kind = "PDF" if b"%PDF-" in data[:PDF_HEADER_WITHIN] else "TIFF" if data[:4] in TIFF_MAGIC else "image"
    if page is not None and page > 1 and kind == "image":
        raise UploadError(422, "no_such_page", f"an image has one page, not {page}")
    with tempfile.TemporaryDirectory(prefix="ocrkit-upload-") as tmp:
        path = Path(tmp) / {"PDF": "upload.pdf", "TIFF": "upload.tif", "image": "upload"}[kind]
        path.write_bytes(data)
        try:
            load = load_pdf_page if kind == "PDF" else load_image
            numbers = [1]
            if kind == "PDF":
                numbers = _page_numbers(pdf_page_count(path), limits.max_pages, page, kind)
            elif kind == "TIFF":  # counted only as far as the limit, or the page asked for, needs
                count = tiff_page_count(path, stop_after=max(limits.max_pages, page or 0) + 1)
                numbers = _page_numbers(count, limits.max_pages, page, kind)
            pages = []
            for n in numbers:
                image = load(path, page=n, max_pixels=limits.max_pixels)
                pages.append(ocr.read(image, name=upload.name, page=n, min_confidence=upload.min_confidence))
                if document is not None and kind != "PDF":
                    document.add_picture(pages[-1], image)
            if document is not None and kind == "PDF":
                read = {p.page: p for p in pages}
                for n, (width, height) in enumerate(pdf_page_sizes(path), 1):
                    document.add_pdf_page(read.get(n) or Page(upload.name, 1, 1, n), width, height)
                document.original = data
            return pages
        except InputError as exc:
            raise _upload_error(exc) from None


def _page_numbers(count: int, max_pages: int, page: int | None, kind: str) -> list[int]:
    if count == 0:
        raise UploadError(422, "empty_pdf", "the PDF has no pages")
    if page is not None:
        if page > count:
            raise UploadError(422, "no_such_page", f"the {kind} has {count} pages, not {page}")
        return [page]
    if count > max_pages:
        counted = f"more than {max_pages}" if kind == "TIFF" else count  # a TIFF is counted up to the limit
        detail = f"the {kind} has {counted} pages; at most {max_pages} per request (or pass page=N)"
        raise UploadError(413, "too_many_pages", detail)
    return list(range(1, count + 1))


def _upload_error(exc: InputError) -> UploadError:
    for prefix, status, error in _PROBLEMS:
        if exc.problem.startswith(prefix):
            return UploadError(status, error, exc.problem)
    return UploadError(422, "unreadable_input", exc.problem)
