"""Tests for `difforacle.generator.changes.scope`: which changed files a run tests and which
targets' differences it reports, applied by the engine before and during the run (by diff, the
Action and the App alike)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.command_line import run_cli
from support.repos import RepoBuilder, make_pr

from difforacle.generator import FloatPolicy, Scope
from difforacle.generator.changes.model import ChangeSet, FileChange, Unit

# ---------------------------------------------------------------- patterns

@pytest.mark.parametrize(("path", "expected"), [
    ("src/pkg/mod.py", True),
    ("./src/pkg/mod.py", True),
    ("src/mod.py", True),
    ("src/pkg/vendored/six.py", False),  # a folder covers everything below it
    ("src/pkg/vendored.py", True),  # ... but not a name that merely starts with it
    ("src/pkg/test_mod.py", False),
    ("src/test_top.py", False),  # ** also matches no folder at all
    ("scripts/run.py", False),  # not included
    ("setup.py", False),
])
def test_include_and_exclude(path: str, expected: bool) -> None:
    scope = Scope(include=("src/**",), exclude=("src/pkg/vendored", "**/test_*.py"))
    assert scope.covers(path) is expected


def test_everything_matches_by_default() -> None:
    assert Scope().covers("any/where/at/all.py") and Scope().covers(Path("x.py"))


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.py", "mod.py", True),
    ("*.py", "pkg/mod.py", False),  # anchored at the root; * stays within a segment
    ("**/*.py", "pkg/mod.py", True),
    ("pkg/*/x.py", "pkg/a/x.py", True),
    ("pkg/*/x.py", "pkg/a/b/x.py", False),
    ("pkg/**/x.py", "pkg/a/b/x.py", True),
    ("pkg/**/x.py", "pkg/x.py", True),
    ("pkg/", "pkg/mod.py", True),
    ("mod?.py", "mod1.py", True),
    ("mod?.py", "mod/.py", False),
    ("mod[0-9].py", "mod5.py", True),
    ("mod[!0-9].py", "mod5.py", False),
    ("mod[!0-9].py", "moda.py", True),
    ("we[ird.py", "we[ird.py", True),  # an unclosed [ is literal
    ("a+b(c).py", "a+b(c).py", True),  # regex metacharacters are literal
])
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert Scope(include=(pattern,)).covers(path) is expected


@pytest.mark.parametrize(("target", "expected"), [
    ("pkg.clock:now", True),
    ("pkg.clock:Clock.read", True),
    ("pkg.timer:Timer.now", True),
    ("pkg.timer:Timer.nowhere", False),
    ("pkg.clockwork:tick", False),
    ("PKG.CLOCK:now", False),  # case-sensitive on every platform
])
def test_ignored_targets(target: str, expected: bool) -> None:
    scope = Scope(ignore_targets=("pkg.clock:*", "*:Timer.now"))
    assert scope.ignores(target) is expected
    assert not Scope().ignores(target)


# ---------------------------------------------------------------- restricting the changes


def _unit(module: str, path: str) -> Unit:
    return Unit(module, "f", "function", "modified", path, 1, 2)


def test_changes_outside_the_scope_are_skipped_before_the_run() -> None:
    inside = FileChange("src/pkg/a.py", "src/pkg/a.py", "pkg.a", frozenset({1}), frozenset({1}))
    vendored = FileChange("src/pkg/vendor/six.py", "src/pkg/vendor/six.py", "pkg.vendor.six", frozenset({1}),
                          frozenset({1}))
    moved_in = FileChange("old/b.py", "src/pkg/b.py", "pkg.b", frozenset(), frozenset({2}))
    changes = ChangeSet("0" * 40, (inside, vendored, moved_in),
                        (_unit("pkg.a", "src/pkg/a.py"), _unit("pkg.vendor.six", "src/pkg/vendor/six.py"),
                         _unit("pkg.b", "src/pkg/b.py")), ("README.md: not Python",))
    restricted = Scope(include=("src",), exclude=("**/vendor",)).restrict(changes)
    assert restricted.modules == ("pkg.a", "pkg.b")  # a renamed file counts where it is now
    assert [u.module for u in restricted.units] == ["pkg.a", "pkg.b"]
    assert restricted.skipped == ("README.md: not Python",
                                  "src/pkg/vendor/six.py: outside the include/exclude settings: not tested")
    assert Scope(ignore_targets=("pkg.a:*",)).restrict(changes) is changes  # targets are not paths


# ---------------------------------------------------------------- the engine applies it as it runs

BEFORE = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def f(x):\n    return x + 1\n\n\ndef k(x):\n    return x * 0.1\n",
    "pkg/b.py": "def g(x):\n    return x - 1\n",
    "vendor/__init__.py": "",
    "vendor/c.py": "def h(x):\n    return x * 2\n",
}
AFTER = {
    "pkg/a.py": "def f(x):\n    return x + 2\n\n\ndef k(x):\n    return x * 0.10000001\n",
    "pkg/b.py": "def g(x):\n    return x - 2\n",
    "vendor/c.py": "def h(x):\n    return x * 3\n",
}
SETTINGS = textwrap.dedent("""
    [tool.difforacle]
    exclude = ["vendor"]
    ignore-targets = ["pkg.b:*"]
    float-policy = {rel = 1e-6}
""")


@pytest.fixture
def project(builder: RepoBuilder) -> RepoBuilder:
    make_pr(builder, BEFORE, AFTER)
    return builder


def _targets(report) -> set[str]:
    return {d.target for d in report.differences}


def test_without_settings_every_change_differs(project: RepoBuilder) -> None:
    report = run_analyze(project, budget=10, max_sequences=400)
    assert _targets(report) == {"pkg.a:f", "pkg.a:k", "pkg.b:g", "vendor.c:h"}


def test_the_scope_and_the_float_policy_apply_before_and_during_the_run(project: RepoBuilder) -> None:
    report = run_analyze(project, budget=10, max_sequences=400,
                         scope=Scope(exclude=("vendor",), ignore_targets=("pkg.b:*",)),
                         floats=FloatPolicy(rel=1e-6))
    assert _targets(report) == {"pkg.a:f"}
    assert report.allocation is not None  # no budget planned for what is left out
    assert {u.unit for u in report.allocation.units} == {"pkg.a:f", "pkg.a:k"}
    assert any("1 changed Python file(s) outside the include/exclude settings" in n for n in report.notes)
    assert "vendor/c.py" not in report.coverage.sides["head"].uncovered  # not measured either


@pytest.mark.slow
def test_diff_reads_the_projects_settings_and_its_flags_override_them(project: RepoBuilder,
                                                                      tmp_path: Path) -> None:
    (project.root / "pyproject.toml").write_text(SETTINGS)  # the working tree's, as a user edits it
    common = ("diff", "--repo", str(project.root), "--base", "main", "--head", "feature", "--budget", "10",
              "--max-sequences", "400", "--quiet")
    read = run_cli(*common, "--json", str(tmp_path / "read.json"))
    assert read.returncode == 1, read.stderr
    assert "### return: `pkg.a:f`" in read.stdout and "pkg.b:g" not in read.stdout
    assert "vendor.c:h" not in read.stdout and "pkg.a:k" not in read.stdout
    flags = run_cli(*common, "--exclude", "pkg/a.py", "--include", "pkg")  # replaces the file's lists
    assert flags.returncode == 0, flags.stderr  # only pkg/b.py is left, and its target is still ignored
    assert "showed differences in targets the project ignores" in flags.stdout
    other = tmp_path / "settings.toml"
    other.write_text("[tool.difforacle]\nexclude = [\"pkg\"]\n")
    elsewhere = run_cli(*common, "--config", str(other))
    assert elsewhere.returncode == 1 and "vendor.c:h" in elsewhere.stdout and "pkg.a" not in elsewhere.stdout


def test_bad_settings_stop_diff_with_one_line(project: RepoBuilder, tmp_path: Path) -> None:
    (project.root / "pyproject.toml").write_text("[tool.difforacle]\nexclued = [\"vendor\"]\n")
    result = run_cli("diff", "--repo", str(project.root), "--base", "main", "--head", "feature", "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown key 'exclued' (did you mean 'exclude'?)" in result.stderr
    missing = run_cli("diff", "--repo", str(project.root), "--base", "main", "--head", "feature",
                      "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
