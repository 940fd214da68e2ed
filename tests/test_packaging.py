"""The built package ships what loading the models needs, and no training logs or pictures beside them;
pyproject.toml's ranges, the extras and constraints.txt agree."""

import contextlib
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, packages_distributions, requires, version
from importlib.util import find_spec
from pathlib import Path

import pytest
from fixtures import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import ocrkit
from ocrkit.hub.model_folder import SETTINGS_NAME
from ocrkit.util.extras import EXTRA_OF_MODULE

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
    shutil.copy2(REPO / "pyproject.toml", src)
    shutil.copy2(REPO / "README.md", src)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "ocrkit", src / "ocrkit", ignore=ignore)
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


@pytest.mark.slow
def test_package_ships_model_files_but_no_logs(tmp_path):
    files = _built_files(tmp_path)
    models = [f for f in files if f.startswith("ocrkit/models/")]
    for kind, names in NEEDED.items():
        for name in names:
            assert f"ocrkit/models/{kind}/{name}" in models
    unwanted = [f for f in models if f.endswith((".jsonl", ".png"))]
    assert not unwanted, unwanted
    assert any(f.startswith("ocrkit/fonts/") for f in files)
    assert {f"ocrkit/serve/static/{name}" for name in ("index.html", "app.js", "style.css")} <= set(files)


def test_version_agrees_with_pyproject():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{ocrkit.__version__}"\n' in text


def _pyproject() -> dict:
    with (REPO / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)["project"]


def _requirements() -> dict[str, list[Requirement]]:
    """Core ("") and each extra's requirements, without an extra's references to other extras."""
    project = _pyproject()
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {
        group: [r for r in map(Requirement, lines) if canonicalize_name(r.name) != "ocrkit"]
        for group, lines in groups.items()
    }


def _constraints() -> dict[str, Version]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version_text = line.partition("==")
            pins[canonicalize_name(name)] = Version(version_text)
    return pins


def test_every_requirement_is_a_range_with_both_bounds():
    for group, requirements in _requirements().items():
        for req in requirements:
            operators = {spec.operator for spec in req.specifier}
            assert operators == {">=", "<"}, f"{group or 'core'}: {req} needs a lower and an upper bound"


def test_core_install_is_torch_free():
    core = {canonicalize_name(r.name) for r in _requirements()[""]}
    assert core.isdisjoint({"torch", "torchvision", "transformers", "timm", "accelerate", "optimum"})
    assert {"onnxruntime", "numpy", "tokenizers", "opencv-python-headless"} <= core


def test_constraints_pin_each_requirement_at_its_lowest_tested_version():
    pins = _constraints()
    ranges = {canonicalize_name(r.name): r.specifier for reqs in _requirements().values() for r in reqs}
    assert set(pins) == set(ranges)  # nothing pinned that no group asks for, nothing left unpinned
    for name, specifier in ranges.items():
        assert specifier.contains(pins[name]), f"{name}=={pins[name]} is outside {specifier}"
        (lower,) = (Version(spec.version) for spec in specifier if spec.operator == ">=")
        assert pins[name] == lower, f"{name}: CI tests {pins[name]}, the range starts at {lower}"


def test_each_extra_module_is_installed_by_the_extra_it_names():
    """The one-line 'pip install ocrkit[X]' errors must name an extra that really brings the module."""
    extras = _pyproject()["optional-dependencies"]
    dists = packages_distributions()
    for module, extra in EXTRA_OF_MODULE.items():
        assert extra in extras, f"{module}: no extra named {extra!r}"
        for dist in dists.get(module, []):  # modules installed here (the dev install has all of them)
            assert canonicalize_name(dist) in _brought_by(extra), f"{module} ({dist}) is not in [{extra}]"


def _brought_by(extra: str) -> set[str]:
    """Distributions that `pip install ocrkit[extra]` adds: the extra's own, those of the extras it
    includes, and what they require in turn (starlette comes with fastapi)."""
    extras = _pyproject()["optional-dependencies"]
    named, todo = set(), [extra]
    while todo:
        for req in map(Requirement, extras[todo.pop()]):
            if canonicalize_name(req.name) == "ocrkit":
                todo.extend(req.extras)
            else:
                named.add(req.name)
    brought = {canonicalize_name(name) for name in named}
    for name in named:
        with contextlib.suppress(PackageNotFoundError):
            deps = [Requirement(line) for line in requires(name) or []]
            brought |= {canonicalize_name(dep.name) for dep in deps if "extra" not in str(dep.marker)}
    return brought


def test_ci_runs_the_readme_set_up_and_test_commands():
    """CI must prove what a reader does: the README's quick-start set-up and test lines, verbatim."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    set_up, test = commands[0], commands[-1]
    assert "-c constraints.txt" in set_up and test.endswith("-m pytest")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert set_up in ci and test in ci
