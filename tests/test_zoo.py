"""The model zoo: which shipped models exist, what a name or path resolves to, the ONNX export cache."""

import pytest

from ocrkit.export.cache import onnx_folder
from ocrkit.hub import zoo
from ocrkit.hub.model_folder import DetectorSpec, RecognizerSpec, write_spec
from ocrkit.images.preprocess import PageSizing
from ocrkit.util.errors import ModelError


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A stand-in models folder holding a detector and a recognizer (settings only)."""
    models = tmp_path / "models"
    for name, spec in (("detector", DetectorSpec(PageSizing(64))), ("recognizer", RecognizerSpec())):
        (models / name).mkdir(parents=True)
        write_spec(models / name, spec)
    (models / "notes").mkdir()  # a folder without settings is no model
    monkeypatch.setattr(zoo, "MODELS_DIR", models)
    return models


def test_list_models_reports_the_shipped_folders():
    found = {m.name: m for m in zoo.list_models()}
    assert set(found) == {"detector", "recognizer", "orientation"}
    assert found["detector"].kind == "detector" and found["recognizer"].kind == "recognizer"
    assert found["orientation"].kind == "orientation"
    assert found["recognizer"].path == zoo.MODELS_DIR / "recognizer"


def test_list_models_skips_folders_without_settings(shipped):
    assert [(m.name, m.kind) for m in zoo.list_models()] == [
        ("detector", "detector"),
        ("recognizer", "recognizer"),
    ]


def test_resolve_defaults_names_and_paths(shipped, tmp_path, monkeypatch):
    assert zoo.resolve(None, "detector") == shipped / "detector"
    assert zoo.resolve("recognizer", "recognizer") == shipped / "recognizer"
    mine = tmp_path / "mine"
    assert zoo.resolve(mine, "detector") == mine  # not there yet: its loader says so
    assert zoo.resolve(str(mine), "recognizer") == mine
    monkeypatch.chdir(tmp_path)
    (tmp_path / "detector").mkdir()  # a local folder named like a shipped model wins
    assert zoo.resolve("detector", "detector").resolve() == (tmp_path / "detector").resolve()
    assert zoo.resolve(None, "detector") == shipped / "detector"  # the default is never shadowed


def test_resolve_refuses_a_shipped_model_of_the_other_kind(shipped):
    with pytest.raises(ModelError, match="not a detection model"):
        zoo.resolve("recognizer", "detector")


def test_a_missing_default_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(zoo, "MODELS_DIR", tmp_path / "none")
    with pytest.raises(ModelError, match="no default recognizer model installed yet; pass --rec-model DIR"):
        zoo.resolve(None, "recognizer")
    assert zoo.list_models() == []


def test_onnx_folder_uses_the_cached_export_of_shipped_models_only(shipped, tmp_path, monkeypatch):
    monkeypatch.setenv("OCRKIT_CACHE", str(tmp_path / "cache"))
    detector = shipped / "detector"
    (detector / "model.safetensors").write_bytes(b"weights")
    cached = (
        tmp_path
        / "cache"
        / "onnx"
        / f"detector-{zoo.weights_digest(detector)}-layout{zoo.EXPORT_LAYOUTS['detector']}"
    )
    cached.mkdir(parents=True)
    write_spec(
        cached, DetectorSpec(PageSizing(64), onnx="detector.onnx")
    )  # a finished export: no export runs
    assert onnx_folder(detector, "detector") == cached
    mine = tmp_path / "exported"
    assert onnx_folder(mine, "detector") == mine


def test_weights_digest_follows_weights_and_settings(shipped):
    folder = shipped / "detector"
    (folder / "model.safetensors").write_bytes(b"weights")
    first = zoo.weights_digest(folder)
    assert len(first) == 16 and zoo.weights_digest(folder) == first
    write_spec(folder, DetectorSpec(PageSizing(96)))
    assert zoo.weights_digest(folder) != first


def test_a_name_close_to_a_shipped_model_of_the_kind_suggests_it(shipped, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match=r"^recogniser: .*did you mean 'recognizer'\?$"):
        zoo.resolve("recogniser", "recognizer")
    with pytest.raises(ModelError, match=r"did you mean 'detector'\?"):
        zoo.resolve("detectr", "detector")
    assert zoo.resolve("recogniser", "detector").name == "recogniser"  # only names of the kind asked for
    assert zoo.resolve("mine", "recognizer").name == "mine"  # nothing close: the loader says it is missing
    (tmp_path / "recogniser").mkdir()  # an existing folder is never second-guessed
    assert zoo.resolve("recogniser", "recognizer").name == "recogniser"


def test_is_onnx_export_wants_graphs_without_torch_weights(tmp_path):
    assert not zoo.is_onnx_export(tmp_path / "gone")
    (tmp_path / "detector.onnx").write_bytes(b"graph")
    assert zoo.is_onnx_export(tmp_path)
    with pytest.raises(ModelError, match="holds an ONNX export: add --backend onnx"):
        zoo.refuse_onnx_export(tmp_path, "add --backend onnx")
    (tmp_path / "model.safetensors").write_bytes(b"weights")  # torch weights beside: a torch folder
    assert not zoo.is_onnx_export(tmp_path)
    zoo.refuse_onnx_export(tmp_path, "add --backend onnx")
