"""The code's shape, checked from the sources: the engine's packages are layered by pipeline stage,
the import graph has no cycle, the front ends reach the engine only through its package's surface,
and the worker needs nothing but the standard library and its own modules."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest
from support.paths import ROOT

import difforacle.generator as engine

PARTS = {"generator": "difforacle.generator", "bot": "difforacle.bot"}
ENGINE = "difforacle.generator"
# The engine's packages, bottom first: each may import only those before it (and itself). The top
# holds the pipeline (`engine`), the run's options, the bundled demo and the surface (`__init__`);
# `errors` sits low so that every stage can raise them; `version` lower still, as the reports name it.
LAYERS = ("worker", "version", "report", "errors", "changes", "runtime", "oracle", "planning", "generation",
          "findings", "triage", "engine options demo")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__), for every module of both parts."""
    found = {}
    for folder, package in PARTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = (path, path.name == "__init__.py")
    return found


MODULES = _modules()


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """The import statements inside `if TYPE_CHECKING:` blocks (never run)."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found |= {n for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
    return found


def _imported(name: str, *, runtime_only: bool = False) -> set[str]:
    """Every module `name` imports (anywhere in it, function bodies included), absolute names;
    `runtime_only`: leave out the imports made for type checkers only."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree) if runtime_only else set()
    found = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            found |= {f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target
                      for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found - {name}


GRAPH = {name: _imported(name) for name in MODULES}
RUNTIME_GRAPH = {name: _imported(name, runtime_only=True) for name in MODULES}


def _layer(module: str) -> int | None:
    """The index in LAYERS of an engine module's package (None outside the engine, or the surface)."""
    if module == ENGINE or not module.startswith(ENGINE + "."):
        return None
    top = module.removeprefix(ENGINE + ".").split(".")[0]
    return next(index for index, names in enumerate(LAYERS) if top in names.split())


def test_the_sources_are_found() -> None:
    assert "difforacle.generator.engine" in MODULES and "difforacle.bot.cli" in MODULES
    assert "difforacle.generator.worker.protocol" in MODULES
    assert "difforacle.generator.generation.search.path_memo" in MODULES


def test_every_package_of_the_engine_has_a_layer() -> None:
    """A new package is placed in LAYERS: its place is a decision, not a default."""
    tops = {name.removeprefix(ENGINE + ".").split(".")[0] for name in MODULES
            if name.startswith(ENGINE + ".")}
    placed = {top for names in LAYERS for top in names.split()}
    assert tops <= placed, f"not in LAYERS: {sorted(tops - placed)}"


def test_each_stage_imports_only_the_stages_below_it() -> None:
    """Type checkers' imports count too: a stage that names a higher stage's type depends on it."""
    upward = []
    for name, imported in GRAPH.items():
        mine = _layer(name)
        if mine is None:
            continue
        for other in imported:
            theirs = _layer(other)
            if theirs is not None and theirs > mine:
                upward.append(f"{name} imports {other}")
    assert upward == []


def test_the_import_graph_has_no_cycle() -> None:
    """Imports that run (a cycle of imports made for type checkers only is harmless)."""
    graph = {name: {m for m in imported if m in MODULES} for name, imported in RUNTIME_GRAPH.items()}
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                cycles.append([*path[path.index(other):], other])
            elif other not in state:
                visit(other, [*path, other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_engine_never_imports_its_front_ends() -> None:
    for name, imported in GRAPH.items():
        if name.startswith("difforacle.generator"):
            assert not {m for m in imported if m.startswith(("difforacle.bot", "bot"))}, name


def test_the_front_ends_reach_the_engine_only_through_its_surface() -> None:
    """bot imports `difforacle.generator` itself, never one of its modules (docs/development.md)."""
    for name, imported in GRAPH.items():
        if name.startswith("difforacle.bot"):
            inner = {m for m in imported if m.startswith(("difforacle.generator.", "generator"))}
            assert not inner, f"{name} imports {sorted(inner)}"


@pytest.mark.parametrize("name", sorted(engine.__all__))
def test_every_name_of_the_surface_exists(name: str) -> None:
    assert hasattr(engine, name)


def test_the_worker_needs_only_the_standard_library_and_itself() -> None:
    """It runs under the project's interpreter, which has none of difforacle's dependencies
    (coverage.py is optional and imported where it is measured; pytest_boot runs pytest, the
    project's or, appended to the path, difforacle's)."""
    allowed = set(sys.stdlib_module_names) | {"coverage"}
    for name, imported in GRAPH.items():
        if name.startswith("difforacle.generator.worker"):
            also = {"pytest"} if name.endswith(".pytest_boot") else set()
            outside = {m for m in imported if not m.startswith("difforacle.generator.worker")
                       and m.split(".")[0] not in allowed | also}
            assert not outside, f"{name} imports {sorted(outside)}"


def test_every_package_is_installed() -> None:
    """pyproject.toml lists the packages by name (the folders install under `difforacle.`): a package
    left out would be missing from a wheel while an editable install still finds it."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    packages = {name for name, (_, is_package) in MODULES.items() if is_package}
    assert packages == listed
