"""Version files that a build writes and a checkout lacks.

A project versioned from git tags (setuptools-scm, hatch-vcs, pdm's `scm` source) has its build
write a module such as `src/pkg/_version.py`, which git ignores, and its package imports it.
From a bare checkout the package does not import at all, although `pip install` would have
made it work: every change of such a project went untested. So the file the project's
settings name is written in each checkout that lacks it, the same on both sides (the version
of the nearest tag at base), so that nothing differs because of it.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .model import Checkout

if TYPE_CHECKING:
    import git

FALLBACK_VERSION = "0.0.0"
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)")
TEMPLATE = '''\
# written by difforacle in place of the version file the build writes ({tool}); absent from the checkout
__version__ = version = {version!r}
__version_tuple__ = version_tuple = {numbers!r}
'''


def declared_version_files(root: Path) -> list[tuple[PurePosixPath, str]]:
    """The version files the project's pyproject.toml (or its setup.py's `use_scm_version`) has
    its build write, with the tool that writes each: relative `.py` paths inside the checkout."""
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        config = {}
    tool = config.get("tool") if isinstance(config.get("tool"), dict) else {}
    scm = _table(tool, "setuptools_scm")
    hatch_vcs = _table(_table(_table(tool, "hatch"), "build"), "hooks")
    pdm = _table(_table(tool, "pdm"), "version")
    declared = [(scm.get("version_file"), "setuptools-scm"), (scm.get("write_to"), "setuptools-scm"),
                (_table(hatch_vcs, "vcs").get("version-file"), "hatch-vcs")]
    if pdm.get("source") == "scm":
        declared.append((pdm.get("write_to"), "pdm"))
    declared += [(path, "setuptools-scm") for path in _setup_py_version_files(root)]
    found = []
    for path, writer in declared:
        relative = _inside(path)
        if relative is not None and all(relative != seen for seen, _ in found):
            found.append((relative, writer))
    return found


def nearest_version(repo: git.Repo, sha: str) -> str:
    """The release of the nearest tag at `sha` (`v4.12.0` -> `4.12.0`), else FALLBACK_VERSION."""
    import git

    try:
        tag = repo.git.describe("--tags", "--abbrev=0", sha)
    except git.GitCommandError:
        return FALLBACK_VERSION
    match = _RELEASE.fullmatch(tag.strip())
    return match.group(1) if match else FALLBACK_VERSION


def write_version_files(sides: tuple[Checkout, ...], version: str) -> list[str]:
    """Write, in each checkout that lacks it, each version file its project declares; the notes
    saying so (none when nothing was written)."""
    notes = []
    numbers = tuple(int(part) for part in version.split("."))
    for side in sides:
        for relative, writer in declared_version_files(side.root):
            target = side.root / relative
            # a link in the project's tree could lead the write out of the checkout
            if target.is_symlink() or target.exists() or not target.parent.is_dir() or \
                    not target.resolve().is_relative_to(side.root.resolve()):
                continue
            text = TEMPLATE.format(tool=writer, version=version, numbers=numbers)
            target.write_text(text, encoding="utf-8")
            note = (f"{relative} (the version file {writer} writes at build time) is not in the checkout: "
                    f"written with version {version} on both sides.")
            if note not in notes:
                notes.append(note)
    return notes


def _setup_py_version_files(root: Path) -> list[str]:
    """`setup(use_scm_version={"write_to": ...})` read from setup.py's syntax (never run)."""
    try:
        tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    paths = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.keyword) and node.arg == "use_scm_version"):
            continue
        if isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if (isinstance(key, ast.Constant) and key.value in ("write_to", "version_file")
                        and isinstance(value, ast.Constant)):
                    paths.append(value.value)
    return paths


def _table(table: dict, key: str) -> dict:
    value = table.get(key)
    return value if isinstance(value, dict) else {}


def _inside(path: object) -> PurePosixPath | None:
    """`path` as a relative `.py` path that stays inside the checkout; None for anything else."""
    if not isinstance(path, str) or not path.endswith(".py"):
        return None
    relative = PurePosixPath(path.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        return None
    return relative
