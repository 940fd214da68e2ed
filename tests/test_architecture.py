"""The layers of ocrkit, held by its import statements: each rule below is one test, and a broken rule
fails naming the module, and the file and line of each import on the way.

The rules:
- The library never imports the surfaces that sit on top of it: the command line (`ocrkit.cli`,
  `ocrkit.__main__`, `ocrkit.commands`) and the server (`ocrkit.serve`). They all call the one `OCR`
  object and the library functions; a layer below them that needs something of theirs (the training
  engine needed the argument parser) takes it from a module below both (`ocrkit.util.argparse_kit`).
- Preprocessing (`ocrkit.images.preprocess`) never imports torch: it depends on numpy, OpenCV and
  albumentations only, so the torch-free runtime and a deployment without torch can use it.
- The ONNX runtime (`ocrkit.runtime`) never imports torch: `--backend onnx` works where torch is absent.
- Decoding (`ocrkit.decode`) never imports torch: the torch model and the ONNX graphs share it through a
  small backend protocol.
- Word boxes (`ocrkit.pages.words`: the reading aligned to CTC frames) never import torch.
- The runtime, decoding and data (`ocrkit.runtime`, `ocrkit.decode`, `ocrkit.data`) never import a task
  package (`ocrkit.detection`, `ocrkit.recognition`): layers point down only.

Imports are read from the source with `ast`, nothing is run: every import statement, at module level
or inside a function or an `if TYPE_CHECKING:` block, relative ones resolved. A rule holds for what its
modules import and for everything those imports load of ocrkit in turn (a module and the packages above
it), since a module that imports one that imports torch is not torch-free. "torch" counts the libraries
that load it as well. tests/runtime/test_torch_free_imports.py checks the same by importing, torch
blocked.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import resolve_name
from pathlib import Path

import pytest
from fixtures import REPO

SURFACES = ("ocrkit.cli", "ocrkit.__main__", "ocrkit.commands", "ocrkit.serve")
TORCH = ("torch", "torchvision", "transformers", "timm", "accelerate", "optimum")  # each loads torch
TASK_PACKAGES = ("ocrkit.detection", "ocrkit.recognition")
ROOMS = sorted(  # every package and root module of ocrkit
    p.stem if p.suffix == ".py" else p.name
    for p in (REPO / "ocrkit").iterdir()
    if (p.suffix == ".py" or (p / "__init__.py").is_file()) and not p.name.startswith("__")
)


@dataclass(frozen=True)
class Import:
    """One name an import statement loads, absolute (`from x import y` gives x and x.y)."""

    name: str
    line: int


@dataclass(frozen=True)
class Module:
    """What a rule needs of a module: where it is, for the messages, and what it imports."""

    path: str  # as messages show it: relative to the repository
    imports: tuple[Import, ...]


@dataclass(frozen=True)
class Rule:
    """Modules within `sources` (less those within `exempt`) never load a name within `forbidden`."""

    sources: tuple[str, ...]
    forbidden: tuple[str, ...]
    exempt: tuple[str, ...] = ()


def within(name: str, prefixes: tuple[str, ...]) -> bool:
    """`name` is one of the modules `prefixes` or inside one of them."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def read_imports(source: str, module: str, is_package: bool) -> tuple[Import, ...]:
    """Every import in `source` (the code of `module`), at any depth, relative ones made absolute."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = resolve_name("." * node.level + (node.module or ""), package)
            found.append(Import(base, node.lineno))
            found += [Import(f"{base}.{alias.name}", node.lineno) for alias in node.names]
    return tuple(found)


def read_package(root: Path) -> dict[str, Module]:
    """The modules of the package at `root`, by dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        imports = read_imports(path.read_text(encoding="utf-8"), name, is_package)
        modules[name] = Module(path.relative_to(REPO).as_posix(), imports)
    return modules


def loaded(name: str, modules: dict[str, Module]) -> Iterator[str]:
    """The modules of the tree that importing `name` runs: the packages above it and itself."""
    parts = name.split(".")
    for end in range(1, len(parts) + 1):
        if (prefix := ".".join(parts[:end])) in modules:
            yield prefix


def offenses(modules: dict[str, Module], rule: Rule) -> list[str]:
    """One line per forbidden import reached from a source module: the module, then the file:line of
    each import on the way, then the forbidden name."""
    found = []
    for start in modules:
        if not within(start, rule.sources) or within(start, rule.exempt):
            continue
        seen, queue, sites = {start}, deque([(start, ())]), set()
        while queue:
            module, chain = queue.popleft()
            for imp in modules[module].imports:
                step = (*chain, f"{modules[module].path}:{imp.line}")
                if within(imp.name, rule.forbidden) and step not in sites:
                    sites.add(step)
                    found.append(f"{start}: {' -> '.join(step)} imports {imp.name}")
                for inner in loaded(imp.name, modules):
                    if inner not in seen:
                        seen.add(inner)
                        queue.append((inner, step))
    return found


OCRKIT = read_package(REPO / "ocrkit")

RULES = [
    pytest.param(
        Rule(sources=("ocrkit",), forbidden=SURFACES, exempt=SURFACES),
        id="the library never imports the command line or the server",
    ),
    pytest.param(Rule(("ocrkit.images.preprocess",), TORCH), id="preprocessing never imports torch"),
    pytest.param(Rule(("ocrkit.runtime",), TORCH), id="the ONNX runtime never imports torch"),
    pytest.param(Rule(("ocrkit.decode",), TORCH), id="decoding never imports torch"),
    pytest.param(Rule(("ocrkit.pages.words",), TORCH), id="word boxes never import torch"),
    pytest.param(
        Rule(("ocrkit.runtime", "ocrkit.decode", "ocrkit.data"), TASK_PACKAGES),
        id="runtime, decoding and data never import a task package",
    ),
    pytest.param(
        Rule(("ocrkit.images",), TORCH), id="the images room (decoding, geometry, boxes) never imports torch"
    ),
    pytest.param(
        Rule(("ocrkit.util",), tuple(f"ocrkit.{room}" for room in ROOMS if room != "util")),
        id="util is the bottom room: it imports no other part of ocrkit",
    ),
    pytest.param(
        Rule(
            ("ocrkit.images", "ocrkit.pages", "ocrkit.hub"),
            ("ocrkit.pipeline", "ocrkit.engine", "ocrkit.finetune"),
        ),
        id="images, pages and model folders never import the pipeline or training",
    ),
]


@pytest.mark.parametrize("rule", RULES)
def test_rule(rule: Rule):
    sources = [name for name in OCRKIT if within(name, rule.sources) and not within(name, rule.exempt)]
    importers = [name for name, m in OCRKIT.items() if any(within(i.name, rule.forbidden) for i in m.imports)]
    assert sources and importers, "the rule names no module of the tree, or nothing imports what it forbids"
    found = offenses(OCRKIT, rule)
    assert not found, "\n".join(found)


def test_imports_are_read_at_every_depth_and_relative_ones_made_absolute():
    source = (
        "import torch\n"
        "if TYPE_CHECKING:\n"
        "    import timm.layers\n"
        "def f():\n"
        "    from ..commands import options\n"
    )
    names = {(i.name, i.line) for i in read_imports(source, "ocrkit.engine.command", is_package=False)}
    assert names == {("torch", 1), ("timm.layers", 3), ("ocrkit.commands", 5), ("ocrkit.commands.options", 5)}
    from_package = read_imports("from . import read\n", "ocrkit.decode", is_package=True)
    assert Import("ocrkit.decode.read", 1) in from_package


def test_a_rule_sees_through_the_modules_it_imports():
    """A module that is clean itself but imports one that breaks the rule breaks it too, and the
    message names each step."""
    tree = {
        "ocrkit": Module("ocrkit/__init__.py", ()),
        "ocrkit.runtime": Module("ocrkit/runtime/__init__.py", ()),
        "ocrkit.runtime.a": Module("ocrkit/runtime/a.py", (Import("ocrkit.helpers", 3),)),
        "ocrkit.helpers": Module("ocrkit/helpers.py", (Import("numpy", 1), Import("transformers", 9))),
    }
    assert offenses(tree, Rule(("ocrkit.runtime",), TORCH)) == [
        "ocrkit.runtime.a: ocrkit/runtime/a.py:3 -> ocrkit/helpers.py:9 imports transformers"
    ]
    assert offenses(tree, Rule(("ocrkit.helpers",), ("ocrkit.runtime",))) == []


def test_rooms_import_each_other_one_way_only():
    """A package or root module of ocrkit that imports another is never imported back by it: the rooms
    stand in layers (a room that needs one below it never lends it anything)."""

    def room(name: str) -> str:
        return name.split(".")[1] if "." in name else name

    uses = {
        (room(name), room(imp.name))
        for name, module in OCRKIT.items()
        for imp in module.imports
        if imp.name in OCRKIT and room(name) != room(imp.name)
    }
    assert len(uses) > 20
    both_ways = sorted((a, b) for a, b in uses if (b, a) in uses and a < b)
    assert not both_ways, both_ways
