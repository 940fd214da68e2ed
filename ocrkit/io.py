"""Decode images and PDF pages into RGB uint8 arrays, with clear errors naming the file."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ocrkit.errors import InputError, ModelError
from ocrkit.preprocess import to_rgb_uint8

__all__ = [
    "InputError",
    "ModelError",
    "PageSource",
    "load_image",
    "iter_pages",
    "expand_paths",
    "IMAGE_SUFFIXES",
]

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp", ".gif", ".pbm", ".pgm", ".ppm"}
PDF_SUFFIX = ".pdf"
MAX_PIXELS = 100_000_000  # above this a page is refused (decompression-bomb guard); ~10k×10k
PDF_DPI = 200


@dataclass(frozen=True)
class PageSource:
    """One page to process: a file, and the 1-based page number for PDFs (1 for images)."""

    path: Path
    page: int = 1
    is_pdf: bool = False

    @property
    def stem(self) -> str:
        """Output file stem: `<stem>` for images, `<stem>-p<N>` for PDF pages."""
        return f"{self.path.stem}-p{self.page}" if self.is_pdf else self.path.stem


def _pil_to_array(img: Image.Image) -> np.ndarray:
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr = np.asarray(img, dtype=np.uint32 if img.mode == "I" else np.uint16)
        return to_rgb_uint8((arr >> 8).astype(np.uint8) if arr.max(initial=0) > 255 else arr.astype(np.uint8))
    if img.mode == "F":
        return to_rgb_uint8(np.asarray(img, dtype=np.float32))
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        return to_rgb_uint8(np.asarray(img.convert("RGBA")))
    return np.asarray(img.convert("RGB"))


def load_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Decode an image file → HxWx3 uint8 RGB, EXIF orientation applied.

    Raises InputError (naming the file) for missing, empty, corrupt, unsupported or oversized files.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    if path.stat().st_size == 0:
        raise InputError(path, "empty file (0 bytes)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                if img.width * img.height > max_pixels:
                    raise InputError(path, f"image too large ({img.width}×{img.height} px > {max_pixels} px)")
                if img.width == 0 or img.height == 0:
                    raise InputError(path, "image has zero width or height")
                img.load()
                img = ImageOps.exif_transpose(img)
                return _pil_to_array(img)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(path, "image too large (decompression-bomb guard)") from None
    except UnidentifiedImageError:
        raise InputError(path, "not a recognised image format") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(path, f"corrupt or truncated image ({exc})") from None


def _open_pdf(path: Path):
    """pypdfium2 document, or an InputError that says why (password-protected PDFs get their own message)."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise InputError(path, "encrypted PDF (password required); decrypt it first") from None
        raise InputError(path, f"cannot open PDF ({exc})") from None


def pdf_page_count(path: Path) -> int:
    pdf = _open_pdf(path)
    try:
        return len(pdf)
    finally:
        pdf.close()


def load_pdf_page(path: Path, page: int, dpi: int = PDF_DPI, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Render one PDF page (1-based) to RGB uint8 at `dpi`, scaled down if it would exceed max_pixels."""
    import pypdfium2 as pdfium

    pdf = _open_pdf(path)
    try:
        pdf_page = pdf[page - 1]
        width_pt, height_pt = pdf_page.get_size()
        scale = dpi / 72
        pixels = width_pt * height_pt * scale * scale
        if pixels > max_pixels:
            scale *= (max_pixels / pixels) ** 0.5
        bitmap = pdf_page.render(scale=scale)
        return np.asarray(bitmap.to_pil().convert("RGB"))
    except pdfium.PdfiumError as exc:
        raise InputError(f"{path} page {page}", f"cannot render PDF page ({exc})") from None
    finally:
        pdf.close()


def load_page(source: PageSource) -> np.ndarray:
    return load_pdf_page(source.path, source.page) if source.is_pdf else load_image(source.path)


def expand_paths(paths: list[str | Path]) -> tuple[list[Path], list[InputError]]:
    """Files and folders (recursive) → image/PDF files, sorted; problems are returned, not raised."""
    files: list[Path] = []
    errors: list[InputError] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES | {PDF_SUFFIX}
            )
            if not found:
                errors.append(InputError(p, "folder contains no images or PDFs"))
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            errors.append(InputError(p, "no such file or folder"))
    return files, errors


def iter_pages(files: list[Path]) -> Iterator[PageSource | InputError]:
    """Each image file → one PageSource; each PDF → one per page; unreadable PDFs → an InputError."""
    for f in files:
        if f.suffix.lower() == PDF_SUFFIX:
            try:
                count = pdf_page_count(f)
            except InputError as exc:
                yield exc
                continue
            if count == 0:
                yield InputError(f, "PDF has no pages")
            for n in range(1, count + 1):
                yield PageSource(f, n, is_pdf=True)
        else:
            yield PageSource(f)


def check_model_dir(path: str | Path, required: tuple[str, ...] = ("config.json", "ocrkit.json")) -> Path:
    """Fail early with a clear message if a model folder lacks its files."""
    path = Path(path)
    if not path.is_dir():
        raise ModelError(path, "model folder not found")
    missing = [name for name in required if not (path / name).is_file()]
    if not any(path.glob("*.safetensors")):
        missing.append("model.safetensors")
    if missing:
        raise ModelError(path, f"model folder is missing {', '.join(missing)}")
    return path
