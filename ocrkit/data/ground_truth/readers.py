"""Readers for line-level ground truth as annotation tools export it: PAGE-XML, ALTO, SROIE CSV, line pairs.

Each reader turns one annotation file into a `GtPage` (image path + line polygons + raw text); the
importer owns everything after that (text rules, reserved pages, crops, COCO). Formats are recognised by
content, not by extension: eScriptorium, Transkribus and OCR-D all write `.xml`.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ocrkit.errors import InputError

FORMATS = ("page", "alto", "sroie", "lines")
LINE_IMAGE_SUFFIXES = (".png", ".tif", ".tiff", ".jpg", ".jpeg")
GT_SUFFIX = ".gt.txt"


@dataclass
class GtLine:
    polygon: list[tuple[float, float]]  # in the page image's pixels
    text: str | None  # None: a line box without transcription


@dataclass
class GtPage:
    image: Path  # the page (or line) image
    annotation: Path  # the file the lines were read from
    fmt: str
    lines: list[GtLine] = field(default_factory=list)
    is_line_image: bool = False  # line pairs: the image is itself one line
    problems: list[str] = field(default_factory=list)  # skipped parts ("file:row: problem"), to warn about


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(elem: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in elem if _local(c.tag) == name]


def _iter(elem: ET.Element, name: str):
    return (e for e in elem.iter() if _local(e.tag) == name)


def _points(text: str, path: Path) -> list[tuple[float, float]]:
    """PAGE "x,y x,y ..." or ALTO "x y x y ..." / "x,y x,y" → [(x, y), ...]."""
    numbers = text.replace(",", " ").split()
    if len(numbers) < 4 or len(numbers) % 2:
        raise InputError(path, f"malformed polygon points {text[:40]!r}")
    try:
        values = [float(v) for v in numbers]
    except ValueError:
        raise InputError(path, f"malformed polygon points {text[:40]!r}") from None
    return list(zip(values[0::2], values[1::2], strict=True))


def sniff_format(path: Path) -> str | None:
    """The ground-truth format of `path` by its content, or None when it is none of ours."""
    name = path.name.lower()
    if name.endswith(GT_SUFFIX) or (name.endswith(".txt") and _line_image(path) is not None):
        return "lines"
    if name.endswith(".csv") and _sroie_image(path) is not None:
        return "sroie"
    if not name.endswith(".xml"):
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if "PcGts" in head or "primaresearch.org/PAGE" in head:
        return "page"
    if "<alto" in head or "loc.gov/standards/alto" in head:
        return "alto"
    return None


def read_page(path: Path, fmt: str) -> GtPage:
    """Parse one annotation file of format `fmt`; InputError names the file and the problem."""
    if fmt == "lines":
        return _read_line_pair(path)
    if fmt == "sroie":
        return _read_sroie(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise InputError(path, f"malformed XML ({exc})") from None
    return _read_page_xml(path, root) if fmt == "page" else _read_alto(path, root)


def _resolve_image(xml_path: Path, name: str) -> Path:
    if not name:
        raise InputError(xml_path, "names no image file")
    candidate = Path(name)
    for path in (xml_path.parent / candidate, xml_path.parent / candidate.name):
        if path.is_file():
            return path
    # OCR-D workspaces keep XML and images in sibling folders (OCR-D-GT-PAGE/, OCR-D-IMG/)
    for path in (xml_path.parent.parent / candidate, *xml_path.parent.parent.glob(f"*/{candidate.name}")):
        if path.is_file():
            return path
    raise InputError(xml_path, f"image {name!r} not found next to it")


def _read_page_xml(path: Path, root: ET.Element) -> GtPage:
    pages = list(_iter(root, "Page"))
    if not pages:
        raise InputError(path, "PAGE-XML without a <Page>")
    page = GtPage(_resolve_image(path, pages[0].get("imageFilename", "")), path, "page")
    for line in _iter(pages[0], "TextLine"):
        coords = _children(line, "Coords")
        if not coords:
            continue
        if coords[0].get("points") is not None:
            polygon = _points(coords[0].get("points", ""), path)
        else:  # PAGE 2010-era <Coords><Point x= y=/></Coords>
            polygon = [(float(p.get("x", 0)), float(p.get("y", 0))) for p in _children(coords[0], "Point")]
        if len(polygon) < 2:
            continue
        page.lines.append(GtLine(polygon, _page_line_text(line)))
    return page


def _page_line_text(line: ET.Element) -> str | None:
    """The line's own TextEquiv (index 0 / first), else its words' joined by spaces."""
    equivs = _children(line, "TextEquiv")
    if equivs:
        best = min(equivs, key=lambda e: int(e.get("index", "0") or 0))
        unicode = _children(best, "Unicode")
        if unicode and unicode[0].text is not None:
            return unicode[0].text
    words = []
    for word in _children(line, "Word"):
        for equiv in _children(word, "TextEquiv")[:1]:
            unicode = _children(equiv, "Unicode")
            if unicode and unicode[0].text:
                words.append(unicode[0].text)
    return " ".join(words) if words else None


def _read_alto(path: Path, root: ET.Element) -> GtPage:
    names = [e.text.strip() for e in _iter(root, "fileName") if e.text and e.text.strip()]
    page = GtPage(_resolve_image(path, names[0] if names else ""), path, "alto")
    for line in _iter(root, "TextLine"):
        polygon = None
        for shape in _children(line, "Shape"):
            polys = _children(shape, "Polygon")
            if polys and polys[0].get("POINTS"):
                polygon = _points(polys[0].get("POINTS", ""), path)
        if polygon is None:
            try:
                x, y = float(line.get("HPOS", "")), float(line.get("VPOS", ""))
                w, h = float(line.get("WIDTH", "")), float(line.get("HEIGHT", ""))
            except ValueError:
                continue  # no geometry at all: nothing to train on
            polygon = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
        page.lines.append(GtLine(polygon, _alto_line_text(line)))
    return page


def _alto_line_text(line: ET.Element) -> str | None:
    parts: list[str] = []
    for child in line:
        tag = _local(child.tag)
        if tag == "String" and child.get("CONTENT") is not None:
            parts.append(child.get("CONTENT", ""))
        elif tag == "SP":
            parts.append(" ")
    if parts:  # Strings without SP between them are still separate words
        text = ""
        for part in parts:
            if text and part != " " and not text.endswith(" "):
                text += " "
            text += part
        return text
    equivs = _children(line, "TextEquiv")  # some exporters put a line-level transcription here
    return equivs[0].text if equivs and equivs[0].text is not None else None


def _sroie_image(csv_path: Path) -> Path | None:
    """box/NNN.csv → img/NNN.jpg (or an image beside the CSV)."""
    for folder in (csv_path.parent.parent / "img", csv_path.parent):
        for suffix in (".jpg", ".jpeg", ".png"):
            path = folder / (csv_path.stem + suffix)
            if path.is_file():
                return path
    return None


def _read_sroie(path: Path) -> GtPage:
    image = _sroie_image(path)
    if image is None:
        raise InputError(path, "no matching image (img/NNN.jpg)")
    try:
        raw = path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror})") from None
    page = GtPage(image, path, "sroie")
    for n, row in enumerate(csv.reader(io.StringIO(raw)), 1):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 9:
            page.problems.append(f"{path}:{n}: expected 8 coordinates and a text, got {len(row)} fields")
            continue
        try:
            coords = [float(v) for v in row[:8]]
        except ValueError:
            page.problems.append(f"{path}:{n}: coordinates are not numbers")
            continue
        text = ",".join(row[8:])  # the text itself may contain commas
        page.lines.append(GtLine(list(zip(coords[0::2], coords[1::2], strict=True)), text))
    return page


def _line_image(text_path: Path) -> Path | None:
    """NAME.gt.txt or NAME.txt → NAME.png|tif|jpg beside it."""
    name = text_path.name
    stem = name[: -len(GT_SUFFIX)] if name.lower().endswith(GT_SUFFIX) else text_path.stem
    for suffix in LINE_IMAGE_SUFFIXES:
        image = text_path.with_name(stem + suffix)
        if image.is_file():
            return image
    return None


def _read_line_pair(path: Path) -> GtPage:
    image = _line_image(path)
    if image is None:
        raise InputError(path, "no line image beside it (NAME.png|tif|jpg)")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read text ({exc})") from None
    return GtPage(image, path, "lines", [GtLine([], text)], is_line_image=True)
