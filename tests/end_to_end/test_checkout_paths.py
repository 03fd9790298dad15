"""The run's own folders never make a difference: base and head are checked out in two folders, and
a path derived from `__file__` names each; the observer writes the checkout as one placeholder, so a
refactor of code that returns such a path is quiet, and a path that really changes is reported, with
a test that passes on base wherever the project is checked out."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.analysis import run_analyze, statuses_on_both_commits
from support.repos import RepoBuilder, make_pr

ASSETS = '''\
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def asset_folder() -> str:
    folder = os.path.join(HERE, "assets")
    return folder + os.sep


def asset(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"no asset {name!r} under {HERE}")
    return os.path.join(HERE, "assets", name + ".txt")
'''


def test_a_refactor_of_code_returning_paths_under_the_package_is_quiet(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/assets.py": ASSETS},
            {"pkg/assets.py": ASSETS.replace("folder = os.path.join", "path = os.path.join")
             .replace("return folder + os.sep", "return path + os.sep")})
    report = run_analyze(builder, max_sequences=300)
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines > 0
    assert report.differences == []


@pytest.mark.slow
def test_a_path_that_really_changes_is_reported_with_a_test_for_any_checkout(builder: RepoBuilder,
                                                                            tmp_path: Path) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/assets.py": ASSETS},
            {"pkg/assets.py": ASSETS.replace('name + ".txt"', 'name + ".text"')})
    report = run_analyze(builder, max_sequences=300)
    [difference] = [d for d in report.differences if d.target == "pkg.assets:asset" and d.kind == "return"]
    assert "<checkout>" in difference.base and difference.base.endswith(".txt'")
    assert "difforacle-" not in difference.base + difference.head  # no folder of the run's
    assert statuses_on_both_commits(builder, difference.test, tmp_path) == (0, 1)
