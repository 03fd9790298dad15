"""Tests for `difforacle.generator.changes.checkout`: repository opening, refs, worktrees and import
layout."""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from support.repos import RepoBuilder

from difforacle.generator.changes import checkout as workspace
from difforacle.generator.changes.checkout import checkouts, import_roots, module_name, open_repo, resolve
from difforacle.generator.errors import SetupError


def _worktree_paths(repo: git.Repo) -> list[str]:
    lines = repo.git.worktree("list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in lines if line.startswith("worktree ")]


# ---------------------------------------------------------------- open_repo / resolve


def test_open_repo_finds_the_repository_from_a_subfolder(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": ""})
    assert Path(open_repo(builder.root / "pkg").working_tree_dir) == builder.root


@pytest.mark.parametrize("name", ["plain", "missing"])
def test_open_repo_rejects_non_repositories(tmp_path: Path, name: str) -> None:
    if name == "plain":
        (tmp_path / name).mkdir()
    with pytest.raises(SetupError) as raised:
        open_repo(tmp_path / name)
    assert str(raised.value) == (
        f"{tmp_path / name} is not a git repository: run difforacle inside a clone or pass --repo"
    )


def test_resolve_returns_full_sha_for_branches_tags_and_short_shas(builder: RepoBuilder) -> None:
    sha = builder.commit({"a.py": "x = 1\n"})
    builder.repo.create_tag("v1")
    assert resolve(builder.repo, "main") == sha
    assert resolve(builder.repo, "v1") == sha
    assert resolve(builder.repo, sha[:8]) == sha


@pytest.mark.parametrize("ref", ["nope", "main~5", "--output=x", ""])
def test_resolve_rejects_unknown_refs(builder: RepoBuilder, ref: str) -> None:
    builder.commit({"a.py": "x = 1\n"})
    with pytest.raises(SetupError) as raised:
        resolve(builder.repo, ref)
    expected = f"unknown ref '{ref}': fetch it or check the name (git rev-parse {ref} failed)"
    assert str(raised.value) == expected


# ---------------------------------------------------------------- checkouts


def test_checkouts_give_both_commits_and_clean_up(builder: RepoBuilder) -> None:
    base = builder.commit({"pkg/__init__.py": "", "pkg/mod.py": "x = 1\n"})
    head = builder.commit({"pkg/mod.py": "x = 2\n"})
    builder.write({"pkg/mod.py": "x = 'uncommitted'\n", "scratch.txt": "dirty"})

    with checkouts(builder.repo, "main~1", "main") as (base_co, head_co):
        assert (base_co.ref, base_co.sha, head_co.ref, head_co.sha) == ("main~1", base, "main", head)
        assert (base_co.root / "pkg/mod.py").read_text() == "x = 1\n"
        assert (head_co.root / "pkg/mod.py").read_text() == "x = 2\n"
        assert not (head_co.root / "scratch.txt").exists()
        assert base_co.import_roots == (base_co.root,)
        assert head_co.root.parent == base_co.root.parent
        folder = base_co.root.parent

    assert not folder.exists()
    assert _worktree_paths(builder.repo) == [str(builder.root)]
    assert (builder.root / "pkg/mod.py").read_text() == "x = 'uncommitted'\n"


def test_checkouts_clean_up_after_an_exception(builder: RepoBuilder) -> None:
    builder.commit({"a.py": "x = 1\n"})
    with pytest.raises(RuntimeError), checkouts(builder.repo, "main", "main") as (base_co, _):
        folder = base_co.root.parent
        raise RuntimeError("boom")
    assert not folder.exists()
    assert _worktree_paths(builder.repo) == [str(builder.root)]


def test_checkouts_validate_refs_before_creating_anything(builder: RepoBuilder) -> None:
    builder.commit({"a.py": "x = 1\n"})
    with pytest.raises(SetupError, match="unknown ref 'nope'"), checkouts(builder.repo, "main", "nope"):
        pass
    assert _worktree_paths(builder.repo) == [str(builder.root)]


def test_checkouts_report_git_failures_and_clean_up(
    builder: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builder.commit({"a.py": "x = 1\n"})
    folder = tmp_path / "taken"
    (folder / "head").mkdir(parents=True)
    (folder / "head" / "file").write_text("in the way")
    monkeypatch.setattr(workspace.tempfile, "mkdtemp", lambda prefix: str(folder))
    with pytest.raises(SetupError) as raised, checkouts(builder.repo, "main", "main"):
        pass
    head = folder / "head"  # base was checked out already: it must be removed too
    assert str(raised.value) == f"cannot check out main in {head}: fatal: '{head}' already exists"
    assert not folder.exists()
    assert _worktree_paths(builder.repo) == [str(builder.root)]


def test_checkouts_of_a_src_layout(builder: RepoBuilder) -> None:
    builder.commit({"src/pkg/__init__.py": "", "tests/test_pkg.py": "", "setup.py": ""})
    with checkouts(builder.repo, "main", "main") as (base_co, head_co):
        assert base_co.import_roots == (base_co.root / "src",)
        assert head_co.import_roots == (head_co.root / "src",)


# ---------------------------------------------------------------- import_roots


def _tree(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["pkg/__init__.py", "tests/test_x.py", "setup.py"], ["."]),
        (["mod.py"], ["."]),
        (["src/pkg/__init__.py", "tests/test_x.py", "setup.py", "conftest.py"], ["src"]),
        (["src/mod.py"], ["src"]),
        (["src/pkg/__init__.py", "tools/__init__.py"], ["src", "."]),
        (["README.md", "tests/test_x.py"], ["."]),  # nothing importable: fall back to the root
        (["src/README.md", "pkg/__init__.py"], ["."]),
    ],
)
def test_import_roots(tmp_path: Path, names: list[str], expected: list[str]) -> None:
    root = _tree(tmp_path, names)
    assert import_roots(root) == tuple(root / name if name != "." else root for name in expected)


def test_import_roots_honour_setuptools_package_dir(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["lib/pkg/__init__.py"])
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\n"" = "lib"\n')
    assert import_roots(root) == (root / "lib",)


def test_import_roots_ignore_unreadable_pyproject(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["pkg/__init__.py"])
    (root / "pyproject.toml").write_text("this is [not toml")
    assert import_roots(root) == (root,)


# ---------------------------------------------------------------- module_name


@pytest.mark.parametrize(
    ("path", "roots", "expected"),
    [
        ("src/pkg/mod.py", ["src", "."], "pkg.mod"),
        ("src/pkg/__init__.py", ["src"], "pkg"),
        ("pkg/__init__.py", ["."], "pkg"),
        ("pkg/sub/mod.py", [""], "pkg.sub.mod"),
        ("mod.py", ["."], "mod"),
        ("lib/pkg/mod.py", ["lib"], "pkg.mod"),
        ("pkg/mod.py", ["src"], None),  # outside every root
        ("pkg/mod.txt", ["."], None),
        ("__init__.py", ["."], None),
        ("setup.py", ["."], None),
        ("conftest.py", ["."], None),
        ("pkg/conftest.py", ["."], None),
        ("tests/test_mod.py", ["."], None),
        ("tests/helpers.py", ["."], None),
        ("pkg/tests/helpers.py", ["."], None),
        ("docs/conf.py", ["."], None),
        ("examples/demo.py", ["."], None),
        ("benchmarks/bench.py", ["."], None),
        ("pkg/test_mod.py", ["."], None),
        ("pkg/mod_test.py", ["."], None),
        ("test.py", ["."], None),  # a root-level unittest file: `from test import ...` is the stdlib's
        ("pkg/tests.py", ["."], None),
        ("pkg/tests_util.py", ["."], None),
        ("pkg/mod_tests.py", ["."], None),
        ("pkg/testing/helpers.py", ["."], "pkg.testing.helpers"),  # public test helpers (numpy.testing)
        ("pkg/testing.py", ["."], "pkg.testing"),  # a library's public test helpers (click.testing)
        ("pkg/testimony.py", ["."], "pkg.testimony"),
        ("my-scripts/run.py", ["."], None),
        ("pkg/class.py", ["."], None),
        ("pkg/mod.v2.py", ["."], None),
    ],
)
def test_module_name(path: str, roots: list[str], expected: str | None) -> None:
    assert module_name(path, roots) == expected
