"""`ocrkit models list|show`: the shipped models with their versions, and what a model folder is."""

import json
import os

import pytest

from ocrkit.cli import main
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import read_spec


def test_list_names_every_shipped_model_with_its_version(capsys):
    assert main(["models", "list", "--json"]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    shipped = zoo.list_models()
    assert [m["name"] for m in listed] == [m.name for m in shipped] and len(shipped) >= 2
    assert [m["version"] for m in listed] == [zoo.weights_digest(m.path) for m in shipped]
    assert main(["models"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["NAME", "KIND", "VERSION"] and len(table) == len(shipped) + 1


def test_show_reads_the_folder_settings_and_card(capsys):
    assert main(["models", "show", "recognizer", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    spec = read_spec(zoo.resolve(None, "recognizer"), "recognizer")
    assert info["kind"] == "recognizer" and info["decoding"] == spec.decoding
    assert info["version"] == zoo.weights_digest(zoo.resolve(None, "recognizer"))
    assert info["architecture"].startswith("VisionEncoderDecoderModel (vit + trocr)")
    assert f"at most {spec.preprocess.longest} px" in info["input"]
    assert ("overlapping" in info["input"]) == spec.preprocess.windowed
    assert info["release"].startswith("ocrkit line recognizer ") and "research" in info["data_conditions"]
    assert main(["models", "show", "detector", "--json"]) == 0
    detector = json.loads(capsys.readouterr().out)
    assert detector["decoding"] == "" and "CC BY-SA 4.0" in detector["data_conditions"]
    assert detector["licence"] == "apache-2.0"  # the card's YAML front matter, read as data


def test_the_licence_comes_from_the_cards_front_matter_as_yaml(tiny_recognizer_dir, tmp_path, capsys):
    import shutil

    folder = tmp_path / "carded"
    shutil.copytree(tiny_recognizer_dir, folder)
    card = "---\ntags: [ocr]\nlicense: 'cc-by-4.0'   # quoted, with a comment\n---\n\n# my reader 1.0\n"
    (folder / "MODEL_CARD.md").write_text(card)
    assert main(["models", "show", str(folder), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["licence"], info["release"], info["data_conditions"]) == ("cc-by-4.0", "my reader 1.0", "")
    meta = "model_name: my reader 1.1\ndata_conditions: >-\n  research\n  use only\n"
    (folder / "MODEL_CARD.md").write_text(card.replace("---\n\n", meta + "---\n\n"))
    assert main(["models", "show", str(folder), "--json"]) == 0  # the metadata names it, not the title
    info = json.loads(capsys.readouterr().out)
    assert (info["release"], info["data_conditions"]) == ("my reader 1.1", "research use only")
    (folder / "MODEL_CARD.md").write_text("---\nlicense: [unclosed\n---\n# my reader 1.0\n")
    assert main(["models", "show", str(folder), "--json"]) == 0  # a broken block costs the licence only
    assert json.loads(capsys.readouterr().out)["licence"] == ""


def test_a_folder_without_a_card_says_so(tiny_recognizer_dir, capsys):
    assert main(["models", "show", str(tiny_recognizer_dir)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == tiny_recognizer_dir.name and "not stated (no MODEL_CARD.md)" in out
    assert zoo.weights_digest(tiny_recognizer_dir) in out


def test_an_unknown_model_is_one_line(capsys):
    assert main(["models", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ocrkit: error: nope: no such model folder, nor a shipped model (detector, ")
    assert err.count("\n") == 1 and "did you mean" not in err
    assert main(["models", "show", "recogniser"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("; did you mean 'recognizer'?\n") and err.count("\n") == 1


def test_show_says_when_narrow_pages_get_a_longer_side(tiny_detector_dir, tmp_path, capsys):
    import shutil
    from dataclasses import replace

    from ocrkit.hub.model_folder import write_spec

    folder = tmp_path / "narrow"
    shutil.copytree(tiny_detector_dir, folder)
    spec = read_spec(folder, "detector")
    sizing = replace(spec.sizing, longest=256, square=False, min_short=160, max_longest=320)
    write_spec(folder, replace(spec, sizing=sizing))
    assert main(["models", "show", str(folder), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["input"]
    assert (
        shown
        == "RGB page, long side 256 px (a narrow page: up to 320 px, short side at least 160 px), "
        + (f"padded to multiples of {spec.sizing.divisor}")
    )


def _broken_copy(folder, tmp_path, damage: str):
    """A copy of a model folder with one file replaced by something `models` cannot read as it is."""
    import shutil

    copy = tmp_path / "broken"
    shutil.copytree(folder, copy)
    card, head = copy / "MODEL_CARD.md", copy / "ctc_head.safetensors"
    head.unlink(missing_ok=True)
    if damage == "card not UTF-8":
        card.write_bytes(b"# Card \xe7\n")
    elif damage == "card a FIFO":
        os.mkfifo(card)
    elif damage == "weights a folder":
        head.mkdir()
    elif damage == "weights a link loop":
        head.symlink_to(head.name)
    elif damage == "weights a FIFO":
        os.mkfifo(head)
    elif damage == "weights a link to a device":
        head.symlink_to("/dev/zero")
    elif damage == "settings nested too deep":
        (copy / "ocrkit.json").write_text("[" * 200_000 + "]" * 200_000)
    return copy


@pytest.mark.skipif(os.name == "nt", reason="FIFOs and /dev/zero are POSIX matters")
@pytest.mark.parametrize(
    "damage, problem",
    [
        ("card not UTF-8", "MODEL_CARD.md: not UTF-8 text"),
        ("card a FIFO", "MODEL_CARD.md: not a regular file"),
        ("weights a folder", "ctc_head.safetensors: not a regular file"),
        ("weights a link loop", "ctc_head.safetensors: cannot read (Too many levels of symbolic links)"),
        ("weights a FIFO", "ctc_head.safetensors: not a regular file"),
        ("weights a link to a device", "ctc_head.safetensors: not a regular file"),
        ("settings nested too deep", "ocrkit.json is not valid JSON"),
    ],
)
def test_show_of_a_broken_folder_is_one_line(tiny_recognizer_dir, tmp_path, capsys, damage, problem):
    folder = _broken_copy(tiny_recognizer_dir, tmp_path, damage)
    assert main(["models", "show", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ocrkit: error: {folder}") and problem in err and err.count("\n") == 1


def test_show_reads_past_config_parts_of_the_wrong_type(tiny_recognizer_dir, tmp_path, capsys):
    import shutil

    folder = tmp_path / "odd"
    shutil.copytree(tiny_recognizer_dir, folder)
    (folder / "config.json").write_text('{"encoder": "model_type", "architectures": "abc"}')
    assert main(["models", "show", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["architecture"].startswith("unknown")


def test_list_names_a_broken_shipped_folder_in_one_line_and_lists_the_rest(
    tiny_recognizer_dir, tmp_path, monkeypatch, capsys
):
    import shutil

    shipped = tmp_path / "models"
    shipped.mkdir()
    shutil.copytree(tiny_recognizer_dir, shipped / "good")
    shutil.copytree(_broken_copy(tiny_recognizer_dir, tmp_path, "card not UTF-8"), shipped / "bad")
    monkeypatch.setattr(zoo, "MODELS_DIR", shipped)
    assert main(["models", "list", "--json"]) == 1
    out, err = capsys.readouterr()
    assert [json.loads(line)["name"] for line in out.splitlines()] == ["good"]
    card = shipped / "bad" / "MODEL_CARD.md"
    assert err == f"ocrkit: error: {card}: not UTF-8 text (invalid continuation byte at byte 7)\n"
