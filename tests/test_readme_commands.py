"""Every `ocrkit` command of the README's quick start and reading sections, run as shown (the shipped
models, the default backend) on stand-ins for the files it names, and checked for what it promises:
exit code 0, the files under `--out` in each format asked (parsed), or what standard output receives."""

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fixtures import REPO, SAMPLES
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader

from ocrkit.pages.formats import EXTENSIONS

SECTIONS = ("## Quick start", "## Reading pages")
DEFAULT_FORMATS = ["txt", "json"]


def readme_commands() -> list[str]:
    """The `ocrkit` lines of the first bash block of each section, comments dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = []
    for heading in SECTIONS:
        section = text[text.index(heading) :]
        block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if re.match(r"(\.venv/bin/)?ocrkit ", line):
                commands.append(line)
    return commands


def test_the_readme_shows_the_commands_this_file_runs():
    commands = readme_commands()
    assert len(commands) >= 8 and commands[0].startswith(".venv/bin/ocrkit infer samples/")
    assert any(c.startswith("ocrkit recognize") for c in commands)


def stand_ins(root: Path) -> None:
    """The files the README's commands name: pages from the receipt sample, a 2-page PDF and TIFF, a
    folder of scans, one line image; `samples/` is the repository's."""
    receipt = Image.open(SAMPLES / "synthetic_receipt.jpg").convert("RGB")
    for name in ("page.png", "a.png"):
        receipt.save(root / name)
    (root / "scans").mkdir()
    receipt.save(root / "scans" / "receipt.jpg")
    for name in ("book.pdf", "b.pdf"):
        receipt.save(root / name, save_all=True, append_images=[receipt], resolution=150)
    receipt.save(root / "scan.tif", save_all=True, append_images=[receipt])
    line = Image.new("RGB", (420, 48), "white")
    font = ImageFont.truetype(str(REPO / "ocrkit/fonts/dejavu/DejaVuSans.ttf"), 30)
    ImageDraw.Draw(line).text((8, 6), "TOTAL 12.50", fill="black", font=font)
    line.save(root / "line.png")
    (root / "samples").symlink_to(SAMPLES)


PAGES = {"page.png": 1, "a.png": 1, "scans/": 1, "book.pdf": 2, "b.pdf": 2, "scan.tif": 2}


def check_file(path: Path) -> None:
    """A written output parses as what its name says."""
    data = path.read_bytes()
    assert data, path
    if path.name.endswith((".xml", ".hocr")):
        ET.fromstring(data)
    elif path.suffix == ".json":
        assert "lines" in json.loads(data)
    elif path.suffix == ".jsonl":
        assert all("lines" in json.loads(line) for line in data.decode().splitlines())
    elif path.suffix == ".png":
        assert min(Image.open(io.BytesIO(data)).size) > 10
    elif path.suffix == ".pdf":
        assert len(PdfReader(path).pages) >= 1
    else:
        assert data.decode("utf-8").strip(), path


def check_effect(argv: list[str], root: Path, stdout: str, redirect: Path | None) -> None:
    inputs = [a for a in argv[2:] if a in PAGES or a.startswith("samples/") or a.endswith(".png")]
    if "--out" in argv:
        out = root / argv[argv.index("--out") + 1]
        formats = argv[argv.index("--format") + 1].split(",") if "--format" in argv else DEFAULT_FORMATS
        for fmt in formats:
            written = sorted(out.rglob(f"*.{EXTENSIONS[fmt]}"))
            pages = sum(PAGES.get(i, 1) for i in inputs) if fmt != "pdf" else len(inputs)
            assert len(written) == pages, (argv, fmt, written)
            for path in written:
                check_file(path)
    elif redirect is not None:
        check_file(redirect)
        if redirect.suffix == ".jsonl":
            assert len(redirect.read_text().splitlines()) == sum(PAGES[i] for i in inputs)
    else:
        assert re.search(r"[A-Za-z0-9]{2}", stdout), argv


@pytest.mark.slow
def test_every_readme_command_does_what_it_says(tmp_path):
    stand_ins(tmp_path)
    env = {**os.environ, "OCRKIT_CACHE": str(tmp_path / "cache")}  # exported once here, then reused
    for command in readme_commands():
        argv = shlex.split(command)
        redirect = None
        if ">" in argv:
            redirect = tmp_path / argv[argv.index(">") + 1]
            argv = argv[: argv.index(">")]
        if "--out" in argv:  # each example on its own: what an earlier one wrote is not counted
            shutil.rmtree(tmp_path / argv[argv.index("--out") + 1], ignore_errors=True)
        run = subprocess.run(
            [sys.executable, "-m", "ocrkit", *argv[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, (command, run.stderr[-2000:])
        assert "Traceback" not in run.stderr and "Warning" not in run.stderr, (command, run.stderr)
        assert run.stderr.startswith("ocrkit: "), (command, run.stderr)
        if redirect is not None:
            redirect.write_text(run.stdout, encoding="utf-8")
        check_effect(argv, tmp_path, run.stdout, redirect)
