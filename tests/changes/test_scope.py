"""Tests for `difforacle.generator.changes.scope`: which changed files a run tests and which
targets' differences it reports. The engine applies the scope before and during the run (by diff,
the Action and the App alike): tests/end_to_end/test_scope_settings.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from difforacle.generator import Scope
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
