"""replace_folder: the one atomic folder swap (checkpoints, best/ and model/ of a training run)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ocrkit.pages import outputs
from ocrkit.pages.outputs import remove_stale_temps, replace_folder


def write_files(**files):
    def write(tmp):
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")

    return write


@pytest.mark.parametrize("atomic_exchange", [True, False], ids=["renameat2", "two-renames"])
def test_replace_folder_swaps_whole_folders(tmp_path, monkeypatch, atomic_exchange):
    if not atomic_exchange:
        monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    final = tmp_path / "best"
    replace_folder(final, write_files(a="1", b="1"))
    replace_folder(final, write_files(a="2"))
    assert {p.name: p.read_text(encoding="utf-8") for p in final.iterdir()} == {"a": "2"}  # b is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]


def test_an_error_while_writing_keeps_the_previous_folder(tmp_path):
    final = tmp_path / "best"
    replace_folder(final, write_files(a="old"))

    def broken(tmp):
        (tmp / "a").write_text("half", encoding="utf-8")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        replace_folder(final, broken)
    assert (final / "a").read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]


def test_a_killed_writers_temp_folder_is_removed_by_the_next_save(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".step-0000200.{int(dead.stdout)}.tmp"
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"partial")
    alive = tmp_path / f".best.{os.getpid()}.tmp"  # a save of this process still going: kept
    alive.mkdir()
    remove_stale_temps(tmp_path)
    assert not stale.exists() and alive.is_dir()
