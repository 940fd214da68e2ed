"""Searchable PDFs: the text layer lies where the words are, can be searched and copied, and a PDF
input keeps its own pages. Checked with PDFium (what Chromium shows PDFs with) and, where installed,
poppler's pdftotext."""

import shutil
import subprocess

import numpy as np
import pypdfium2 as pdfium
import pytest
from fpdf import FPDF
from PIL import Image
from pypdf import PdfReader, PdfWriter

from ocrkit.pages.document import Line, Page, Word
from ocrkit.pages.searchable_pdf import SearchablePdf, pdf_page_sizes

WORDS = [("Quittung", [40, 30, 190, 60]), ("Nr.", [205, 30, 250, 60]), ("1784", [265, 30, 340, 60])]
SECOND = [("Zwoͤlftes", [40, 100, 210, 130]), ("ſtück", [225, 100, 330, 130]), ("✓", [345, 100, 370, 130])]


def page(width: int = 400, height: int = 200) -> Page:
    lines = [
        Line(
            [40, 30, 340, 60], " ".join(t for t, _ in WORDS), 0.9, words=[Word(b, t, 0.9) for t, b in WORDS]
        ),
        Line(
            [40, 100, 370, 130],
            " ".join(t for t, _ in SECOND),
            0.9,
            words=[Word(b, t, 0.9) for t, b in SECOND],
        ),
        Line([40, 150, 200, 180], "no words placed", 0.5),
    ]
    return Page("p.png", width, height, lines=lines)


def text_in(pdf_page, box_px, px_to_pt: float) -> str:
    """PDFium's text inside a box given in page pixels (top-left origin), slightly enlarged."""
    height = pdf_page.get_height()
    x0, y0, x1, y1 = (v * px_to_pt for v in box_px)
    pad = 2.0
    return pdf_page.get_textpage().get_text_bounded(x0 - pad, height - y1 - pad, x1 + pad, height - y0 + pad)


def test_every_word_is_found_inside_its_box_and_the_text_copies_as_read():
    document = SearchablePdf()
    document.add_picture(page(), np.full((200, 400, 3), 255, np.uint8), dpi=144)
    pdf = pdfium.PdfDocument(document.to_bytes())
    assert len(pdf) == 1 and pdf[0].get_size() == pytest.approx((200.0, 100.0))  # 400 x 200 px at 144 dpi
    for text, box in WORDS + SECOND:
        assert text_in(pdf[0], box, 0.5).strip() == text
    copied = pdf[0].get_textpage().get_text_range()
    assert " ".join(copied.split()) == "Quittung Nr. 1784 Zwoͤlftes ſtück ✓ no words placed"


def test_a_pdf_input_keeps_its_pages_and_gets_the_text_over_them(tmp_path):
    source = FPDF(unit="pt")
    for k in range(2):
        source.add_page(format=(300, 150))
        source.set_font("helvetica", size=12)
        source.text(10, 140, f"footer {k}")  # the page's own text: must survive
    original = tmp_path / "in.pdf"
    source.output(str(original))
    writer = PdfWriter(clone_from=PdfReader(original))
    writer.pages[1].rotate(90)  # shown 150 pt wide, 300 pt tall
    writer.write(original)
    assert pdf_page_sizes(original) == [(300.0, 150.0), (150.0, 300.0)]

    document = SearchablePdf(original=original)
    first = Page(
        "in.pdf",
        600,
        300,
        lines=[Line([20, 20, 200, 60], "Hello", 1.0, words=[Word([20, 20, 200, 60], "Hello")])],
    )
    second = Page("in.pdf", 300, 600, page=2, lines=[Line([20, 500, 280, 560], "World", 1.0)])
    document.add_pdf_page(first, 300, 150)
    document.add_pdf_page(second, 150, 300)
    pdf = pdfium.PdfDocument(document.to_bytes())
    assert len(pdf) == 2
    assert "footer 0" in pdf[0].get_textpage().get_text_range()
    assert "footer 1" in pdf[1].get_textpage().get_text_range()
    assert text_in(pdf[0], [20, 20, 200, 60], 0.5).strip() == "Hello"
    assert pdf[1].get_size() == pytest.approx((150.0, 300.0))  # the rotation folded into the page
    assert text_in(pdf[1], [20, 500, 280, 560], 0.5).strip() == "World"


def test_pages_with_nothing_read_still_come_out():
    document = SearchablePdf()
    for k in range(3):
        document.add_picture(Page("t.tif", 100, 50, page=k + 1), np.zeros((50, 100, 3), np.uint8))
    pdf = pdfium.PdfDocument(document.to_bytes())
    assert len(pdf) == 3 and pdf[2].get_textpage().get_text_range() == ""


@pytest.mark.slow
def test_infer_writes_one_searchable_pdf_per_input_with_the_text_it_read(tmp_path, capsys):
    """The shipped models on the receipt sample and on a 2-page TIFF of it: the PDF's text is the text
    `--format txt` wrote (CER ≤ 0.005), and pdftotext finds every word inside its box."""
    from fixtures import SAMPLES, run_cli
    from rapidfuzz.distance import Levenshtein

    receipt = SAMPLES / "synthetic_receipt.jpg"
    pages = [Image.open(receipt).convert("RGB"), Image.open(receipt).convert("L").convert("RGB")]
    pages[0].save(tmp_path / "two.tif", save_all=True, append_images=pages[1:])
    shutil.copy(receipt, tmp_path / "receipt.jpg")
    out = tmp_path / "out"
    code, _, err = run_cli(["infer", tmp_path, "--out", out, "--format", "pdf,txt,json"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out.glob("*.pdf")) == ["receipt.jpg.pdf", "two.tif.pdf"]
    assert len(pdfium.PdfDocument(out / "two.tif.pdf")) == 2
    assert (out / "receipt.jpg.pdf").read_bytes().count(receipt.read_bytes()[:64]) == 1  # the JPEG as it is
    pdf = pdfium.PdfDocument(out / "receipt.jpg.pdf")
    copied = " ".join(pdf[0].get_textpage().get_text_range().split())
    read = " ".join((out / "receipt.jpg.txt").read_text().split())
    assert Levenshtein.normalized_distance(copied, read) <= 0.005
    if shutil.which("pdftotext"):
        import json

        words = [
            w for line in json.loads((out / "receipt.jpg.json").read_text())["lines"] for w in line["words"]
        ]
        pt = 72 / 300  # the JPEG states no resolution: 300 dpi
        found = subprocess.run(
            ["pdftotext", "-bbox", out / "receipt.jpg.pdf", "-"], capture_output=True, text=True, check=True
        ).stdout
        boxes = _pdftotext_words(found)
        inside = 0
        for word in words:
            x0, y0, x1, y1 = (v * pt for v in word["bbox"])
            inside += any(
                t == word["text"] and x0 - 1 <= (a + c) / 2 <= x1 + 1 and y0 - 1 <= (b + d) / 2 <= y1 + 1
                for t, (a, b, c, d) in boxes
            )
        assert inside == len(words)


def _pdftotext_words(html: str) -> list[tuple[str, tuple[float, ...]]]:
    import re
    from html import unescape

    pattern = r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>'
    return [(unescape(m[4]), tuple(float(v) for v in m[:4])) for m in re.findall(pattern, html)]


def test_infer_refuses_pdf_on_standard_output(tmp_path, models, capsys):
    from fixtures import page_image, run_cli

    Image.fromarray(page_image()).save(tmp_path / "p.png")
    code, out, err = run_cli(["infer", tmp_path / "p.png", "--format", "pdf", *models], capsys)
    assert code != 0 and out == "" and "--format pdf writes a PDF file per input: give --out DIR" in err


def test_picture_bytes_are_embedded_as_they_are_only_when_upright(tmp_path):
    from ocrkit.commands.pdf_documents import _picture
    from ocrkit.images.io import PageSource

    image = Image.fromarray(np.full((40, 60, 3), 128, np.uint8))
    image.save(tmp_path / "a.jpg", dpi=(150, 150))
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90 degrees
    image.save(tmp_path / "b.jpg", exif=exif)
    picture, dpi = _picture(PageSource(tmp_path / "a.jpg", "a.jpg"))
    assert picture == tmp_path / "a.jpg" and dpi == pytest.approx(150)
    picture, dpi = _picture(PageSource(tmp_path / "b.jpg", "b.jpg"))
    assert isinstance(picture, np.ndarray) and picture.shape[:2] == (60, 40) and dpi is None


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_text_of_a_page_sent_turned_runs_with_its_print(turns):
    """Words read on a page sent turned lie in their boxes on the page as sent, and copy as read."""
    from ocrkit.images.frame import boxes_to_sent
    from ocrkit.pages.document import Orientation

    upright = page()
    width, height = (upright.height, upright.width) if turns % 2 else (upright.width, upright.height)
    sent = Page("p.png", width, height, orientation=Orientation(90 * turns, 1.0, 90 * turns))
    for line in upright.lines:
        words = [
            Word(boxes_to_sent(np.array([w.bbox]), turns, width, height)[0].tolist(), w.text)
            for w in line.words
        ]
        box = boxes_to_sent(np.array([line.bbox]), turns, width, height)[0].tolist()
        sent.lines.append(Line(box, line.text, 0.9, words=words))
    document = SearchablePdf()
    document.add_picture(sent, np.full((height, width, 3), 255, np.uint8), dpi=144)
    pdf = pdfium.PdfDocument(document.to_bytes())
    for text, box in WORDS:
        turned_box = boxes_to_sent(np.array([box]), turns, width, height)[0]
        assert text_in(pdf[0], turned_box, 0.5).strip() == text
    copied = pdf[0].get_textpage().get_text_range().split()  # PDFium orders text by where it lies
    assert sorted(copied) == sorted(" ".join(x.text for x in upright.lines).split())
