"""Subclasses: a class whose methods changed is also built as a subclass with nothing of its own,
as a user's; a method that builds its own class by name where it should build `type(self)` (or
the other way round) differs only there. The rendered test defines the subclass."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.analysis import run_analyze, statuses_on_both_commits
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components

VERSION = '''\
class Version:
    def __init__(self, major: int, minor: int = 0) -> None:
        self.major, self.minor = major, minor

    def bump(self) -> "Version":
        return type(self)(self.major + 1, self.minor)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.major}, {self.minor})"
'''
BY_NAME = VERSION.replace("return type(self)(", "return Version(")


@pytest.mark.slow
def test_a_method_that_stops_building_its_subclass_is_found(builder: RepoBuilder, tmp_path: Path) -> None:
    make_pr(builder, {"versions.py": VERSION}, {"versions.py": BY_NAME})
    differences = [d for d in run_analyze(builder).differences if d.target == "versions:Version.bump"]
    assert differences
    test = differences[0].test
    assert "class MyVersion(Version):" in test and "MyVersion(" in test.split("def test_")[1]
    assert statuses_on_both_commits(builder, test, tmp_path) == (0, 1)  # passes on base, fails on head


def test_without_the_technique_no_call_tells_them_apart(builder: RepoBuilder) -> None:
    make_pr(builder, {"versions.py": VERSION}, {"versions.py": BY_NAME})
    report = run_analyze(builder, components=Components.without(["subclasses"]))
    assert not [d for d in report.differences if d.target == "versions:Version.bump"]
