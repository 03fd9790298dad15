"""Git plumbing: open the repository, resolve refs, and check out base and head side by side.

Both commits are checked out as detached worktrees in a temporary folder so the user's own
work tree (possibly with uncommitted edits) is never touched, and both sides can be
imported at the same time by separate worker processes.
"""

from __future__ import annotations

import keyword
import shutil
import tempfile
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..errors import SetupError
from .model import Checkout

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

# Folders and files that hold code nobody imports as part of the package under test: test code
# (whatever its depth), documentation, examples, benchmarks, the build script.
_NON_IMPORTABLE_DIRS = frozenset({"tests", "test", "docs", "examples", "benchmarks"})
_NON_IMPORTABLE_FILES = frozenset({"setup.py", "conftest.py", "test.py", "tests.py"})
_TEST_PREFIXES = ("test_", "tests_")
_TEST_SUFFIXES = ("_test", "_tests")


# ---------------------------------------------------------------- repository and refs


def open_repo(path: str | Path) -> git.Repo:
    """Open the repository containing `path`, turning GitPython's errors into a usage message."""
    import git
    try:
        return git.Repo(path, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise SetupError(
            f"{path} is not a git repository: run difforacle inside a clone or pass --repo"
        ) from None


def resolve(repo: git.Repo, ref: str) -> str:
    """Full commit sha of `ref`; refs are validated here so later git calls cannot fail on them."""
    import git

    message = f"unknown ref '{ref}': fetch it or check the name (git rev-parse {ref} failed)"
    if not ref or ref.startswith("-"):  # never let a ref be parsed as a git option
        raise SetupError(message)
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
    except git.GitCommandError:
        raise SetupError(message) from None


# ---------------------------------------------------------------- worktrees


@contextmanager
def checkouts(repo: git.Repo, base_ref: str, head_ref: str) -> Iterator[tuple[Checkout, Checkout]]:
    """Check out base and head as detached worktrees; always remove them and their folder on exit."""
    base_sha, head_sha = resolve(repo, base_ref), resolve(repo, head_ref)
    folder = Path(tempfile.mkdtemp(prefix="difforacle-")).resolve()
    with ExitStack() as cleanup:
        cleanup.callback(_worktree_quietly, repo, "prune")  # callbacks run last-in first-out
        cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
        base = _add_worktree(repo, cleanup, folder / "base", base_ref, base_sha)
        head = _add_worktree(repo, cleanup, folder / "head", head_ref, head_sha)
        yield base, head


def _add_worktree(repo: git.Repo, cleanup: ExitStack, root: Path, ref: str, sha: str) -> Checkout:
    """Add one detached worktree and register its removal before anything can go wrong."""
    import git

    cleanup.callback(_worktree_quietly, repo, "remove", "--force", "--force", str(root))
    try:
        repo.git.worktree("add", "--detach", "--quiet", str(root), sha)
    except git.GitCommandError as error:
        raise SetupError(f"cannot check out {ref} in {root}: {_git_message(error)}") from None
    return Checkout(ref=ref, sha=sha, root=root, import_roots=import_roots(root))


def _worktree_quietly(repo: git.Repo, *args: str) -> None:
    """Best-effort cleanup: a failure here must not hide the exception that ended the run."""
    import git

    with suppress(git.GitCommandError):
        repo.git.worktree(*args)


def _git_message(error: git.GitCommandError) -> str:
    """The `fatal:` line of git's stderr, for a one-line SetupError."""
    stderr = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else str(error.stderr)
    lines = [line.strip().removeprefix("stderr: ").strip("'") for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["git failed"])[-1]


# ---------------------------------------------------------------- import layout


def import_roots(root: Path) -> tuple[Path, ...]:
    """Folders to put on sys.path for a checkout: declared package dir, `src/` layout, flat layout."""
    roots = [path for path in (_declared_package_dir(root), root / "src") if path and _has_code(path)]
    if _has_code(root, skip=roots) or not roots:
        roots.append(root)
    return tuple(dict.fromkeys(roots))


def _declared_package_dir(root: Path) -> Path | None:
    """`[tool.setuptools.package-dir] "" = "lib"` from pyproject.toml, when it is there and readable."""
    try:
        config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    folder = config.get("tool", {}).get("setuptools", {}).get("package-dir", {}).get("")
    return root / folder if isinstance(folder, str) and folder not in ("", ".") else None


def _has_code(folder: Path, skip: Iterable[Path] = ()) -> bool:
    """True when `folder` directly holds an importable module or a package with Python files.

    `skip` are sub-folders already used as import roots: `src/` is not a package of the root.
    """
    if not folder.is_dir():
        return False
    for child in folder.iterdir():
        if child.is_file() and _is_importable_file(child.name):
            return True
        if child.is_dir() and child not in skip and _is_package(child):
            return True
    return False


def _is_package(folder: Path) -> bool:
    return _is_importable_dir(folder.name) and any(folder.glob("*.py"))


def module_name(path: str, roots: Iterable[str | PurePosixPath]) -> str | None:
    """Dotted module name of a repository-relative `.py` path, or None when nobody would import it.

    `roots` are repository-relative import roots ("." or "" for the repository root); the
    first one containing `path` decides the name.
    """
    parts = PurePosixPath(path).parts
    for root in roots:
        prefix = PurePosixPath(root).parts  # PurePosixPath(".").parts == ()
        if parts[: len(prefix)] == prefix:
            return _dotted(parts[len(prefix) :])
    return None


def _dotted(parts: tuple[str, ...]) -> str | None:
    """`("pkg", "mod.py")` -> `pkg.mod`; None for tests, scripts and non-identifier paths."""
    if not parts or not parts[-1].endswith(".py") or not _is_importable_file(parts[-1]):
        return None
    folders, stem = parts[:-1], parts[-1].removesuffix(".py")
    if not all(_is_importable_dir(folder) for folder in folders):
        return None
    names = folders if stem == "__init__" else (*folders, stem)
    return ".".join(names) or None


def _is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def _is_importable_dir(name: str) -> bool:
    return _is_identifier(name) and name not in _NON_IMPORTABLE_DIRS


def _is_importable_file(name: str) -> bool:
    stem = name.removesuffix(".py")
    return (
        name.endswith(".py")
        and _is_identifier(stem)
        and name not in _NON_IMPORTABLE_FILES
        and not stem.startswith(_TEST_PREFIXES)
        and not stem.endswith(_TEST_SUFFIXES)
    )


def branch_name(repo: git.Repo, ref: str) -> str:
    """`feature` for a ref naming a local or remote-tracking branch; '' for a tag or a sha."""
    import git

    try:
        full = repo.git.rev_parse("--symbolic-full-name", ref).strip()
    except git.GitCommandError:
        return ""
    if full.startswith("refs/heads/"):
        return full.removeprefix("refs/heads/")
    if full.startswith("refs/remotes/"):
        return full.removeprefix("refs/remotes/").partition("/")[2]
    return ""
