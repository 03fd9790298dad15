"""Divergence-directed search end to end: a boundary on a changed line that runs on every call is
reached by moving an input toward it, and missed by the same sequences without the search."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator import Report
from difforacle.generator.generation.techniques import Components

# The fee changes only at one quantity (the equality of a product the source does not spell out):
# no literal of the source or its neighbours is that quantity, and random integers rarely are.
BASE = '''\
def fee(quantity: int) -> int:
    """The fee for `quantity` items: bulk orders pay less per item."""
    if quantity * 3 >= 22020:
        return quantity * 2
    return quantity * 3
'''
HEAD = BASE.replace("quantity * 3 >= 22020", "quantity * 3 > 22020")


def _analyze(builder: RepoBuilder, *disabled: str) -> Report:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/fees.py": BASE}, {"pkg/fees.py": HEAD})
    return run_analyze(builder, max_sequences=500, budget=60, components=Components.without(disabled))


@pytest.mark.slow
def test_the_search_moves_an_input_onto_the_boundary_and_finds_the_difference(builder: RepoBuilder) -> None:
    report = _analyze(builder)
    assert {(d.target, d.base, d.head) for d in report.differences} == {("pkg.fees:fee", "14680", "22020")}
    stats = report.stats
    divergence = stats.techniques["divergence"]
    assert divergence["conditions"] == 2  # the comparison, on each commit
    assert divergence["searches"] >= 1 and divergence["boundaries"] >= 1
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines


@pytest.mark.slow
def test_the_same_sequences_run_the_line_and_miss_the_boundary_without_it(builder: RepoBuilder) -> None:
    report = _analyze(builder, "divergence")
    assert not report.differences
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines
    assert "divergence" not in report.stats.techniques
