"""Readers for line-level ground truth as annotation tools export it: PAGE-XML, ALTO, SROIE CSV, line pairs.

Each reader turns one annotation file into a `GtPage` (image path + line polygons + raw text); the
importer owns everything after that (text rules, reserved pages, crops, COCO). Formats are recognised by
content, not by extension: eScriptorium, Transkribus and OCR-D all write `.xml`. Every file a reader
opens passes the one path guard (paths.py): it stays inside the source folder `root`.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ocrkit.data.ground_truth.paths import OUTSIDE, guard, image_siblings, inside
from ocrkit.util.errors import InputError

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
    stated_size: tuple[float, float] | None = None  # (width, height) the annotation gives its image, if any
    # skipped parts as (reason, "file:row: problem"): the reason is counted, the message warned
    problems: list[tuple[str, str]] = field(default_factory=list)


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


def sniff_format(path: Path, root: Path) -> str | None:
    """The ground-truth format of `path` by its content, or None when it is none of ours; an XML file that
    cannot be read raises InputError (so it is counted as unreadable, not as "no ground truth")."""
    name = path.name.lower()
    if name.endswith(GT_SUFFIX) or (name.endswith(".txt") and _line_image(path, root) is not None):
        return "lines"
    if name.endswith(".csv") and _sroie_image(path, root) is not None:
        return "sroie"
    if not name.endswith(".xml"):
        return None
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    if "PcGts" in head or "primaresearch.org/PAGE" in head:
        return "page"
    if "<alto" in head or "loc.gov/standards/alto" in head:
        return "alto"
    return None


def read_page(path: Path, fmt: str, root: Path) -> GtPage:
    """Parse one annotation file of format `fmt` found under the source folder `root`; InputError names
    the file and the problem."""
    guard(root, path)
    if fmt == "lines":
        return _read_line_pair(path, root)
    if fmt == "sroie":
        return _read_sroie(path, root)
    try:
        tree = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise InputError(path, f"malformed XML ({exc})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    return _read_page_xml(path, tree, root) if fmt == "page" else _read_alto(path, tree, root)


def _resolve_image(xml_path: Path, name: str, root: Path) -> Path:
    """The image an annotation names, taken literally (never as a glob): by its relative path or its bare
    name beside the annotation, or, for OCR-D workspaces (OCR-D-GT-PAGE/ beside OCR-D-IMG/), in a sibling
    folder; only files inside `root` count."""
    if not name:
        raise InputError(xml_path, "names no image file")
    candidate = Path(name)
    here, above = xml_path.parent, xml_path.parent.parent
    places = [here / candidate, here / candidate.name, above / candidate]
    if inside(root, above):
        places += [d / candidate.name for d in sorted(above.iterdir()) if d.is_dir() and d != here]
    else:
        places += [d / candidate.name for d in image_siblings(root)]
    outside = None
    for path in places:
        if path.is_file():
            if inside(root, path):
                return path
            outside = outside or path
    if outside is not None:
        raise InputError(xml_path, f"image {OUTSIDE} ({name!r})")
    raise InputError(xml_path, f"image not found next to it ({name!r})")


def _point(elem: ET.Element, path: Path) -> tuple[float, float]:
    try:
        return float(elem.get("x", 0)), float(elem.get("y", 0))
    except ValueError:
        raise InputError(path, f"malformed point ({elem.get('x')!r}, {elem.get('y')!r})") from None


def _read_page_xml(path: Path, tree: ET.Element, root: Path) -> GtPage:
    pages = list(_iter(tree, "Page"))
    if not pages:
        raise InputError(path, "PAGE-XML without a <Page>")
    page = GtPage(_resolve_image(path, pages[0].get("imageFilename", ""), root), path, "page")
    page.stated_size = _size(pages[0].get("imageWidth"), pages[0].get("imageHeight"))
    for line in _iter(pages[0], "TextLine"):
        coords = _children(line, "Coords")
        if not coords:
            continue
        if coords[0].get("points") is not None:
            polygon = _points(coords[0].get("points", ""), path)
        else:  # PAGE 2010-era <Coords><Point x= y=/></Coords>
            polygon = [_point(p, path) for p in _children(coords[0], "Point")]
        if len(polygon) < 2:
            continue
        page.lines.append(GtLine(polygon, _page_line_text(line)))
    return page


def _size(width: str | None, height: str | None) -> tuple[float, float] | None:
    """A stated image size, or None when it is missing, malformed, zero or not finite (tools write 0)."""
    try:
        size = float(width or ""), float(height or "")
    except ValueError:
        return None
    return size if all(0 < v < float("inf") for v in size) else None


def _page_line_text(line: ET.Element) -> str | None:
    """The line's own TextEquiv (index 0 / first), else its words' joined by spaces."""
    equivs = _children(line, "TextEquiv")
    if equivs:
        best = min(equivs, key=_index)
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


def _index(equiv: ET.Element) -> int:
    """A TextEquiv's `index` (the first transcription is 0); a malformed one ranks last."""
    try:
        return int(equiv.get("index", "0") or 0)
    except ValueError:
        return 1 << 30


def _read_alto(path: Path, tree: ET.Element, root: Path) -> GtPage:
    names = [e.text.strip() for e in _iter(tree, "fileName") if e.text and e.text.strip()]
    page = GtPage(_resolve_image(path, names[0] if names else "", root), path, "alto")
    units = [e.text.strip() for e in _iter(tree, "MeasurementUnit") if e.text]
    alto_pages = list(_iter(tree, "Page"))
    if alto_pages and units[:1] in ([], ["pixel"]):  # other units are not the image's pixels
        page.stated_size = _size(alto_pages[0].get("WIDTH"), alto_pages[0].get("HEIGHT"))
    for line in _iter(tree, "TextLine"):
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


def _sroie_image(csv_path: Path, root: Path) -> Path | None:
    """box/NNN.csv → img/NNN.jpg (or an image beside the CSV), inside `root`."""
    for folder in (csv_path.parent.parent / "img", csv_path.parent):
        for suffix in (".jpg", ".jpeg", ".png"):
            path = folder / (csv_path.stem + suffix)
            if path.is_file() and inside(root, path):
                return path
    return None


def _read_sroie(path: Path, root: Path) -> GtPage:
    image = _sroie_image(path, root)
    if image is None:
        raise InputError(path, "no matching image (img/NNN.jpg)")
    try:
        raw = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    page = GtPage(image, path, "sroie")
    rows = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        try:
            rows.append(line.decode("utf-8"))
        except UnicodeDecodeError:  # replaced bytes would train on U+FFFD: skip the row, say so
            page.problems.append(("CSV row is not UTF-8 text", f"{path}:{n}: not UTF-8 text"))
            rows.append("")
    for n, row in enumerate(csv.reader(io.StringIO("\n".join(rows))), 1):
        if not row or not "".join(row).strip():
            continue
        if len(row) < 9:
            problem = f"{path}:{n}: expected 8 coordinates and a text, got {len(row)} fields"
            page.problems.append(("CSV row malformed", problem))
            continue
        try:
            coords = [float(v) for v in row[:8]]
        except ValueError:
            page.problems.append(("CSV row malformed", f"{path}:{n}: coordinates are not numbers"))
            continue
        text = ",".join(row[8:])  # the text itself may contain commas
        page.lines.append(GtLine(list(zip(coords[0::2], coords[1::2], strict=True)), text))
    return page


def _line_image(text_path: Path, root: Path) -> Path | None:
    """NAME.gt.txt or NAME.txt → NAME.png|tif|jpg beside it (InputError if it leads outside `root`)."""
    name = text_path.name
    stem = name[: -len(GT_SUFFIX)] if name.lower().endswith(GT_SUFFIX) else text_path.stem
    for suffix in LINE_IMAGE_SUFFIXES:
        image = text_path.with_name(stem + suffix)
        if image.is_file():
            return guard(root, image, named_in=text_path)
    return None


def _read_line_pair(path: Path, root: Path) -> GtPage:
    image = _line_image(path, root)
    if image is None:
        raise InputError(path, "no line image beside it (NAME.png|tif|jpg)")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot read text ({exc})") from None
    return GtPage(image, path, "lines", [GtLine([], text)], is_line_image=True)
