"""Compiled extensions: does the run test the project's compiled code, or its pure-Python fallback?

A git checkout holds the sources of C, Cython or Rust extensions, never their build. Many
libraries then import a pure-Python fallback (`try: from ._speedups import f / except
ImportError: ...`), so the run silently tests code that users of the built package do not run.
This stage looks at the checkout of each side: extension sources that a build declares
(setup.py's `Extension`/`ext_modules`, pyproject's maturin, setuptools-rust or Cython), and
compiled modules inside the changed packages; the report says which of the two was tested.
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from .model import ChangeSet, Checkout

SOURCE_SUFFIXES = {".c": "C", ".cc": "C++", ".cpp": "C++", ".pyx": "Cython", ".rs": "Rust"}
BUILD_SIGNS = ("Extension(", "ext_modules", "cythonize", "[tool.maturin]", "setuptools-rust",
               "setuptools_rust", "pyo3")
BUILD_FILES = ("setup.py", "pyproject.toml", "Cargo.toml", "setup.cfg")
SKIPPED_FOLDERS = frozenset({"tests", "test", "docs", "examples", "benchmarks", "node_modules", "target",
                             "build", "dist", "venv"})  # and every hidden folder
MAX_FILES = 20_000  # a walk of a huge checkout stops here: the answer is a note, not worth minutes


def extension_note(changes: ChangeSet, checkout: Checkout) -> str | None:
    """A note when the project builds extensions: whether the changed packages' compiled modules
    are in the checkout (tested) or not (their pure-Python fallback, if any, was tested)."""
    if not _declares_a_build(checkout.root):  # a few small files read: before walking the whole tree
        return None
    sources = _extension_sources(checkout.root)
    if not sources:
        return None
    languages = ", ".join(sorted({SOURCE_SUFFIXES[Path(path).suffix] for path in sources}))
    shown = ", ".join(sources[:3]) + (", ..." if len(sources) > 3 else "")
    compiled = _compiled_modules(changes, checkout)
    if compiled:
        return (f"The project builds compiled extensions ({languages}: {shown}); the checkout holds built "
                f"modules ({', '.join(compiled[:3])}), so the compiled code was tested.")
    return (f"The project builds compiled extensions ({languages}: {shown}), but the checkouts hold no built "
            "module: where the package falls back to pure Python when its extension is missing, that "
            "fallback was tested, not the compiled code.")


def _extension_sources(root: Path) -> list[str]:
    found: list[str] = []
    seen = 0
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("."))
        for name in sorted(files):
            seen += 1
            if Path(name).suffix in SOURCE_SUFFIXES:
                found.append((Path(folder) / name).relative_to(root).as_posix())
        if seen > MAX_FILES:
            break
    return found


def _declares_a_build(root: Path) -> bool:
    """Sources alone prove little (a vendored C file, a docs example); a build file must name them."""
    for name in BUILD_FILES:
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(sign in text for sign in BUILD_SIGNS):
            return True
    return False


def _compiled_modules(changes: ChangeSet, checkout: Checkout) -> list[str]:
    """Compiled modules in the checkout: inside the top-level packages of the changed modules, or
    beside them at an import root (a top-level `_speedups` module)."""
    packages = {module.split(".")[0] for module in changes.modules}
    found = []
    for root in checkout.import_roots:
        found += sorted(path.relative_to(checkout.root).as_posix() for path in root.glob("*")
                        if any(path.name.endswith(suffix) for suffix in EXTENSION_SUFFIXES))
        for package in sorted(packages):
            folder = root / package
            if folder.is_dir():
                found += sorted(path.relative_to(checkout.root).as_posix() for path in folder.rglob("*")
                                if any(path.name.endswith(suffix) for suffix in EXTENSION_SUFFIXES))
    return found
