"""The engine follows its budget plan: units ranked by defect score, reached through public callers."""

from __future__ import annotations

import math
import os

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder

from difforacle.generator.report.json_form import report_to_json, validate_report


def _module(risky_offset: int, calm_offset: int) -> str:
    return f'''\
def _scale(value):
    return value * 2 + {risky_offset}


def convert(value):
    return _scale(value) + 1


def calm(value):
    return value - {calm_offset}
'''


@pytest.fixture
def history(builder: RepoBuilder, monkeypatch: pytest.MonkeyPatch, tmp_path) -> RepoBuilder:
    """`calm` is written once, long ago; `_scale` is fixed again and again by several authors."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the history cache lives under ~/.cache
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    builder.commit({"pkg/__init__.py": "", "pkg/units.py": _module(0, 0)}, "initial version")
    for number, author in enumerate(["ann", "bob", "cyd", "dee", "eve", "fay"], start=1):
        builder.repo.git.commit("-q", "--allow-empty", "-m", "docs")  # time passes
        builder.write({"pkg/units.py": _module(number, 0)})
        builder.repo.git.add("-A")
        builder.repo.git.commit("-q", "-m", f"fix: wrong scale, take {number}",
                                f"--author={author} <{author}@example.com>")
    builder.branch("feature")
    builder.commit({"pkg/units.py": _module(100, 5)}, "tune")
    builder.switch("main")
    return builder


def test_defect_allocation_favours_the_unit_with_many_recent_fixes(history: RepoBuilder) -> None:
    report = run_analyze(history, max_sequences=300)

    allocation = report.allocation
    assert allocation is not None and allocation.mode == "defect"
    shares = {unit.unit: unit for unit in allocation.units}
    assert set(shares) == {"pkg.units:_scale", "pkg.units:calm", "pkg.units:convert"}
    assert shares["pkg.units:_scale"].tier == shares["pkg.units:calm"].tier == 1
    assert shares["pkg.units:convert"].tier == 2  # impacted: the public caller of the helper
    assert shares["pkg.units:_scale"].probability > shares["pkg.units:calm"].probability
    assert shares["pkg.units:_scale"].share > shares["pkg.units:calm"].share
    assert math.fsum(unit.share for unit in allocation.units) == pytest.approx(1.0)
    assert [u.unit for u in allocation.units][:2] == ["pkg.units:_scale", "pkg.units:calm"]
    # the changed private helper is tested through its public caller
    targets = {d.target for d in report.differences}
    assert {"pkg.units:convert", "pkg.units:calm"} <= targets, targets
    validate_report(report_to_json(report))


def test_uniform_allocation_shares_equally_and_reads_no_history(history: RepoBuilder) -> None:
    report = run_analyze(history, max_sequences=300, allocation="uniform")

    assert report.allocation is not None and report.allocation.mode == "uniform"
    assert [u.share for u in report.allocation.units] == pytest.approx([1 / 3] * 3)
    assert {u.probability for u in report.allocation.units} == {0.0}
    assert report.stats.history_seconds == 0.0
    assert not os.path.exists(os.path.expanduser("~/.cache/difforacle"))
