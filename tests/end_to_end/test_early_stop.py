"""Early stopping end to end: a run whose changed code is exhausted early stops exploring before its
budget's end and says so, with the difference found all the same; `early_stop=False`
(`--no-early-stop`) explores until the end; a run bound by a count of sequences never stops early."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator import Report

BASE = '''\
def shipping(weight: int) -> int:
    """The shipping cost of a parcel of `weight` grams."""
    if weight > 1000:
        return 12
    return 5
'''
HEAD = BASE.replace("return 12", "return 13")


def _analyze(builder: RepoBuilder, **options: object) -> Report:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/parcels.py": BASE}, {"pkg/parcels.py": HEAD})
    return run_analyze(builder, **options)


def _stopped(report: Report) -> list[str]:
    return [note for note in report.notes if note.startswith("Exploring stopped at")]


@pytest.mark.slow
def test_an_exhausted_change_stops_exploring_early_and_the_report_says_so(builder: RepoBuilder) -> None:
    report = _analyze(builder, budget=40.0, max_sequences=None, jobs=2)
    assert [(d.target, d.base, d.head) for d in report.differences] == [("pkg.parcels:shipping", "12", "13")]
    assert report.stats.explore_stopped_early == 1 and report.stats.explore_workers == 2
    [note] = _stopped(report)
    assert "of the 40 s budget: the changed code was exhausted (every changed line and branch" in note
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines


@pytest.mark.slow
def test_without_early_stopping_exploring_lasts_until_the_deadline(builder: RepoBuilder) -> None:
    report = _analyze(builder, budget=12.0, max_sequences=None, early_stop=False)
    assert report.stats.explore_stopped_early == 0 and not _stopped(report)
    assert [d.target for d in report.differences] == ["pkg.parcels:shipping"]


@pytest.mark.slow
def test_a_run_bound_by_a_count_of_sequences_never_stops_early(builder: RepoBuilder) -> None:
    report = _analyze(builder, max_sequences=3000, budget=60.0)
    assert report.stats.explore_stopped_early == 0 and not _stopped(report)
    assert report.stats.sequences == 3000


@pytest.mark.slow
def test_a_change_the_imports_alone_ran_is_waited_out_longer(builder: RepoBuilder) -> None:
    base = BASE.replace("def shipping(weight: int)", "def shipping(weight: int, heavy: int = 1000)")
    base = base.replace("if weight > 1000", "if weight > heavy")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/parcels.py": base},
            {"pkg/parcels.py": base.replace("heavy: int = 1000", "heavy: int = 2000")})  # a default value
    report = run_analyze(builder, budget=40.0, max_sequences=None)
    assert [d.target for d in report.differences] == ["pkg.parcels:shipping"]
    [note] = _stopped(report)
    assert "the changed lines run at import, so what exploring reached is not seen in them" in note
