"""Page → the output formats: text, JSON, hOCR, ALTO v4 and PAGE-XML 2019 (the layout formats other OCR
tools and viewers read) and an overlay picture. `render` is the one way every front end (`ocrkit infer`,
its Ray batches, `ocrkit serve`) turns a page into a named format."""

from __future__ import annotations

import datetime as _dt
import re
import xml.etree.ElementTree as ET

import numpy as np

from ocrkit.pages.document import Page

ALTO_NS = "http://www.loc.gov/standards/alto/ns-v4#"
PAGE_NS = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
# Characters XML 1.0 cannot hold, escaped or not: C0 controls other than tab, LF and CR, lone surrogates
# and the non-characters U+FFFE/U+FFFF. A file name or a text may carry them; a parser refuses the file.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _hocr_span(parent: ET.Element, kind: str, ident: str, bbox: list[float], score: float) -> ET.Element:
    """An hOCR span of `kind` (ocr_line, ocrx_word) with its box and confidence in percent."""
    x0, y0, x1, y1 = _ints(bbox)
    title = f"bbox {x0} {y0} {x1} {y1}; x_wconf {round(100 * score)}"
    return ET.SubElement(parent, "span", {"class": kind, "id": ident, "title": title})


def _ints(bbox: list[float]) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    return x0, y0, max(x1, x0 + 1), max(y1, y0 + 1)


def _points(bbox: list[float]) -> str:
    """A box as PAGE-XML's clockwise polygon of its four corners."""
    x0, y0, x1, y1 = _ints(bbox)
    return f"{x0},{y0} {x1},{y0} {x1},{y1} {x0},{y1}"


def xml_chars(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (ElementTree escapes `<&>"` but writes these
    as they are, which no XML parser reads)."""
    return NOT_XML.sub("", text)


def _only_xml_chars(root: ET.Element) -> None:
    """Drop the characters XML cannot hold from every text, tail and attribute value below `root`."""
    for element in root.iter():
        if element.text:
            element.text = xml_chars(element.text)
        if element.tail:
            element.tail = xml_chars(element.tail)
        for key, value in element.attrib.items():
            element.attrib[key] = xml_chars(value)


def hocr_string(value: str) -> str:
    """A string property value of an hOCR `title`, double-quoted with `\\` and `"` backslash-escaped,
    so a name holding `"; bbox …` stays one value instead of adding properties of its own."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _xml(root: ET.Element) -> str:
    _only_xml_chars(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def to_hocr(page: Page) -> str:
    html = ET.Element("html", {"xmlns": "http://www.w3.org/1999/xhtml", "xml:lang": "en", "lang": "en"})
    head = ET.SubElement(html, "head")
    ET.SubElement(head, "title").text = page.image
    ET.SubElement(head, "meta", {"http-equiv": "Content-Type", "content": "text/html;charset=utf-8"})
    ET.SubElement(head, "meta", {"name": "ocr-system", "content": "ocrkit"})
    ET.SubElement(head, "meta", {"name": "ocr-capabilities", "content": "ocr_page ocr_line ocrx_word"})
    body = ET.SubElement(html, "body")
    div = ET.SubElement(
        body,
        "div",
        {
            "class": "ocr_page",
            "id": "page_1",
            "title": f"image {hocr_string(page.image)}; bbox 0 0 {page.width} {page.height}; "
            f"ppageno {page.page - 1}",
        },
    )
    for n, line in enumerate(page.lines, 1):
        span = _hocr_span(div, "ocr_line", f"line_{n}", line.bbox, line.score)
        if not line.words:
            span.text = line.text
        for k, word in enumerate(line.words, 1):
            element = _hocr_span(span, "ocrx_word", f"word_{n}_{k}", word.bbox, word.score)
            element.text = word.text  # the indentation between words reads as a space in HTML
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n' + _xml(html).split("\n", 1)[1]
    )


def to_alto(page: Page) -> str:
    ET.register_namespace("", ALTO_NS)
    q = lambda tag: f"{{{ALTO_NS}}}{tag}"  # noqa: E731
    alto = ET.Element(
        q("alto"),
        {f"{{{XSI_NS}}}schemaLocation": f"{ALTO_NS} http://www.loc.gov/standards/alto/v4/alto-4-2.xsd"},
    )
    desc = ET.SubElement(alto, q("Description"))
    ET.SubElement(desc, q("MeasurementUnit")).text = "pixel"
    ET.SubElement(ET.SubElement(desc, q("sourceImageInformation")), q("fileName")).text = page.image
    layout = ET.SubElement(alto, q("Layout"))
    pg = ET.SubElement(
        layout,
        q("Page"),
        {
            "ID": "page_1",
            "PHYSICAL_IMG_NR": str(page.page),
            "WIDTH": str(page.width),
            "HEIGHT": str(page.height),
        },
    )
    space = ET.SubElement(
        pg, q("PrintSpace"), {"HPOS": "0", "VPOS": "0", "WIDTH": str(page.width), "HEIGHT": str(page.height)}
    )
    block = ET.SubElement(space, q("TextBlock"), {"ID": "block_1"})
    for n, line in enumerate(page.lines, 1):
        x0, y0, x1, y1 = _ints(line.bbox)
        geom = {"HPOS": str(x0), "VPOS": str(y0), "WIDTH": str(x1 - x0), "HEIGHT": str(y1 - y0)}
        tl = ET.SubElement(block, q("TextLine"), {"ID": f"line_{n}", **geom})
        if not line.words:
            attrs = {"ID": f"string_{n}", **geom, "CONTENT": line.text, "WC": f"{line.score:.4f}"}
            ET.SubElement(tl, q("String"), attrs)
        for k, word in enumerate(line.words, 1):
            if k > 1:  # the space between two words, from the end of one to the start of the next
                before = _ints(line.words[k - 2].bbox)[2]
                gap = max(0, _ints(word.bbox)[0] - before)
                ET.SubElement(tl, q("SP"), {"HPOS": str(before), "VPOS": str(y0), "WIDTH": str(gap)})
            wx0, wy0, wx1, wy1 = _ints(word.bbox)
            wgeom = {"HPOS": str(wx0), "VPOS": str(wy0), "WIDTH": str(wx1 - wx0), "HEIGHT": str(wy1 - wy0)}
            attrs = {"ID": f"string_{n}_{k}", **wgeom, "CONTENT": word.text, "WC": f"{word.score:.4f}"}
            ET.SubElement(tl, q("String"), attrs)
    return _xml(alto)


def to_page_xml(page: Page) -> str:
    ET.register_namespace("", PAGE_NS)
    q = lambda tag: f"{{{PAGE_NS}}}{tag}"  # noqa: E731
    root = ET.Element(q("PcGts"), {f"{{{XSI_NS}}}schemaLocation": f"{PAGE_NS} {PAGE_NS}/pagecontent.xsd"})
    meta = ET.SubElement(root, q("Metadata"))
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    ET.SubElement(meta, q("Creator")).text = "ocrkit"
    ET.SubElement(meta, q("Created")).text = now
    ET.SubElement(meta, q("LastChange")).text = now
    pg = ET.SubElement(
        root,
        q("Page"),
        {"imageFilename": page.image, "imageWidth": str(page.width), "imageHeight": str(page.height)},
    )
    region = ET.SubElement(pg, q("TextRegion"), {"id": "region_1"})
    ET.SubElement(
        region, q("Coords"), {"points": f"0,0 {page.width},0 {page.width},{page.height} 0,{page.height}"}
    )
    for n, line in enumerate(page.lines, 1):
        tl = ET.SubElement(region, q("TextLine"), {"id": f"line_{n}"})
        points = (
            " ".join(f"{round(x)},{round(y)}" for x, y in line.polygon)
            if line.polygon
            else _points(line.bbox)
        )
        ET.SubElement(tl, q("Coords"), {"points": points})
        for k, word in enumerate(line.words, 1):
            element = ET.SubElement(tl, q("Word"), {"id": f"word_{n}_{k}"})
            ET.SubElement(element, q("Coords"), {"points": _points(word.bbox)})
            word_equiv = ET.SubElement(element, q("TextEquiv"), {"conf": f"{word.score:.4f}"})
            ET.SubElement(word_equiv, q("Unicode")).text = word.text
        equiv = ET.SubElement(tl, q("TextEquiv"), {"conf": f"{line.score:.4f}"})
        ET.SubElement(equiv, q("Unicode")).text = line.text
    return _xml(root)


FORMATS = ("txt", "json", "hocr", "alto", "page", "overlay", "pdf")
EXTENSIONS = {
    "txt": "txt",
    "json": "json",
    "hocr": "hocr",
    "alto": "alto.xml",
    "page": "page.xml",
    "overlay": "overlay.png",
    "pdf": "pdf",
}


def render(page: Page, fmt: str, image: np.ndarray | None = None) -> str | bytes:
    """`page` in the format named `fmt` (one of FORMATS), as `ocrkit infer` writes it to
    `<name>.<EXTENSIONS[fmt]>`; "overlay" draws the boxes on the page's RGB `image`, so it needs it, and
    "pdf" makes a one-page searchable PDF of it (ocrkit.pages.searchable_pdf; `ocrkit infer` writes one
    PDF per input document instead)."""
    if fmt == "pdf":
        if image is None:
            raise ValueError("the pdf format puts the page image under its text: pass image=")
        from ocrkit.pages.searchable_pdf import SearchablePdf

        document = SearchablePdf()
        document.add_picture(page, image)
        return document.to_bytes()
    if fmt == "overlay":
        if image is None:
            raise ValueError("the overlay format draws on the page image: pass image=")
        from ocrkit.pages.overlay import overlay_png

        return overlay_png(image, page)
    writers = {
        "txt": lambda p: p.text + "\n",
        "json": Page.to_json,
        "hocr": to_hocr,
        "alto": to_alto,
        "page": to_page_xml,
    }
    if fmt not in writers:
        raise ValueError(f"unknown format {fmt!r} ({', '.join(FORMATS)})")
    return writers[fmt](page)
