"""An uploaded page as a picture a browser can show: the web page draws the detected boxes over it.

The picture comes from the same decoding as /v1/ocr (EXIF orientation, the PDF page rendered at the
same resolution, the same limits and refusals), so the boxes, in that page's pixels, land where the
models saw the lines, whatever the format: PDF, TIFF or 16-bit files that browsers cannot show.
"""

from __future__ import annotations

import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ocrkit.images.io import pdf_page_count, tiff_page_count
from ocrkit.serve.uploads import PDF_HEADER_WITHIN, TIFF_MAGIC, Limits, Upload, read_upload

MAX_SIDE = 2400  # longest side sent to the browser; the boxes scale with the picture
JPEG_QUALITY = 88


@dataclass(frozen=True)
class PageImage:
    jpeg: bytes
    width: int  # the page's size in the pixels the OCR's boxes use (before any scaling down)
    height: int
    pages: int  # pages in the uploaded file, for the page selector


class _Decoder:
    """Stands in for the OCR in read_upload: keeps the decoded page instead of reading it."""

    def read(
        self, image: np.ndarray, name: str = "", page: int = 1, min_confidence: float | None = None
    ) -> np.ndarray:
        return image


def page_image(data: bytes, limits: Limits, page: int = 1) -> PageImage:
    """Page `page` of an upload as a JPEG no larger than MAX_SIDE, its size and the file's page count.
    Raises UploadError exactly where /v1/ocr would."""
    (rgb,) = read_upload(_Decoder(), Upload(data, "upload", limits, page))  # type: ignore[arg-type]
    height, width = rgb.shape[:2]
    picture = Image.fromarray(rgb)
    picture.thumbnail((MAX_SIDE, MAX_SIDE))
    buf = io.BytesIO()
    picture.save(buf, format="JPEG", quality=JPEG_QUALITY)
    return PageImage(buf.getvalue(), width, height, _page_count(data))


def _page_count(data: bytes) -> int:
    """Pages of a PDF or a multi-page TIFF; 1 for any other image."""
    is_pdf, is_tiff = b"%PDF-" in data[:PDF_HEADER_WITHIN], data[:4] in TIFF_MAGIC
    if not (is_pdf or is_tiff):
        return 1
    with tempfile.TemporaryDirectory(prefix="ocrkit-preview-") as tmp:
        path = Path(tmp) / "upload"
        path.write_bytes(data)
        return pdf_page_count(path) if is_pdf else tiff_page_count(path)
