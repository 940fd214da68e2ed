"""The code style is part of the suite: `ruff check` and `ruff format --check` over the repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import REPO

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is in the [dev] extra")
@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_finds_nothing(args):
    done = subprocess.run([RUFF, *args], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
