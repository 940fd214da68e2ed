"""Results kept as data: records appended by the measuring tools, tables rendered from the newest ones."""

from __future__ import annotations

import importlib.util
import json

import pytest
from fixtures import REPO

from ocrkit.cli import main
from ocrkit.results import append_records, latest, new_records, read_records

spec = importlib.util.spec_from_file_location("render_results", REPO / "tools" / "render_results.py")
render_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(render_results)


def test_records_round_trip_and_the_newest_of_a_kind_engine_and_data_wins(tmp_path):
    path = tmp_path / "results" / "results.jsonl"
    rows = {"receipts": {"cer": 0.2}, "books": {"cer": 0.1}, "all": {"cer": 0.15}}
    append_records(path, new_records("crops", "recognizer 1", rows, backend="onnx"))
    append_records(path, new_records("crops", "recognizer 1", {"receipts": {"cer": 0.05}}))
    records = read_records(path)
    assert len(records) == 3 and {r["data"] for r in records} == {"receipts", "books"}  # "all" is no subset
    assert records[0]["backend"] == "onnx" and len(records[0]["date"]) == 10
    assert latest(records)[("crops", "recognizer 1", "receipts")]["cer"] == 0.05
    with pytest.raises(ValueError, match="kind"):
        new_records("lines", "x", rows)


def test_a_cell_is_blank_where_nothing_was_measured_and_a_dash_inside_a_list():
    newest = latest(
        [
            {"kind": "crops", "engine": "a", "data": "x", "cer": 0.1234},
            {"kind": "crops", "engine": "a", "data": "z", "wer": 0.5},  # no cer: the format cannot fill it
            {"kind": "pages", "engine": "b", "data": "x", "f1": 0.9, "cer": 0.2},
        ]
    )
    table = {
        "corner": "data",
        "rows": [
            {"label": "crops", "kind": "crops", "data": ["x", "y"], "format": "{cer:.3f}"},
            {"label": "pages", "kind": "pages", "data": "x", "format": "{f1:.2f} / {cer:.2f}"},
            {"label": "z", "kind": "crops", "data": "z", "format": "{cer:.3f}"},
        ],
        "columns": [{"label": "A", "engine": {"crops": "a", "pages": "b"}}, {"label": "C", "engine": "c"}],
    }
    assert render_results.render_table(table, newest).splitlines() == [
        "| data | A | C |",
        "|---|---|---|",
        "| crops | 0.123 / – |  |",
        "| pages | 0.90 / 0.20 |  |",
        "| z |  |  |",
    ]


def test_the_readme_tables_are_rendered_from_the_results_file():
    """A number edited by hand in a table, or results added without rendering, fail here:
    `python tools/render_results.py` renders them again."""
    for path, text in render_results.render_all().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run python tools/render_results.py"


def test_a_file_without_the_table_markers_is_an_error():
    with pytest.raises(SystemExit, match="results:speed"):
        render_results.rendered("no markers here", "speed", "| table |")


def test_evaluate_rec_records_its_scores(tmp_path, capsys):
    gt, pred, results = tmp_path / "gt.jsonl", tmp_path / "pred.jsonl", tmp_path / "results.jsonl"
    gt.write_text(json.dumps({"image": "a.png", "text": "abcd", "subset": "s"}) + "\n")
    pred.write_text(json.dumps({"image": "a.png", "text": "abed"}) + "\n")
    argv = ["evaluate", "rec", "--gt", str(gt), "--pred", str(pred), "--record", str(results)]
    assert main(argv) == 2 and "--record needs --engine" in capsys.readouterr().err
    assert main([*argv, "--engine", "mine"]) == 0
    (record,) = read_records(results)
    assert (record["kind"], record["engine"], record["data"], record["cer"]) == ("crops", "mine", "s", 0.25)
