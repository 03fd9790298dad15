"""The code's shape, checked from the sources: the import graph has no cycle, the front ends reach
the engine only through its package's surface, and the worker needs nothing but the standard
library and its own modules."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import difforacle.generator as engine

ROOT = Path(__file__).resolve().parents[1]
PARTS = {"generator": "difforacle.generator", "bot": "difforacle.bot"}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__), for every module of both parts."""
    found = {}
    for folder, package in PARTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = (path, path.name == "__init__.py")
    return found


MODULES = _modules()


def _imported(name: str) -> set[str]:
    """Every module `name` imports (anywhere in it, function bodies included), absolute names."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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


def test_the_sources_are_found() -> None:
    assert "difforacle.generator.engine" in MODULES and "difforacle.bot.cli" in MODULES
    assert "difforacle.generator.worker.protocol" in MODULES


def test_the_import_graph_has_no_cycle() -> None:
    graph = {name: {m for m in imported if m in MODULES} for name, imported in GRAPH.items()}
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
    """bot imports `difforacle.generator` itself, never one of its modules (README: Development)."""
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
