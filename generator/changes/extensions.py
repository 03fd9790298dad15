"""Compiled extensions: does the run test the project's compiled code, or its pure-Python fallback?

A git checkout holds the sources of C, Cython or Rust extensions, never their build. Many
libraries then import a pure-Python fallback (`try: from ._speedups import f / except
ImportError: ...`), so the run silently tests code that users of the built package do not run.
This stage finds extension sources that a build declares (setup.py's `Extension`/`ext_modules`,
pyproject's maturin, setuptools-rust or Cython), runs the project's configured build commands
in both checkouts (`[tool.difforacle] build`), and says in the report which code was tested: the
compiled modules the workers actually imported (the catalog lists them), or the fallback.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .environment import project_environment
from .model import Checkout

SOURCE_SUFFIXES = {".c": "C", ".cc": "C++", ".cpp": "C++", ".pyx": "Cython", ".rs": "Rust"}
BUILD_SIGNS = ("Extension(", "ext_modules", "cythonize", "[tool.maturin]", "setuptools-rust",
               "setuptools_rust", "pyo3")
BUILD_FILES = ("setup.py", "pyproject.toml", "Cargo.toml", "setup.cfg")
SKIPPED_FOLDERS = frozenset({"tests", "test", "docs", "examples", "benchmarks", "node_modules", "target",
                             "build", "dist", "venv"})  # and every hidden folder
MAX_FILES = 20_000  # a walk of a huge checkout stops here: the answer is a note, not worth minutes


@dataclass(frozen=True)
class Extensions:
    """The compiled extensions a checkout's build declares: their languages and source files."""

    languages: tuple[str, ...]
    sources: tuple[str, ...]

    def describe(self) -> str:
        shown = ", ".join(self.sources[:3]) + (", ..." if len(self.sources) > 3 else "")
        return f"{', '.join(self.languages)}: {shown}"


@dataclass(frozen=True)
class BuildOutcome:
    """What the configured build took, and what the report says of it: built on both sides, or
    on neither (a failure undoes both)."""

    seconds: float
    note: str


def declared_extensions(checkout: Checkout) -> Extensions | None:
    """The extensions the checkout's build files declare, or None (no build names any)."""
    if not _declares_a_build(checkout.root):  # a few small files read: before walking the whole tree
        return None
    sources = _extension_sources(checkout.root)
    if not sources:
        return None
    languages = tuple(sorted({SOURCE_SUFFIXES[Path(path).suffix] for path in sources}))
    return Extensions(languages, tuple(sources))


def build_extensions(commands: Sequence[str], sides: Sequence[tuple[str, Checkout]], python: str,
                     timeout: float) -> BuildOutcome:
    """Run the build `commands` in each checkout's root, the project's interpreter first on PATH.

    Both commits must be tested alike: when a command fails on one side, every side is cleaned
    back to its commit (`git clean`), so neither compiled code is compared with a fallback.
    """
    started = time.monotonic()
    for name, checkout in sides:
        env = project_environment(checkout.pass_env)  # the project's build commands see no secret either
        env["PATH"] = os.pathsep.join([str(Path(python).parent), env.get("PATH", "")])
        for command in commands:
            failure = _run_build(command, checkout.root, env, timeout)
            if failure is not None:
                for _, other in sides:
                    subprocess.run(["git", "-C", str(other.root), "clean", "-ffdxq"], capture_output=True)
                return BuildOutcome(time.monotonic() - started,
                                    f"The build command `{command}` failed on {name} ({failure}); "
                                    "both commits were tested without their builds.")
    seconds = time.monotonic() - started
    shown = "; ".join(f"`{command}`" for command in commands)
    return BuildOutcome(seconds, f"Built both checkouts with {shown} in {seconds:.1f} s (not charged "
                        "to the budget).")


def extension_note(extensions: Extensions, compiled: dict[str, list[str]], build_configured: bool) -> str:
    """Which code the run tested, from the compiled modules each side's worker imported."""
    base, head = compiled.get("base", []), compiled.get("head", [])
    declared = f"The project builds compiled extensions ({extensions.describe()})"
    if base and head:
        shown = ", ".join(sorted(set(base) | set(head))[:3])
        return (f"{declared}; both commits imported their compiled modules ({shown}), so the compiled "
                "code was tested.")
    if base or head:
        side, other = ("base", "head") if base else ("head", "base")
        return (f"{declared}; only {side} imported compiled modules ({', '.join(sorted(base or head)[:3])}), "
                f"{other} its pure-Python fallback: a difference may come from that, not from the change.")
    hint = ("" if build_configured else
            " Set `build` in [tool.difforacle] (for example `python setup.py build_ext --inplace`) "
            "to test it.")
    return (f"{declared}, but no compiled module was imported: where the package falls back to pure Python "
            f"when its extension is missing, that fallback was tested, not the compiled code.{hint}")


def _run_build(command: str, root: Path, env: dict[str, str], timeout: float) -> str | None:
    """None when `command` succeeds; else why, in a few words (its last line of output)."""
    try:
        done = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True, text=True,
                              errors="replace", timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"no end after {timeout:g} s"
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return f"exit {done.returncode}" + (f": {lines[-1][:200]}" if lines else "")


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
