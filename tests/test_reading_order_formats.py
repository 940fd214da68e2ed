import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ocrkit.pages.document import Line, Page, Word
from ocrkit.pages.formats import ALTO_NS, EXTENSIONS, FORMATS, PAGE_NS, render, to_alto, to_hocr, to_page_xml
from ocrkit.pages.outputs import write_atomic
from ocrkit.pages.reading_order import reading_order, same_row


def two_column_page():
    """Heading across the page, then two columns of 6 lines with identical line pitch (rows align)."""
    boxes, labels = [[50, 20, 750, 50]], ["title"]
    for col, x0 in (("L", 50), ("R", 420)):
        for r in range(6):
            y = 80 + 30 * r
            boxes.append([x0, y, x0 + 330 - (40 if r == 5 else 0), y + 20])
            labels.append(f"{col}{r}")
    return np.array(boxes, np.float32), labels


def test_two_columns_read_column_by_column():
    boxes, labels = two_column_page()
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(boxes))
    got = [labels[perm[i]] for i in reading_order(boxes[perm])]
    assert got == ["title"] + [f"L{r}" for r in range(6)] + [f"R{r}" for r in range(6)]


def test_receipt_rows_read_item_then_price():
    boxes, labels = [], []
    for r in range(8):
        y = 100 + 25 * r + (2 if r % 2 else 0)  # slightly uneven baselines, as on a scan
        boxes += [[30, y, 200 + 10 * (r % 3), y + 18], [300, y + 1, 360, y + 19]]
        labels += [f"item{r}", f"price{r}"]
    boxes = np.array(boxes, np.float32)
    perm = np.random.default_rng(1).permutation(len(boxes))
    got = [labels[perm[i]] for i in reading_order(boxes[perm])]
    assert got == [x for r in range(8) for x in (f"item{r}", f"price{r}")]


def test_a_short_box_between_two_lines_does_not_join_them_into_one_row():
    # a mark at the end of line 1, hanging low, overlaps half its own height with each line: by overlap
    # alone lines 1 and 2 became one row and read interleaved (line 2 first, it starts further left)
    line1, mark, line2 = [50, 100, 700, 140], [700, 122, 740, 150], [40, 136, 690, 176]
    assert reading_order(np.array([line1, mark, line2], np.float32)) == [0, 1, 2]
    assert not same_row(line1, mark) and not same_row(mark, line2)
    assert same_row([50, 100, 700, 140], [710, 104, 760, 138])  # a price on the same line still joins


def sample_page():
    return Page(
        image="p.png",
        width=800,
        height=300,
        lines=[
            Line([10, 10, 200, 30], "Hello & <world>", 0.9, 0.95, 0.95),
            Line([250, 11, 300, 29], "12.50", 0.8, 0.9, 0.89),
            Line([10, 50, 400, 70], "Grüße — ſchön", 0.7, 0.8, 0.875),
        ],
    )


def test_text_joins_rows_and_json_shape():
    page = sample_page()
    assert page.text == "Hello & <world> 12.50\nGrüße — ſchön"
    d = json.loads(page.to_json())
    assert set(d) >= {"image", "page", "width", "height", "seconds", "lines"}
    assert set(d["lines"][0]) >= {"bbox", "text", "score", "det_score", "rec_score"}
    assert Page.from_dict(d).lines[2].text == "Grüße — ſchön"


def test_xml_formats_parse_and_carry_the_lines():
    page = sample_page()
    hocr = ET.fromstring(to_hocr(page).split("\n", 2)[2])
    spans = [e for e in hocr.iter() if e.get("class") == "ocr_line"]
    assert [s.text for s in spans] == [ln.text for ln in page.lines]
    assert spans[0].get("title").startswith("bbox 10 10 200 30")
    alto = ET.fromstring(to_alto(page).encode())
    strings = alto.findall(f".//{{{ALTO_NS}}}String")
    assert [s.get("CONTENT") for s in strings] == [ln.text for ln in page.lines]
    assert strings[1].get("HPOS") == "250" and strings[1].get("WIDTH") == "50"
    pxml = ET.fromstring(to_page_xml(page).encode())
    lines = pxml.findall(f".//{{{PAGE_NS}}}TextLine")
    assert lines[2].find(f"{{{PAGE_NS}}}Coords").get("points") == "10,50 400,50 400,70 10,70"
    assert lines[2].find(f".//{{{PAGE_NS}}}Unicode").text == "Grüße — ſchön"


def worded_page():
    """A page whose first line has its words placed."""
    page = sample_page()
    page.lines[0].words = [
        Word([10, 12, 60, 28], "Hello", 0.9),
        Word([70, 12, 85, 28], "&", 0.8),
        Word([95, 11, 198, 29], "<world>", 0.7),
    ]
    return page


def test_json_carries_the_words_and_reads_them_back():
    page = worded_page()
    d = json.loads(page.to_json())
    assert d["lines"][0]["words"][2] == {"bbox": [95.0, 11.0, 198.0, 29.0], "text": "<world>", "score": 0.7}
    assert d["lines"][1]["words"] == []
    back = Page.from_dict(d)
    assert [w.text for w in back.lines[0].words] == ["Hello", "&", "<world>"]
    assert back.lines[0].words[1].bbox == [70.0, 12.0, 85.0, 28.0] and back.to_dict() == d


def test_xml_formats_carry_the_words_with_their_boxes():
    page = worded_page()
    hocr = ET.fromstring(to_hocr(page).split("\n", 2)[2])
    line = next(e for e in hocr.iter() if e.get("class") == "ocr_line")
    words = [e for e in line if e.get("class") == "ocrx_word"]
    assert [w.text for w in words] == ["Hello", "&", "<world>"]
    assert words[0].get("title") == "bbox 10 12 60 28; x_wconf 90"
    assert " ".join("".join(line.itertext()).split()) == "Hello & <world>"  # words apart, as HTML shows
    lines = [e for e in hocr.iter() if e.get("class") == "ocr_line"]
    assert lines[1].text == "12.50" and not list(lines[1])  # a line without words keeps its text

    alto = ET.fromstring(to_alto(page).encode())
    first = alto.find(f".//{{{ALTO_NS}}}TextLine")
    parts = [(e.tag.split("}")[1], e.get("CONTENT"), e.get("HPOS"), e.get("WIDTH")) for e in first]
    assert parts == [
        ("String", "Hello", "10", "50"),
        ("SP", None, "60", "10"),
        ("String", "&", "70", "15"),
        ("SP", None, "85", "10"),
        ("String", "<world>", "95", "103"),
    ]

    pxml = ET.fromstring(to_page_xml(page).encode())
    text_line = pxml.find(f".//{{{PAGE_NS}}}TextLine")
    children = [e.tag.split("}")[1] for e in text_line]
    assert children == ["Coords", "Word", "Word", "Word", "TextEquiv"]  # the schema's order
    word = text_line.find(f"{{{PAGE_NS}}}Word")
    assert word.find(f"{{{PAGE_NS}}}Coords").get("points") == "10,12 60,12 60,28 10,28"
    assert word.find(f".//{{{PAGE_NS}}}Unicode").text == "Hello"


@pytest.mark.parametrize("fmt", ["hocr", "alto", "page"])
def test_xml_formats_drop_characters_xml_cannot_hold(fmt):
    """Control characters in a file name or a reading, lone surrogates and U+FFFE/U+FFFF cannot be
    written in XML 1.0 even escaped: they are dropped, and every output parses."""
    page = Page(
        "ctl\x01na\x1bme\x00.png", 100, 40, lines=[Line([1, 1, 50, 20], "a\x0cb\ud800c\ufffed\tz", 0.9)]
    )
    root = ET.fromstring(render(page, fmt).split("\n", 2)[2] if fmt == "hocr" else render(page, fmt).encode())
    values = [v for e in root.iter() for v in (e.text, *e.attrib.values()) if v]
    assert any("ctlname.png" in v for v in values) and any("abcd\tz" in v for v in values)


def test_hocr_page_title_quotes_the_image_name():
    page = sample_page()
    page.image = 'a"; bbox 0 0 1 1; ppageno 7; x\\'
    hocr = ET.fromstring(to_hocr(page).split("\n", 2)[2])
    title = next(e for e in hocr.iter() if e.get("class") == "ocr_page").get("title")
    quoted = r'"(?:[^"\\]|\\.)*"'  # a double-quoted hOCR string, backslash escapes inside
    name = re.match(rf"image ({quoted}); ", title).group(1)
    assert re.sub(r"\\(.)", r"\1", name[1:-1]) == page.image
    assert re.sub(quoted, "", title) == "image ; bbox 0 0 800 300; ppageno 0"


def test_render_names_every_format_and_the_overlay_needs_the_image():
    page = sample_page()
    image = np.full((page.height, page.width, 3), 255, np.uint8)
    out = {fmt: render(page, fmt, image) for fmt in FORMATS}
    assert set(EXTENSIONS) == set(FORMATS)
    assert out["txt"] == page.text + "\n" and json.loads(out["json"]) == page.to_dict()
    assert out["alto"] == to_alto(page) and out["hocr"] == to_hocr(page)
    assert out["overlay"].startswith(b"\x89PNG") and out["pdf"].startswith(b"%PDF-")
    for fmt in ("overlay", "pdf"):
        with pytest.raises(ValueError, match="image"):
            render(page, fmt)
    with pytest.raises(ValueError, match="unknown format 'tsv'"):
        render(page, "tsv")


def test_write_atomic_leaves_no_temp_files(tmp_path):
    write_atomic(tmp_path / "a" / "x.json", "{}")
    write_atomic(tmp_path / "a" / "x.json", '{"b": 1}')
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["x.json"]
    assert json.loads((tmp_path / "a" / "x.json").read_text()) == {"b": 1}
