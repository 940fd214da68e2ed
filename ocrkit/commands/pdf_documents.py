"""`--format pdf` for `ocrkit infer`: pages arrive one at a time, a searchable PDF holds a whole input
document, so each document's pages are collected until its last one has been read, then written once."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from ocrkit.images.io import PageSource, load_page
from ocrkit.pages.document import Page
from ocrkit.pages.outputs import write_atomic
from ocrkit.pages.searchable_pdf import EMBEDDED_AS_IS, SearchablePdf, pdf_page_sizes

EXIF_ORIENTATION = 0x0112
# A stated resolution below this is a default (cameras and editors write 72 or 96), not a scan's: the page
# size then comes from ocrkit.pages.searchable_pdf.IMAGE_DPI.
MIN_TRUSTED_DPI = 100


class DocumentPdfs:
    """Searchable PDFs of the inputs, `<out>/<name>.pdf` each (named like the other outputs, without a
    page number: one PDF per input, every page in it)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.open: dict[Path, tuple[SearchablePdf, list[tuple[float, float]] | None]] = {}

    def add(self, source: PageSource, page: Page | None) -> Path | None:
        """One page of `source`, read (`page`) or not (None: its picture or original page without text);
        the written PDF's path once the document's last page is in, else None."""
        doc, sizes = self.open.get(source.path) or (SearchablePdf(), None)
        if source.is_pdf:
            sizes = sizes or pdf_page_sizes(source.path)
            width, height = sizes[source.page - 1]
            doc.add_pdf_page(page or Page(source.label, 1, 1, source.page), width, height)
        elif page is not None:
            picture, dpi = _picture(source)
            doc.add_picture(page, picture, dpi)
        self.open[source.path] = (doc, sizes)
        if source.page < source.pages:
            return None
        del self.open[source.path]
        if not doc.pages:
            return None
        target = self.out / f"{source.name}.pdf"
        doc.original = source.path if source.is_pdf else None
        write_atomic(target, doc.to_bytes())
        return target


def _picture(source: PageSource):
    """The picture to put under the text: the file itself when a PDF can hold it as it is (a one-page
    JPEG or PNG shown upright), else the decoded page; and the resolution the file states, if it is one
    a scanner would."""
    with Image.open(source.path) as img:
        dpi = img.info.get("dpi", (None,))[0]
        upright = img.getexif().get(EXIF_ORIENTATION, 1) == 1
    dpi = float(dpi) if dpi and float(dpi) >= MIN_TRUSTED_DPI else None
    if source.path.suffix.lower() in EMBEDDED_AS_IS and source.pages == 1 and upright:
        return source.path, dpi
    return load_page(source), dpi
