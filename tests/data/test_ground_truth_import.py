"""`ocrkit data import` / `prepare`: PAGE-XML, ALTO, SROIE CSV and line pairs into COCO pages + line crops."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import cv2
import numpy as np
import pytest

from ocrkit.data.ground_truth.importer import Importer, ImportSettings, find_annotations
from ocrkit.data.ground_truth.readers import read_page, sniff_format
from ocrkit.data.ground_truth.sources import prepare
from ocrkit.data.ground_truth.text_rules import TextRules
from ocrkit.data.reserved import read_reserved

PAGE_NS = {
    "2013": "http://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15",
    "2019": "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15",
}
ALTO_NS = {"v2": "http://www.loc.gov/standards/alto/ns-v2#", "v4": "http://www.loc.gov/standards/alto/ns-v4#"}


def page_image(path: Path, w: int = 400, h: int = 300, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 255, np.uint8)
    img[rng.integers(0, h, 50), rng.integers(0, w, 50)] = 0  # distinct content → distinct hash
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img)
    return path


def write_page_xml(folder: Path, name: str, version: str, image: str) -> Path:
    ns = PAGE_NS[version]
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<PcGts xmlns="{ns}"><Page imageFilename="{image}" imageWidth="400" imageHeight="300">
 <TextRegion id="r1"><Coords points="10,10 390,10 390,120 10,120"/>
  <TextLine id="l1"><Coords points="20,20 200,20 200,50 20,50"/>
   <TextEquiv><Unicode>Cafe\u0301  au   lait</Unicode></TextEquiv></TextLine>
  <TextLine id="l2"><Coords points="20,60 220,55 230,90 25,95"/>
   <Word id="w1"><TextEquiv><Unicode>zwei</Unicode></TextEquiv></Word>
   <Word id="w2"><TextEquiv><Unicode>Wörter</Unicode></TextEquiv></Word></TextLine>
  <TextLine id="l3"><Coords points="20,100 100,100 100,115 20,115"/></TextLine>
 </TextRegion></Page></PcGts>"""
    path = folder / f"{name}.xml"
    path.write_text(xml, encoding="utf-8")
    return path


def write_alto(folder: Path, name: str, version: str, image: str, polygon: bool) -> Path:
    shape = '<Shape><Polygon POINTS="30 40 180 40 180 70 30 70"/></Shape>' if polygon else ""
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="{ALTO_NS[version]}"><Description><sourceImageInformation><fileName>{image}</fileName>
</sourceImageInformation></Description><Layout><Page WIDTH="400" HEIGHT="300"><PrintSpace><TextBlock>
<TextLine HPOS="30" VPOS="40" WIDTH="150" HEIGHT="30">{shape}
 <String CONTENT="Hello"/><SP/><String CONTENT="world,"/><String CONTENT="again"/></TextLine>
</TextBlock></PrintSpace></Page></Layout></alto>"""
    path = folder / f"{name}.xml"
    path.write_text(xml, encoding="utf-8")
    return path


def run_import(files: list[Path], out: Path, reserved: set[str] | None = None, **settings) -> Importer:
    importer = Importer(out, reserved or set(), warn=lambda msg: importer.warnings.append(msg))
    importer.warnings = []
    found, refused = find_annotations(files)
    importer.summary.failed.update(refused)
    importer.add(found, ImportSettings(source="test@0", license="CC0", subset="t", **settings))
    importer.finish()
    return importer


def lines_of(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "lines" / "lines.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("version", ["2013", "2019"])
def test_page_xml_lines_boxes_text_and_crops(tmp_path, version):
    page_image(tmp_path / "src" / "p.png")
    xml = write_page_xml(tmp_path / "src", "p", version, "p.png")
    assert sniff_format(xml, xml.parent) == "page"
    importer = run_import([tmp_path / "src"], tmp_path / "out")
    coco = json.loads((tmp_path / "out" / "pages" / "coco.json").read_text(encoding="utf-8"))
    assert [a["bbox"] for a in coco["annotations"]] == [
        [20, 20, 180, 30],
        [20, 55, 210, 40],
        [20, 100, 80, 15],
    ]
    assert coco["annotations"][1]["segmentation"] == [[20, 60, 220, 55, 230, 90, 25, 95]]
    texts = [a["text"] for a in coco["annotations"]]
    assert texts == ["Café au lait", "zwei Wörter", None]  # NFC, whitespace collapsed, box without text kept
    assert unicodedata.is_normalized("NFC", texts[0])
    assert coco["images"][0]["source"] == "test@0:p.png"  # relative to the source folder, no machine path
    assert coco["images"][0]["license"] == "CC0"
    lines = lines_of(tmp_path / "out")
    assert [r["text"] for r in lines] == ["Café au lait", "zwei Wörter"]  # no crop for the untranscribed line
    crop = cv2.imread(str(tmp_path / "out" / "lines" / lines[0]["image"]), cv2.IMREAD_UNCHANGED)
    assert crop.ndim == 2 and crop.shape == (30 + 6, 180 + 6)  # the box plus 3 px padding, grayscale
    assert importer.summary.boxes["t"] == 3 and importer.summary.lines["t"] == 2


@pytest.mark.parametrize(("version", "polygon"), [("v2", False), ("v4", True), ("v4", False)])
def test_alto_lines_with_and_without_polygons(tmp_path, version, polygon):
    page_image(tmp_path / "src" / "a.jpg")
    xml = write_alto(tmp_path / "src", "a", version, "a.jpg", polygon)
    page = read_page(xml, sniff_format(xml, xml.parent), xml.parent)
    assert page.fmt == "alto" and page.image.name == "a.jpg"
    assert page.lines[0].text == "Hello world, again"  # SP is a space; Strings without SP are words too
    xs, ys = zip(*page.lines[0].polygon, strict=True)
    assert (min(xs), min(ys), max(xs), max(ys)) == (30, 40, 180, 70)


def test_sroie_csv_with_commas_in_the_text_and_pycocotools_loads_it(tmp_path):
    from pycocotools.coco import COCO

    page_image(tmp_path / "data" / "img" / "001.jpg")
    (tmp_path / "data" / "box").mkdir(parents=True)
    (tmp_path / "data" / "box" / "001.csv").write_text(
        "10,10,120,10,120,30,10,30,TOTAL: 1,234.50\n15,40,90,40,90,60,15,60,CASH\nx,1,2\n", encoding="utf-8"
    )
    importer = run_import([tmp_path / "data"], tmp_path / "out", rules=TextRules(case_sensitive=False))
    (warning,) = importer.warnings  # the bad row is skipped, the rest imports
    csv_file = tmp_path / "data" / "box" / "001.csv"
    assert warning == f"{csv_file}:3: expected 8 coordinates and a text, got 3 fields (skipped)"
    coco = COCO(str(tmp_path / "out" / "pages" / "coco.json"))
    anns = coco.loadAnns(coco.getAnnIds())
    assert [a["text"] for a in anns] == ["TOTAL: 1,234.50", "CASH"]
    assert anns[0]["bbox"] == [10, 10, 110, 20]
    assert all(r["case_sensitive"] is False for r in lines_of(tmp_path / "out"))
    # the page is scored lower-case too: upper-case labels of mixed-case print are not errors
    from ocrkit.evaluation import is_case_sensitive

    (image,) = coco.dataset["images"]
    assert image["case_sensitive"] is False and not is_case_sensitive(coco, image)


def test_line_pairs_and_reserved_files_are_refused(tmp_path):
    src = tmp_path / "lines"
    src.mkdir()
    for i, text in enumerate(["erste Zeile", "zweite Zeile"]):
        cv2.imwrite(str(src / f"l{i}.png"), np.full((20, 80 + i), 200, np.uint8))
        (src / f"l{i}.gt.txt").write_text(text + "\n", encoding="utf-8")
    reserved_file = tmp_path / "reserved.tsv"
    digest = hashlib.sha256((src / "l1.png").read_bytes()).hexdigest()
    reserved_file.write_text(f"# comment\nsha256\tkind\tsource\n{digest}\tdev\tx\n", encoding="utf-8")
    importer = run_import([src], tmp_path / "out", read_reserved(reserved_file))
    assert [r["text"] for r in lines_of(tmp_path / "out")] == ["erste Zeile"]
    assert importer.summary.refused == 1


def test_a_duplicate_image_is_imported_once(tmp_path):
    for folder in ("a", "b"):  # the same page reached through two copies
        page_image(tmp_path / folder / "p.png")
        write_page_xml(tmp_path / folder, "p", "2019", "p.png")
    importer = run_import([tmp_path / "a", tmp_path / "b"], tmp_path / "out")
    assert importer.summary.pages["t"] == 1 and importer.summary.duplicates == 1


def test_split_is_by_document_and_stable_across_runs(tmp_path):
    src = tmp_path / "src"
    for i in range(30):
        page_image(src / f"p{i}.png", seed=i)
        write_page_xml(src, f"p{i}", "2019", f"p{i}.png")
    splits = []
    for run in ("one", "two"):
        run_import([src], tmp_path / run, val_share=0.3, root=src)
        coco = json.loads((tmp_path / run / "pages" / "coco.json").read_text(encoding="utf-8"))
        splits.append({im["source"]: im["split"] for im in coco["images"]})
        by_page: dict[str, set] = {}
        for rec in lines_of(tmp_path / run):
            by_page.setdefault(rec["source"], set()).add(rec["split"])
        assert all(len(s) == 1 for s in by_page.values())  # never splits a page
    assert splits[0] == splits[1] and set(splits[0].values()) == {"train", "val"}
    val = json.loads((tmp_path / "one" / "pages" / "coco_val.json").read_text(encoding="utf-8"))
    assert {im["split"] for im in val["images"]} == {"val"}


def test_malformed_xml_is_one_warning_and_the_good_files_still_import(tmp_path):
    page_image(tmp_path / "src" / "p.png")
    write_page_xml(tmp_path / "src", "p", "2019", "p.png")
    (tmp_path / "src" / "broken.xml").write_text('<PcGts xmlns="x/PAGE/"><Page', encoding="utf-8")
    importer = run_import([tmp_path / "src"], tmp_path / "out")
    assert importer.summary.pages["t"] == 1 and importer.summary.failed == {"malformed XML": 1}
    assert len(importer.warnings) == 1 and "broken.xml" in importer.warnings[0]


def test_markup_rules_strip_map_drop_and_count():
    rules = TextRules(replace={"ſ": "s"}, strip=[r"\^"], drop=[">.*<"], markup=r"[⟦⟧]")
    assert rules.apply("le^r juin") == ("ler juin", None)
    assert rules.apply("Geſetz") == ("Gesetz", None)
    assert rules.apply("mot >barré< ici") == (None, "dropped by a source rule")
    assert rules.apply("⟦illisible⟧") == (None, "markup left after the rules")


def test_ligatures_and_fraktur_hyphens_become_letters_and_other_private_use_lines_are_dropped():
    rules = TextRules()
    assert rules.apply("ni\uf502t wo\uf4f9te ſelb\ueada") == ("nicht wollte ſelbſt", None)
    assert rules.apply("h\ue42ctte") == ("ha\u0364tte", None)  # e above: base letter + U+0364, as OCR-D
    assert rules.apply("Ka\u2e17 kra\ufb00t ho\ua75bes") == ("Ka- krafft hores", None)
    assert rules.apply("Ita\ue8bf") == (None, "private-use character without a plain reading (U+E8BF)")


def test_raised_abbreviation_letters_read_plain_and_characters_the_tokenizer_lacks_drop_the_line():
    rules = TextRules()
    assert rules.apply("M\u02b3 Dupont, 2\u1d49 étage") == ("Mr Dupont, 2e étage", None)
    # decomposed accents are composed first (NFC), so they are readable
    assert rules.apply("e\u0301te\u0301") == ("été", None)
    assert rules.apply("q\u0303 \u204a alia") == (None, "character outside the tokenizer (U+0303)")
    assert rules.apply("λόγος") == (None, "character outside the tokenizer (U+03BB)")


@pytest.mark.slow
def test_cli_import_and_prepare_with_a_sources_file(tmp_path):
    clones = tmp_path / "clones"
    repo = clones / "owner+books"
    page_image(repo / "data" / "p.png")
    write_page_xml(repo / "data", "p", "2019", "p.png")
    (repo / "data" / "skip").mkdir()
    write_page_xml(repo / "data" / "skip", "q", "2019", "../p.png")
    sources = [
        {
            "repo": "owner/books",
            "commit": "abc",
            "license": "CC BY 4.0",
            "subset": "books",
            "include": ["data/*.xml"],
        },
        {"repo": "owner/absent", "commit": "def", "license": "x", "subset": "none"},
    ]
    (tmp_path / "sources.yaml").write_text(json.dumps({"sources": sources}), encoding="utf-8")
    importer = prepare(tmp_path / "sources.yaml", clones, tmp_path / "real", set())
    assert importer.summary.pages["books"] == 1  # data/skip/ is outside the include glob
    card = (tmp_path / "real" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "| books | `owner/books` @ `abc` | CC BY 4.0 | 1 | 3 | 2 |" in card
    assert (tmp_path / "real" / "lines" / "books_train.jsonl").is_file() or (
        tmp_path / "real" / "lines" / "books_val.jsonl"
    ).is_file()
    cli = [sys.executable, "-m", "ocrkit.cli", "data", "import", "--no-reserved"]
    ok = subprocess.run(
        [*cli, str(repo / "data"), "--out", str(tmp_path / "o")], capture_output=True, text=True
    )
    assert ok.returncode == 0 and "1 pages, 3 line boxes, 2 line crops" in ok.stdout
    bad = subprocess.run(
        [*cli, str(tmp_path / "sources.yaml"), "--out", str(tmp_path / "o2")], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "no ground truth found" in bad.stderr and "Traceback" not in bad.stderr


# --- hostile ground truth: nothing outside the source folder, one warning per bad file, manifests always ---


def page_xml_with(folder: Path, name: str, image: str, points: list[str]) -> Path:
    """A PAGE-XML naming `image` with one line per polygon `points` string, texts L0, L1, …"""
    lines = "".join(
        f'<TextLine><Coords points="{p}"/><TextEquiv><Unicode>L{i}</Unicode></TextEquiv></TextLine>'
        for i, p in enumerate(points)
    )
    path = folder / f"{name}.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'<PcGts xmlns="{PAGE_NS["2019"]}"><Page imageFilename="{image}"><TextRegion>{lines}'
        "</TextRegion></Page></PcGts>",
        encoding="utf-8",
    )
    return path


def strict_json(path: Path):
    """json.loads that refuses NaN/Infinity, as strict readers of COCO files do."""

    def refuse(name: str):
        raise ValueError(f"{path} holds {name}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_inside_follows_symlinks(tmp_path):
    from ocrkit.data.ground_truth.paths import guard, inside

    (tmp_path / "src").mkdir()
    (tmp_path / "secret.txt").write_text("x", encoding="utf-8")
    (tmp_path / "src" / "in.txt").write_text("y", encoding="utf-8")
    (tmp_path / "src" / "link_out").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "src" / "link_in").symlink_to(tmp_path / "src" / "in.txt")
    root = tmp_path / "src"
    assert inside(root, root / "in.txt") and inside(root, root / "link_in")
    assert not inside(root, root / "link_out") and not inside(root, root / ".." / "secret.txt")
    with pytest.raises(Exception, match="link_out: leads outside the source folder$"):
        guard(root, root / "link_out")


def test_symlinked_transcription_and_image_outside_the_source_are_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:*:19000:0:99999:7:::", encoding="utf-8")
    cv2.imwrite(str(outside / "private.png"), np.full((20, 90), 100, np.uint8))
    src = tmp_path / "src"
    src.mkdir()
    cv2.imwrite(str(src / "a.png"), np.full((20, 80), 200, np.uint8))
    (src / "a.gt.txt").symlink_to(outside / "secret.txt")  # a transcription that is a system file
    (src / "b.png").symlink_to(outside / "private.png")  # a line image from elsewhere
    (src / "b.gt.txt").write_text("private", encoding="utf-8")
    cv2.imwrite(str(src / "c.png"), np.full((20, 70), 210, np.uint8))
    (src / "c.gt.txt").write_text("gute Zeile", encoding="utf-8")
    importer = run_import([src], tmp_path / "out")
    assert [r["text"] for r in lines_of(tmp_path / "out")] == ["gute Zeile"]
    assert importer.summary.failed == {"leads outside the source folder": 2}


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "glob-star", "glob-question"])
def test_image_names_in_annotations_never_leave_the_source_nor_glob(tmp_path, kind):
    private = page_image(tmp_path / "private" / "scan.png", seed=1)  # outside the source folder
    src = tmp_path / "ws" / "gt"
    page_image(src / "other" / "zz_scan.png", seed=2)  # a different page in a sibling folder
    name = {
        "absolute": str(private),
        "dotdot": "../../../private/scan.png",
        "glob-star": "*",
        "glob-question": "?z_scan.png",
    }[kind]
    xml = page_xml_with(src / "xml", "p", name, ["20,20 200,20 200,50 20,50"])
    importer = run_import([src], tmp_path / "out")
    assert importer.summary.imported == 0 and lines_of(tmp_path / "out") == []
    (warning,) = importer.warnings
    assert warning.startswith(f"{xml}: image ")  # names the annotation, not the file it asked for
    reason = "image leads outside the source folder" if kind in ("absolute", "dotdot") else "image not found"
    assert reason in warning and sum(importer.summary.failed.values()) == 1


def test_a_machine_path_in_an_annotation_finds_the_image_beside_it_and_ocrd_siblings_work(tmp_path):
    ws = tmp_path / "ws"
    page_image(ws / "p.png", seed=1)
    page_xml_with(ws, "p", "/home/someone/scans/p.png", ["20,20 200,20 200,50 20,50"])  # tool's own path
    page_image(ws / "OCR-D-IMG" / "q.png", seed=2)
    page_xml_with(ws / "OCR-D-GT-PAGE", "q", "OCR-D-IMG/q.png", ["20,20 200,20 200,50 20,50"])
    importer = run_import([ws], tmp_path / "out")
    assert importer.summary.pages["t"] == 2 and not importer.summary.failed
    sources = sorted(im["source"] for im in strict_json(tmp_path / "out" / "pages" / "coco.json")["images"])
    assert sources == ["test@0:OCR-D-IMG/q.png", "test@0:p.png"]


def test_impossible_geometry_is_dropped_and_counted_and_coco_stays_strict_json(tmp_path):
    src = tmp_path / "src"
    page_image(src / "p.png", w=400, h=300)
    polygons = [
        "20,20 200,20 200,50 20,50",  # good
        "100,100 1e12,100 1e12,1e12 100,1e12",  # huge: would be a full-page crop
        "-500,-500 -300,-500 -300,-420 -500,-420",  # entirely outside
        "-480,10 30,10 30,40 -480,40",  # mostly outside: would be a corner crop
        "0,100 inf,100 inf,140 0,140",  # infinite
        "nan,nan nan,nan nan,nan nan,nan",  # not a number (was a traceback)
        "20,60 20,60 20,60 20,60",  # degenerate
    ]
    page_xml_with(src, "p", "p.png", polygons)
    importer = run_import([src], tmp_path / "out")
    coco = strict_json(tmp_path / "out" / "pages" / "coco.json")
    assert [a["text"] for a in coco["annotations"]] == ["L0"]
    assert [r["text"] for r in lines_of(tmp_path / "out")] == ["L0"]
    assert importer.summary.dropped == {
        "box mostly outside the image": 3,
        "non-finite coordinates": 2,
        "degenerate box": 1,
    }


def test_alto_nan_and_huge_boxes_are_dropped_and_the_rest_imports(tmp_path):
    src = tmp_path / "src"
    page_image(src / "a.png", w=400, h=300)
    boxes = [("30", "40", "150", "30"), ("nan", "40", "150", "30"), ("100", "100", "1e12", "1e12")]
    lines = "".join(
        f'<TextLine HPOS="{x}" VPOS="{y}" WIDTH="{w}" HEIGHT="{h}"><String CONTENT="T{i}"/></TextLine>'
        for i, (x, y, w, h) in enumerate(boxes)
    )
    (src / "a.xml").write_text(
        f'<alto xmlns="{ALTO_NS["v4"]}"><Description><sourceImageInformation><fileName>a.png</fileName>'
        f"</sourceImageInformation></Description><Layout><Page><PrintSpace><TextBlock>{lines}"
        "</TextBlock></PrintSpace></Page></Layout></alto>",
        encoding="utf-8",
    )
    importer = run_import([src], tmp_path / "out")
    assert [r["text"] for r in lines_of(tmp_path / "out")] == ["T0"]
    assert importer.summary.dropped == {"non-finite coordinates": 1, "box mostly outside the image": 1}


def test_an_io_error_on_one_file_is_a_warning_and_the_manifest_is_still_written(tmp_path, monkeypatch):
    from ocrkit.data.ground_truth import importer as importer_module

    src = tmp_path / "src"
    for name in ("a", "b"):
        page_image(src / f"{name}.png", seed=ord(name))
        page_xml_with(src, name, f"{name}.png", ["20,20 200,20 200,50 20,50"])
    real = importer_module.sha256_file

    def failing(path: Path) -> str:
        if path.name == "a.png":
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(importer_module, "sha256_file", failing)
    importer = run_import([src], tmp_path / "out")
    assert importer.warnings == [f"{src / 'a.xml'}: cannot read (Input/output error)"]
    assert importer.summary.failed == {"cannot read": 1} and importer.summary.pages["t"] == 1
    assert len(lines_of(tmp_path / "out")) == 1


def test_nothing_usable_still_writes_empty_manifests(tmp_path):
    src = tmp_path / "src"
    page_image(src / "p.png")
    page_xml_with(src, "p", "p.png", ["nan,1 2,3 4,5 6,7"])
    importer = run_import([src], tmp_path / "out")
    assert importer.summary.imported == 0
    assert lines_of(tmp_path / "out") == []
    assert strict_json(tmp_path / "out" / "pages" / "coco.json")["images"] == []


def test_sroie_bytes_that_are_not_utf8_and_control_characters_are_skipped_and_counted(tmp_path):
    page_image(tmp_path / "s" / "img" / "X1.jpg")
    (tmp_path / "s" / "box").mkdir(parents=True)
    csv_file = tmp_path / "s" / "box" / "X1.csv"
    csv_file.write_bytes(
        b"10,10,120,10,120,30,10,30,RE\xc7U CAF\xc9\n"  # Latin-1: was imported as U+FFFD
        b"10,40,120,40,120,60,10,60,\x00NUL\n"
        b"10,70,120,70,120,90,10,90,TOTAL\n"
        b"1,2,3\n"
    )
    importer = run_import([tmp_path / "s" / "box"], tmp_path / "out")
    assert [r["text"] for r in lines_of(tmp_path / "out")] == ["TOTAL"]
    assert f"{csv_file}:1: not UTF-8 text (skipped)" in importer.warnings
    assert importer.summary.dropped == {
        "CSV row is not UTF-8 text": 1,
        "CSV row malformed": 1,
        "control characters in the text": 1,
    }


def test_an_unreadable_xml_is_counted_as_unreadable_not_unknown(tmp_path, monkeypatch, capsys):
    src = tmp_path / "src"
    page_image(src / "p.png")
    page_xml_with(src, "p", "p.png", ["20,20 200,20 200,50 20,50"])
    locked = page_xml_with(src, "q", "p.png", ["20,20 200,20 200,50 20,50"])
    real_open = Path.open

    def open_(self, *args, **kwargs):
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    found, refused = find_annotations([src])
    assert [f.name for f, _, _ in found] == ["p.xml"] and refused == {"cannot read": 1}
    assert f"warning: {locked}: cannot read (Permission denied) (skipped)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "subset", ["../../../escaped", "a/b", "..", ".hidden", "x" * 65, "with space"], ids=str.__len__
)
def test_a_subset_name_that_is_not_a_plain_name_is_refused(tmp_path, subset):
    from ocrkit.util.errors import OcrkitError

    page_image(tmp_path / "src" / "p.png")
    page_xml_with(tmp_path / "src", "p", "p.png", ["20,20 200,20 200,50 20,50"])
    importer = Importer(tmp_path / "a" / "b" / "out", set())
    found, _ = find_annotations([tmp_path / "src"])
    with pytest.raises(OcrkitError, match="subset .*: use up to 64 letters"):
        importer.add(found, ImportSettings(subset=subset))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]  # nothing written anywhere


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"repo": "noslash"}, "repo 'noslash': expected owner/name"),
        ({"repo": "../x"}, "repo '../x': expected owner/name"),
        ({"subset": "../../../escaped_subset"}, "subset '../../../escaped_subset'"),
    ],
)
def test_a_sources_file_with_a_bad_repo_or_subset_is_one_error(tmp_path, entry, message):
    from ocrkit.data.ground_truth.sources import load_sources
    from ocrkit.util.errors import InputError

    source = {"repo": "owner/name", "commit": "abc", "license": "x", "subset": "books", **entry}
    (tmp_path / "sources.yaml").write_text(json.dumps({"sources": [source]}), encoding="utf-8")
    with pytest.raises(InputError, match="sources.yaml: bad source entry") as caught:
        load_sources(tmp_path / "sources.yaml")
    assert message in str(caught.value)


def test_an_ocrd_annotation_folder_alone_reads_its_image_sibling_and_no_other(tmp_path):
    ws = tmp_path / "ws"
    page_image(ws / "OCR-D-IMG" / "q.png", seed=1)
    page_image(ws / "Pictures" / "r.png", seed=2)  # beside it, but not an image folder of the layout
    page_xml_with(ws / "OCR-D-GT-PAGE", "q", "OCR-D-IMG/q.png", ["20,20 200,20 200,50 20,50"])
    page_xml_with(ws / "OCR-D-GT-PAGE", "r", "r.png", ["20,20 200,20 200,50 20,50"])
    importer = run_import([ws / "OCR-D-GT-PAGE"], tmp_path / "out")
    assert importer.summary.pages["t"] == 1 and importer.summary.failed == {"image not found next to it": 1}


def test_an_annotation_stating_another_image_size_is_refused_or_scaled(tmp_path):
    """PAGE/ALTO state their image's size: another picture of the same name is refused in one warning,
    a copy resized after annotation gets its coordinates scaled."""
    src = tmp_path / "src"
    page_image(src / "other.png", w=500, h=500)  # another page under the annotated name
    write_page_xml(src, "other", "2019", "other.png")  # states 400×300
    page_image(src / "half.png", w=200, h=150, seed=1)  # the annotated page, re-saved at half size
    write_page_xml(src, "half", "2019", "half.png")
    page_image(src / "alto.png", w=600, h=300, seed=2)
    write_alto(src, "alto", "v4", "alto.png", polygon=False)
    importer = run_import([src], tmp_path / "out")
    assert importer.summary.failed == {"image size differs from the annotation's": 2}
    refused = [w for w in importer.warnings if "image size differs" in w]
    assert len(refused) == 2 and all("\n" not in w for w in refused)
    assert any(
        w.startswith(str(src / "other.xml")) and "image 500×500, annotation 400×300" in w for w in refused
    )
    assert [w for w in importer.warnings if "scaled" in w] == [
        f"{src / 'half.xml'}: coordinates scaled to the image (image 200×150, annotation 400×300)"
    ]
    boxes = [a["bbox"] for a in strict_json(tmp_path / "out" / "pages" / "coco.json")["annotations"]]
    assert boxes[0] == pytest.approx([10, 10, 90, 15], abs=1)  # 20,20 → 200,50 at half size
