"""The shared options: every argument of every command has help, shared options agree across commands,
bad values are one `ocrkit: error:` line, and `--version` names the installed version."""

from __future__ import annotations

import argparse
import inspect
import re

import pytest

import ocrkit
from ocrkit.cli import build_parser, main
from ocrkit.commands import options
from ocrkit.pipeline import OCR


def _commands(parser: argparse.ArgumentParser, name: str = "ocrkit") -> dict[str, argparse.ArgumentParser]:
    """Every parser below `parser`, by its command line ("ocrkit data import")."""
    found = {name: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found.update(_commands(sub, f"{name} {sub_name}"))
    return found


COMMANDS = _commands(build_parser())


def test_every_argument_of_every_command_has_help():
    missing = [
        f"{name} {action.dest}"
        for name, parser in COMMANDS.items()
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert len(COMMANDS) >= 10 and missing == []


# `finetune --threads` splits every core between two training processes, and `train --device` names where
# a run trains (auto/cpu/cuda, settled by Accelerate): the same names, another meaning
OWN_MEANING = {("ocrkit finetune", "--threads")} | {
    (f"ocrkit train {kind}", "--device") for kind in ("detector", "recognizer", "orientation")
}


@pytest.mark.parametrize(
    "option", ["--batch-size", "--threads", "--backend", "--device", "--rec-model", "--min-confidence"]
)
def test_a_shared_option_is_the_same_in_every_command(option):
    seen = {
        name: (action.default, action.type, action.choices, action.help)
        for name, parser in COMMANDS.items()
        for action in parser._actions
        if option in action.option_strings and (name, option) not in OWN_MEANING
    }
    assert len(seen) >= 2 and len(set(seen.values())) == 1, seen


def test_commands_default_to_what_the_library_does():
    """The same defaults but the backend: commands settle "auto" (onnxruntime where the models can go
    through it), the library keeps torch unless asked."""
    library = inspect.signature(OCR).parameters
    for argv in (["infer", "x.png"], ["serve"]):
        args = build_parser().parse_args(argv)
        for name in ("device", "batch_size", "min_confidence"):
            assert getattr(args, name) == library[name].default, (argv, name)
        assert args.backend == "auto" and library["backend"].default == "torch"
    infer = build_parser().parse_args(["infer", "x.png"])
    assert infer.pages_per_batch == inspect.signature(OCR.read_many).parameters["pages_per_batch"].default


def test_help_shows_defaults(capsys):
    assert main(["serve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 8000)" in out and f"(default: {options.BATCH_SIZE})" in out
    assert "(default: None)" not in out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"ocrkit {ocrkit.__version__}"


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--port", "70000"],
        ["serve", "--queue", "-1"],
        ["recognize", "x.png", "--batch-size", "0"],
        ["infer", "x.png", "--min-confidence", "1"],
        ["infer", "x.png", "--min-confidence", "high"],
        ["serve", "--max-upload-mb", "inf"],
        ["serve", "--max-upload-mb", "1e400"],
        ["synth", "lines", "--n", "2", "--out", "o", "--seed", "-1"],
        ["synth", "pages", "--n", "0", "--out", "o"],
        ["data", "pack", "x.jsonl", "--out", "o", "--line-height", "-5"],
        ["data", "pack", "x.jsonl", "--out", "o", "--page-side", "-1"],
        ["data", "pack", "x.jsonl", "--out", "o", "--shard-mb", "0"],
        ["data", "pack", "x.jsonl", "--out", "o", "--shard-mb", "nan"],
        ["data", "pack", "x.jsonl", "--out", "o", "--limit", "-1"],
    ],
)
def test_bad_values_are_one_error_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ocrkit: error: argument ")


@pytest.mark.parametrize(
    "argv",
    [
        ["synth", "lines", "--n", "2", "--out", "{file}"],
        ["synth", "pages", "--n", "2", "--out", "{file}/sub"],
        ["synth", "pages", "--n", "2", "--out", "{tmp}/o", "--preview", "{file}"],
        ["data", "pack", "x.jsonl", "--out", "{file}"],
    ],
)
def test_an_output_folder_that_is_a_file_is_one_error_line(argv, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    argv = [a.format(file=afile, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"must be a folder, and '{afile}' is a file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # nothing was written


def test_help_shows_no_empty_default():
    """An option whose default is empty says what happens without it; "(default: )" says nothing."""
    empty = [
        name
        for name, parser in COMMANDS.items()
        if re.search(r"\(default: (\[\])?\)", " ".join(parser.format_help().split()))
    ]
    assert empty == []
