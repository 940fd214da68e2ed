"""The built package ships what loading the models needs, and no training logs or pictures beside them."""

import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

import ocrkit
from ocrkit.model_folder import SETTINGS_NAME

ROOT = Path(__file__).resolve().parents[1]
NEEDED = {
    "detector": ["config.json", "model.safetensors", SETTINGS_NAME, "MODEL_CARD.md"],
    "recognizer": [
        "config.json",
        "model.safetensors",
        "ctc_head.safetensors",
        SETTINGS_NAME,
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "generation_config.json",
        "MODEL_CARD.md",
    ],
}


def _setuptools_builds_wheels() -> bool:
    major, minor = (int(v) for v in version("setuptools").split(".")[:2])
    return (major, minor) >= (70, 1) or find_spec("wheel") is not None


def _built_files(tmp_path: Path) -> list[str]:
    """Paths inside the package as a build of a copy of the tree writes them (a wheel where possible)."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", src)
    shutil.copy2(ROOT / "README.md", src)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "ocrkit", src / "ocrkit", ignore=ignore)
    for kind in NEEDED:  # decoys: what a training run leaves beside a model must not ship
        (src / "ocrkit" / "models" / kind / "metrics_decoy.jsonl").write_text("{}\n")
        (src / "ocrkit" / "models" / kind / "curves.png").write_bytes(b"\x89PNG")
    out = tmp_path / "out"
    if _setuptools_builds_wheels():
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
        ]
        subprocess.run([*cmd, "."], cwd=src, check=True, capture_output=True, timeout=300)
        (wheel,) = out.glob("ocrkit-*.whl")
        return zipfile.ZipFile(wheel).namelist()
    # an old setuptools without bdist_wheel: the same package-data rules through build_py
    cmd = [sys.executable, "-c", "import setuptools; setuptools.setup()", "build_py", "--build-lib", str(out)]
    subprocess.run(cmd, cwd=src, check=True, capture_output=True, timeout=300)
    return [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]


def test_package_ships_model_files_but_no_logs(tmp_path):
    files = _built_files(tmp_path)
    models = [f for f in files if f.startswith("ocrkit/models/")]
    for kind, names in NEEDED.items():
        for name in names:
            assert f"ocrkit/models/{kind}/{name}" in models
    unwanted = [f for f in models if f.endswith((".jsonl", ".png"))]
    assert not unwanted, unwanted
    assert any(f.startswith("ocrkit/fonts/") for f in files)


def test_version_agrees_with_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{ocrkit.__version__}"\n' in text
