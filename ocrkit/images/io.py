"""Decode images, TIFF pages and PDF pages into RGB uint8 arrays, with clear errors naming the file."""

from __future__ import annotations

import re
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ocrkit.images.preprocess import to_rgb_uint8
from ocrkit.util.errors import InputError, ModelError, printable

__all__ = ["InputError", "ModelError", "PageSource", "load_image", "load_page", "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp", ".gif", ".pbm", ".pgm", ".ppm"}
TIFF_SUFFIXES = {".tif", ".tiff"}
PDF_SUFFIX = ".pdf"
MAX_PIXELS = 100_000_000  # above this a page is refused (decompression-bomb guard); 10k×10k is allowed
MAX_ASPECT = 1000  # a longer side over this many times the shorter is refused: no page or line is that thin
PDF_DPI = 200


@dataclass(frozen=True)
class PageSource:
    """One page to process: a file, its output name (see ocrkit.images.inputs) and the 1-based page number."""

    path: Path
    name: str  # the input's path relative to the folder it was found in, extension included
    page: int = 1
    pages: int = 1  # pages in the file: PDFs and multi-page TIFFs have several
    is_pdf: bool = False

    @property
    def stem(self) -> str:
        """Output name before the format's extension: `<name>`, or `<name>-p<N>` for a PDF page or a
        page of a multi-page TIFF, so every page of every input gets its own outputs."""
        return f"{self.name}-p{self.page}" if self.is_pdf or self.pages > 1 else self.name

    @property
    def label(self) -> str:
        """The file's path as valid UTF-8, for messages and the `image` field of outputs."""
        return printable(str(self.path))


def _to_uint8(arr: np.ndarray) -> np.ndarray:
    """Scale integer samples deeper than 8 bits to 0..255 by the bit depth their brightest sample
    needs (8..32): 12-bit data stored in 16-bit files (scanners, microscopes) spans the full range
    instead of becoming near-black, and true 16-bit data keeps its contrast."""
    top = (1 << max(8, int(arr.max(initial=0)).bit_length())) - 1
    # one working copy, as narrow as `sample · 255` allows, scaled in place: memory is ~3× the samples
    scaled = arr.astype(np.int32 if top < 1 << 23 else np.int64)
    np.maximum(scaled, 0, out=scaled)
    scaled *= 255
    scaled += top // 2
    scaled //= top
    return scaled.astype(np.uint8)


def _pil_to_array(img: Image.Image) -> np.ndarray:
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        return to_rgb_uint8(_to_uint8(np.asarray(img)))
    if img.mode == "F":
        return to_rgb_uint8(np.asarray(img, dtype=np.float32))
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        return to_rgb_uint8(np.asarray(img if img.mode == "RGBA" else img.convert("RGBA")))
    return np.asarray(img.convert("RGB"))


def _too_large(width: int, height: int, max_pixels: int) -> str:
    size = f"{width}×{height} = {width * height / 1e6:.3g} M px"
    return f"image too large ({size}; the limit is {max_pixels / 1e6:g} M px)"


def _bomb_problem(exc: Exception, max_pixels: int) -> str:
    """Pillow refuses images over twice its own limit before we see their size; its message has it."""
    found = re.search(r"\((\d+) pixels\)", str(exc))
    size = f"{int(found.group(1)) / 1e6:.3g} M px" if found else "size unknown"
    return f"image too large ({size}; the limit is {max_pixels / 1e6:g} M px)"


def _shape_problem(width: float, height: float, max_pixels: int) -> str | None:
    """Why a page of this size (read from the file's header) is refused before it is decoded, or None.
    Decoding allocates by the header's size, so a small file can claim a huge or absurdly thin image;
    a row of 100 000 000 pixels, within the pixel limit, still makes the decoder run out of memory."""
    if width <= 0 or height <= 0:
        return "image has zero width or height"
    if width * height > max_pixels:
        return _too_large(round(width), round(height), max_pixels)
    if max(width, height) > MAX_ASPECT * min(width, height):
        size = f"{round(width)}×{round(height)}"
        return f"image too thin ({size}; a side may be at most {MAX_ASPECT} times the other)"
    return None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{exc.__class__.__name__}: {text}" if text else exc.__class__.__name__


@contextmanager
def _decode_guard(path: object, page: int = 1, max_pixels: int = MAX_PIXELS) -> Iterator[None]:
    """Turn every failure while opening or decoding `path` into one InputError naming it.

    Decoders fail in many ways on crafted or unusual files (Pillow's format plugins raise
    NotImplementedError, RuntimeError, AttributeError, MemoryError, ... besides OSError), and a batch
    must report one bad file and go on, never stop at it."""
    try:
        yield
    except InputError:
        raise
    except Image.DecompressionBombError as exc:
        raise InputError(path, _bomb_problem(exc, max_pixels)) from None
    except PermissionError:
        raise InputError(path, "permission denied (the file is not readable)") from None
    except UnidentifiedImageError:
        raise InputError(path, "not a recognised image format") from None
    except EOFError:
        raise InputError(path, f"page {page} is missing (the file ends before it)") from None
    except MemoryError:
        raise InputError(path, "image too large to decode (out of memory)") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(path, f"corrupt or truncated image ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - any decoder failure is this file's problem, not the run's
        raise InputError(path, f"corrupt or unsupported image ({_one_line(exc)})") from None


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS, page: int = 1) -> np.ndarray:
    """Decode an image file (for a multi-page TIFF, its `page`, 1-based) → HxWx3 uint8 RGB, EXIF
    orientation applied.

    Raises InputError (naming the file, with a one-line reason) for missing, empty, unreadable,
    corrupt, unsupported, oversized or absurdly thin files, and for any failure of the decoder. The
    size is checked from the header, before any pixel is decoded, so memory stays bounded.
    """
    path = Path(path)
    with _decode_guard(path, page, max_pixels):
        if not path.is_file():
            raise InputError(path, "no such file")
        if path.stat().st_size == 0:
            raise InputError(path, "empty file (0 bytes)")
        with warnings.catch_warnings():
            # Pillow warns from ~89.5 M px; MAX_PIXELS (checked below, before decoding) is the limit
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                if page > 1:
                    img.seek(page - 1)
                problem = _shape_problem(img.width, img.height, max_pixels)
                if problem:
                    raise InputError(path, problem)
                img.load()
                ImageOps.exif_transpose(img, in_place=True)  # a copy would cost another page of memory
                return _pil_to_array(img)


def tiff_pages(path: Path) -> Iterator[int]:
    """The offset of each page's directory in a TIFF or BigTIFF, found by following the chain of image
    directories in the file, one read per page. Pillow's `n_frames` costs time quadratic in the pages
    (a 15 MB file of 150 000 tiny pages takes minutes); this is linear and lazy, so a caller can stop at
    its page limit. A loop in the chain ends it; anything but a TIFF yields nothing."""
    with open(path, "rb") as fh:
        head = fh.read(16)
        order = {b"II": "<", b"MM": ">"}.get(head[:2])
        if order is None or len(head) < 8:
            return
        version = struct.unpack(order + "H", head[2:4])[0]
        if version == 42:
            count_fmt, entry_size, next_fmt, first = "H", 12, "I", head[4:8]
        elif version == 43 and len(head) == 16:
            count_fmt, entry_size, next_fmt, first = "Q", 20, "Q", head[8:16]
        else:
            return
        count_size, next_size = struct.calcsize(count_fmt), struct.calcsize(next_fmt)
        offset, seen = struct.unpack(order + next_fmt, first)[0], set()
        while offset and offset not in seen:
            seen.add(offset)
            fh.seek(offset)
            raw = fh.read(count_size)
            if len(raw) < count_size:
                return
            yield offset
            fh.seek(offset + count_size + struct.unpack(order + count_fmt, raw)[0] * entry_size)
            raw = fh.read(next_size)
            offset = struct.unpack(order + next_fmt, raw)[0] if len(raw) == next_size else 0


def tiff_page_count(path: Path, stop_after: int | None = None) -> int:
    """Pages in a TIFF, counted up to `stop_after` at most (a page limit + 1 tells "too many" without
    walking the rest); 1 when the file cannot be read as one (load_image then says why)."""
    try:
        return max(1, sum(1 for _ in islice(tiff_pages(path), stop_after)))
    except (OSError, struct.error):
        return 1


def _set_pdfium_error(sentinel: int) -> None:
    """Put PDFium's last-error code in a known state: PDFium keeps it across documents and leaves it
    untouched for some failures (a PDF with no pages), so a stale code would name another file's problem."""
    import pypdfium2.raw as pdfium_c

    if sentinel == pdfium_c.FPDF_ERR_FILE:
        pdfium_c.FPDF_LoadDocument(b"\0", None)  # an empty path: cannot be opened
    else:
        garbage = b"%PDF-1.4\n"
        pdfium_c.FPDF_LoadMemDocument(garbage, len(garbage), None)


def _open_pdf(path: Path):
    """pypdfium2 document, or an InputError that says why (password-protected PDFs and PDFs without
    pages get their own message). The error code is read fresh for every file, never carried over."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    codes = []
    for sentinel in (pdfium_c.FPDF_ERR_FILE, pdfium_c.FPDF_ERR_FORMAT):
        _set_pdfium_error(sentinel)
        try:
            return pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            code = pdfium_c.FPDF_GetLastError()
        except PermissionError:
            raise InputError(path, "permission denied (the file is not readable)") from None
        except OSError as exc:
            raise InputError(path, f"cannot open PDF ({exc.strerror or exc})") from None
        codes.append(code)
        if code != sentinel:
            break
    else:  # the code stayed at both sentinels: PDFium failed without saying why
        raise InputError(path, "PDF has no pages (or a page tree PDFium cannot read)")
    code = codes[-1]
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        raise InputError(path, "encrypted PDF (password required); decrypt it first")
    reason = {
        pdfium_c.FPDF_ERR_FILE: "file not found or could not be opened",
        pdfium_c.FPDF_ERR_FORMAT: "not a PDF or corrupted",
        pdfium_c.FPDF_ERR_SECURITY: "unsupported security scheme",
    }.get(code, "unknown error")
    raise InputError(path, f"cannot open PDF ({reason})")


def pdf_page_count(path: Path) -> int:
    pdf = _open_pdf(path)
    try:
        return len(pdf)
    finally:
        pdf.close()


def load_pdf_page(path: Path, page: int, dpi: int = PDF_DPI, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Render one PDF page (1-based) to RGB uint8 at `dpi`, scaled down if it would exceed max_pixels.
    A page of an absurd shape is refused before rendering; any rendering failure is an InputError."""
    import pypdfium2 as pdfium

    pdf = _open_pdf(path)
    where = f"{path} page {page}"
    try:
        with _decode_guard(where, page):
            pdf_page = pdf[page - 1]
            width_pt, height_pt = pdf_page.get_size()
            problem = _shape_problem(width_pt, height_pt, max_pixels=2**62)  # its size is scaled below
            if problem:
                raise InputError(where, problem.replace("image", "PDF page", 1))
            scale = dpi / 72
            pixels = width_pt * height_pt * scale * scale
            if pixels > max_pixels:
                scale *= (max_pixels / pixels) ** 0.5
            try:
                bitmap = pdf_page.render(scale=scale)
            except pdfium.PdfiumError as exc:
                raise InputError(where, f"cannot render PDF page ({exc})") from None
            return np.asarray(bitmap.to_pil().convert("RGB"))
    finally:
        pdf.close()


def load_page(source: PageSource) -> np.ndarray:
    if source.is_pdf:
        return load_pdf_page(source.path, source.page)
    return load_image(source.path, page=source.page)
