"""Importers: the modules built on a changed module, listed in the catalog beside it.

A private module (`pkg._base`) is a package's implementation; its changed code is often reached
only through what other modules of the package build on it: bidict's `MutableBidict.update`,
in `bidict._bidict`, is what calls `bidict._base`'s changed `_update` with rollback. The modules
of the package that import a changed private module are found statically, from base's sources
(nothing is imported here), and their operations join the catalog. So does the package's root
module, its front door, which often defines the very functions users call (`sqlparse.format`,
which runs the changed `sqlparse.filters.output` through the formatter it builds). Bounded: the
root first, then the package's own public modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .checkout import module_name
from .model import ChangeSet, Checkout

MAX_IMPORTERS = 6


def importers(checkout: Checkout, changes: ChangeSet) -> tuple[str, ...]:
    """The root packages of `changes`' modules, and the modules of the packages of its private
    modules that import one of them."""
    found: set[str] = {root for root in (m.split(".")[0] for m in changes.modules)
                       if root not in changes.modules
                       and any((base / root / "__init__.py").is_file() for base in checkout.import_roots)}
    private = {m for m in changes.modules if _is_private(m)}
    for base in checkout.import_roots:
        for package in sorted({m.split(".")[0] for m in private}):
            folder = base / package
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.py")):
                name = module_name(path.relative_to(base).as_posix(), ["."])
                if name and name not in changes.modules and private & _imported(path, name):
                    found.add(name)
    return tuple(sorted(found, key=lambda m: (_is_private(m), m.count("."), m))[:MAX_IMPORTERS])


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:])


def _imported(path: Path, module: str) -> set[str]:
    """The modules that the file `path` (module `module`) imports, absolute, with each `from X
    import y` counted as X and as X.y (y may be a submodule)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _source(node, package)
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def imported_names(tree: ast.Module, module: str, is_package: bool) -> dict[str, tuple[str, str | None]]:
    """What module `module` (its syntax tree) imports, by the local name it binds: (the absolute
    module, the name taken from it), or (the module, None) for a module bound itself (`import a.b
    as c`, `from . import b`)."""
    package = module if is_package else module.rpartition(".")[0]
    found: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0], None)
        elif isinstance(node, ast.ImportFrom):
            source = _source(node, package)
            for alias in node.names:
                from_package = node.module is None  # `from . import b`: b is most often a module
                found[alias.asname or alias.name] = (
                    (f"{source}.{alias.name}", None) if from_package else (source, alias.name))
    return found


def _source(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a `from ... import` takes from (`package`: the importing module's)."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base
