"""tools/judge_detector.py: the detector release rule's arithmetic — parts over characters, recall and
page-CER vetoes for subsets of 200+ lines only."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("judge_detector", REPO / "tools" / "judge_detector.py")
judge = importlib.util.module_from_spec(spec)
spec.loader.exec_module(judge)


def _pages(subset: str, part: str, n: int) -> list[dict]:
    return [{"subset": subset, "part": part} for _ in range(n)]


def test_score_weighs_parts_by_characters_and_a_better_candidate_ships() -> None:
    pages = _pages("u", "unseen", 10) + _pages("i", "in-source", 10)
    base = np.array([[20, 25, 30, 100]] * 10 + [[20, 25, 10, 100]] * 10)  # CER 0.30 and 0.10
    cand = base.copy()
    cand[:10, 2] = 20  # unseen 0.30 -> 0.20
    rows = judge.subset_rows(pages, base, cand)
    assert rows["u"]["recall_base"] == pytest.approx(0.8) and rows["u"]["lines"] == 250
    summary, ships = judge.decide(rows)
    assert summary["base"]["score"] == pytest.approx(0.2)
    assert summary["candidate"]["score"] == pytest.approx(0.15)
    assert ships


def test_recall_loss_vetoes_only_large_subsets() -> None:
    pages = _pages("big", "unseen", 10) + _pages("small", "in-source", 4)
    base = np.array([[20, 25, 30, 100]] * 14)
    cand = base.copy()
    cand[:, 2] = 10  # every page reads better
    cand[:, 0] = 19  # but recall 0.80 -> 0.76 everywhere
    rows = judge.subset_rows(pages, base, cand)
    assert rows["big"]["worse"]  # 250 lines, loses 0.04 recall
    assert not rows["small"]["worse"]  # 100 lines: reported only
    assert not judge.decide(rows)[1]


def test_page_cer_rise_is_judged_against_its_noise() -> None:
    pages = _pages("u", "unseen", 10) + _pages("i", "in-source", 10)
    base = np.array([[20, 25, 30, 100]] * 20)
    noisy = base.copy()
    noisy[:10, 2] = [62, 2] * 5  # +0.02 on average: some pages far better, some far worse
    assert judge.subset_rows(pages, base, noisy)["u"]["cer_candidate"] == pytest.approx(0.32)
    assert not judge.subset_rows(pages, base, noisy)["u"]["worse"]
    steady = base.copy()
    steady[:10, 2] = 32  # the same +0.02, on every page
    assert judge.subset_rows(pages, base, steady)["u"]["worse"]


def _fake_package(tmp_path: Path) -> Path:
    package = tmp_path / "ocrkit"
    for name in ("recognizer", "orientation"):
        (package / "models" / name).mkdir(parents=True)
        (package / "models" / name / "model.safetensors").write_bytes(name.encode())
    (package / "pipeline.py").write_text("x = 1\n")
    return package


def test_a_stored_reading_is_reused_only_while_all_it_depends_on_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package, detector = _fake_package(tmp_path), tmp_path / "det"
    detector.mkdir()
    (detector / "model.safetensors").write_bytes(b"weights")
    pages = [{"path": Path("p.png"), "texts": ["a"], "boxes": np.zeros((1, 4), np.float32)}]
    monkeypatch.setattr(judge, "PACKAGE", package)
    readings = []

    def page_reading(ocr, page):  # each reading differs from the last: its text is its number
        readings.append(page["path"])
        return {"boxes": [], "texts": [str(len(readings))]}

    monkeypatch.setattr(judge, "page_reading", page_reading)
    monkeypatch.setattr(judge, "page_counts", lambda reading, page: (1, 1, int(reading["texts"][0]), 10))
    cache = tmp_path / "cache"

    def counts() -> list:
        stored = cache / f"{judge.reading_key(detector, pages)}.json"
        return judge.read_counts(lambda folder: None, detector, pages, cache).tolist(), stored.is_file()

    first, stored = counts()
    assert first == [[1, 1, 1, 10]] and stored and len(readings) == 1
    assert counts()[0] == first and len(readings) == 1  # read from the cache
    (detector / "MODEL_CARD.md").write_text("a card says nothing about the reading")
    assert counts()[0] == first and len(readings) == 1
    recognizer = package / "models" / "recognizer" / "model.safetensors"
    for changed in (detector / "model.safetensors", recognizer, package / "pipeline.py"):
        before = len(readings)
        changed.write_bytes(changed.read_bytes() + b"!")
        assert counts()[0] == [[1, 1, before + 1, 10]]  # read again
    other = tmp_path / "recognizer"  # a candidate read with another recognizer is another reading
    other.mkdir()
    (other / "model.safetensors").write_bytes(b"other weights")
    assert judge.reading_key(detector, pages, other) != judge.reading_key(detector, pages)
    uncached = judge.read_counts(lambda folder: None, detector, pages, None)
    assert uncached.tolist() == [[1, 1, len(readings), 10]]  # no cache: always read


def test_lines_outside_the_annotated_part_of_a_page_are_not_scored() -> None:
    annotated = np.array([[500, 100, 900, 140], [500, 160, 900, 200], [500, 220, 700, 260]], np.float32)
    detected = np.array(
        [
            [10, 100, 400, 140],  # the facing page: nobody annotated it
            [505, 100, 895, 140],  # an annotated line
            [500, 265, 600, 295],  # a false box just below the last line: still scored
            [300, 160, 700, 200],  # half outside: scored
            [200, 160, 560, 200],  # mostly outside: not scored
        ],
        np.float32,
    )
    assert judge.scored(detected, annotated).tolist() == [False, True, True, True, False]
    assert judge.scored(detected, np.zeros((0, 4), np.float32)).all()


def _page(texts: list[str]) -> dict:
    return {
        "path": Path("p.png"),
        "boxes": np.array([[500, 100, 900, 140], [500, 160, 900, 200]], np.float32),
        "texts": texts,
        "case_sensitive": True,
    }


def _counts(page: dict, boxes: list, texts: list[str]) -> tuple:
    return judge.page_counts({"boxes": boxes, "texts": texts}, page)


LINES = [[500, 100, 900, 140], [500, 160, 900, 200]]


def test_the_facing_page_costs_no_page_cer_but_a_false_box_among_the_lines_does() -> None:
    page = _page(["first line", "second line"])
    assert _counts(page, LINES, ["first line", "second line"]) == (2, 2, 0, len("first line\nsecond line"))
    facing = [[10, 100, 400, 140]]
    assert _counts(page, facing + LINES, ["facing", "first line", "second line"])[2] == 0
    junk = [[500, 210, 560, 240]]
    assert _counts(page, LINES + junk, ["first line", "second line", "~~"])[2] == 3


def test_a_line_annotated_without_its_text_is_neither_an_error_read_nor_missed() -> None:
    page = _page(["first line", ""])
    read_both = _counts(page, LINES, ["first line", "a marginal note"])
    assert read_both == (2, 2, 0, len("first line"))  # found (recall counts it), its text not scored
    assert _counts(page, LINES[:1], ["first line"]) == (1, 2, 0, len("first line"))
    assert _counts(page, LINES, ["first lime", "x"])[2] == 1


def test_stored_readings_are_scored_by_the_judging_code_of_the_day(tmp_path: Path) -> None:
    pages = [_page(["first line", "second line"]) | {"subset": "a", "part": "unseen"}] * 2
    stored = tmp_path / "base.json"
    stored.write_text(json.dumps([{"boxes": LINES, "texts": ["first line", "second lime"]}] * 2))
    assert judge.stored_counts(stored, pages)[:, 2].tolist() == [1, 1]


def test_a_base_reading_stored_by_other_code_must_cover_the_pages(tmp_path: Path) -> None:
    pages = [_page(["first line", "second line"])] * 3
    stored = tmp_path / "old.json"
    stored.write_text(json.dumps([{"boxes": LINES, "texts": ["first line", "second line"]}] * 3))
    assert judge.stored_counts(stored, pages)[:, 2].tolist() == [0, 0, 0]
    with pytest.raises(SystemExit, match="old.json: holds no readings of the 2 pages judged"):
        judge.stored_counts(stored, pages[:2])
    stored.write_text("[[1, 2, 3, 40], [2, 2, 0, 10], [0, 1, 5, 5]]")  # counts, as stored before readings
    with pytest.raises(SystemExit, match="holds no readings"):
        judge.stored_counts(stored, pages)
