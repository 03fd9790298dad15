"""Parameters of standard-library types the package cannot build (text streams, paths to
files, dates, times and durations) get values from the detective's stdlib providers, so a
regression behind such a parameter is found, and its test builds the same value."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.analysis import differences_summary, run_analyze, run_pytest_file
from support.repos import RepoBuilder, export_commit, make_pr

from difforacle.generator.report.model import Difference

BASE = '''\
"""Functions whose parameters only standard-library objects satisfy."""

import datetime
import os
import typing


def count_words(stream: typing.TextIO) -> int:
    return sum(len(line.split()) for line in stream)


def first_line(path: "str | os.PathLike[str]") -> str:
    if not os.path.exists(path):
        raise FileNotFoundError(path)
    with open(path, encoding="utf-8") as handle:
        return handle.readline().strip()


def quarter(when: datetime.datetime) -> int:
    return (when.month - 1) // 3 + 1


def minutes(delta: datetime.timedelta) -> int:
    return int(delta.total_seconds() // 60)
'''
HEAD = (BASE.replace("len(line.split())", "len(line.split()) + 1")
        .replace("return handle.readline().strip()", "return handle.readline()")
        .replace("(when.month - 1) // 3 + 1", "when.month // 3 + 1")
        .replace("// 60)", "// 61)"))
TARGETS = ("tools.io:count_words", "tools.io:first_line", "tools.io:quarter", "tools.io:minutes")


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoBuilder, dict[str, Difference]]:
    """One analysis of the pull request, shared by the tests below (it takes a while)."""
    builder = RepoBuilder(tmp_path_factory.mktemp("repo"))
    make_pr(builder, {"tools/__init__.py": "", "tools/io.py": BASE}, {"tools/io.py": HEAD})
    report = run_analyze(builder, budget=20, max_sequences=600)
    found = {d.target: d for d in report.differences}
    assert set(found) == set(TARGETS), differences_summary(report)
    return builder, found


@pytest.mark.slow
def test_regressions_behind_stdlib_parameters_are_found_and_reproduced(
        analyzed: tuple[RepoBuilder, dict[str, Difference]], tmp_path: Path) -> None:
    builder, found = analyzed
    assert all(d.reproduced for d in found.values())
    assert "io.StringIO(" in found["tools.io:count_words"].test
    assert "datetime.datetime(" in found["tools.io:quarter"].test
    assert "datetime.timedelta(" in found["tools.io:minutes"].test
    base = export_commit(builder.root, "main", tmp_path / "export-base")
    head = export_commit(builder.root, "feature", tmp_path / "export-head")
    for target in TARGETS:  # each test passes on base and fails on head, outside the engine too
        test = found[target].test
        assert run_pytest_file(test, tmp_path / "base" / target, base).returncode == 0, test
        on_head = run_pytest_file(test, tmp_path / "head" / target, head)
        assert on_head.returncode == 1 and "1 failed" in on_head.stdout, test


@pytest.mark.slow
def test_a_path_parameter_gets_a_file_the_rendered_test_writes_first(
        analyzed: tuple[RepoBuilder, dict[str, Difference]]) -> None:
    test = analyzed[1]["tools.io:first_line"].test
    assert "(monkeypatch, tmp_path):" in test, test
    assert "monkeypatch.chdir(tmp_path)" in test and ".write_text(" in test, test
    assert "first_line(pathlib.Path(" in test or "first_line(path" in test, test
