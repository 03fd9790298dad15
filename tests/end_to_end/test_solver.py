"""Solver-found inputs end to end: changed branches only a solved input takes are reached and
their differences found with the `solver` component (CrossHair), and missed without it; the
component is off unless enabled."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.crosshair import CODES, needs_crosshair
from support.repos import RepoBuilder, make_pr

from difforacle.bot.cli import build_parser
from difforacle.generator import Report
from difforacle.generator.generation.techniques import ALL, Components

# ---------------------------------------------------------------- the switch


def test_the_solver_is_off_unless_enabled() -> None:
    assert not ALL.switches.solver
    args = build_parser().parse_args(["diff", "--base", "a", "--head", "b", "--enable", "solver"])
    assert Components.without(args.disable, args.enable).switches.solver
    assert not Components.without(["solver"], ["solver"]).switches.solver  # disabling wins
    assert Components.without([], ["solver"]).switches.influence  # the others stay on


# ---------------------------------------------------------------- end to end


def _codes_pr(builder: RepoBuilder) -> None:
    changed = CODES.replace('"reserved"', '"RESERVED"').replace('"welcome back"', '"welcome back!"')
    make_pr(builder, {"pkg/__init__.py": "", "pkg/codes.py": CODES}, {"pkg/codes.py": changed})


def _found(report) -> set[str]:
    return {d.target for d in report.differences}


def _analyze(builder: RepoBuilder, *enabled: str) -> Report:
    """The same 300 sequences, with `enabled` switched on besides the defaults."""
    return run_analyze(builder, max_sequences=300, budget=60, components=Components.without([], enabled))


@pytest.mark.slow
@needs_crosshair
def test_solved_inputs_reach_the_branches_and_find_the_differences(builder: RepoBuilder) -> None:
    _codes_pr(builder)
    report = _analyze(builder, "solver")
    assert _found(report) == {"pkg.codes:classify", "pkg.codes:greet"}
    stats = report.stats
    solver = stats.techniques["solver"]
    assert solver["calls"] == 2 and solver["inputs"] >= 2 and solver["seconds"] > 0
    assert solver["new_coverage"] == 4  # the two changed lines, on both sides
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines == 2


@pytest.mark.slow
def test_the_same_sequences_miss_them_without_the_solver(builder: RepoBuilder) -> None:
    _codes_pr(builder)
    report = _analyze(builder)
    assert not report.differences
    assert report.coverage.changed_lines_covered == 0
    assert "solver" not in report.stats.techniques and "diffbehavior" not in report.stats.techniques


# ---------------------------------------------------------------- asking for divergence

# The changed line runs on every call; base and head differ only for codes of one residue modulo
# 1000 that are odd (633, 1633, ...), which random and mined integers rarely are.
BOUNDARY = CODES.replace('        if code * 7 % 1000 == 431:\n', '        if is_reserved(code):\n') + (
    '\n\ndef is_reserved(code: int) -> bool:\n    return code * 7 % 1000 == 431\n')
ODD = BOUNDARY.replace("return code * 7 % 1000 == 431", "return code * 7 % 1000 == 431 and code % 2 == 0")


def _boundary_pr(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/codes.py": BOUNDARY}, {"pkg/codes.py": ODD})


@pytest.mark.slow
@needs_crosshair
def test_the_solver_finds_where_two_versions_diverge_on_lines_that_ran(builder: RepoBuilder) -> None:
    _boundary_pr(builder)
    report = _analyze(builder, "diffbehavior")
    assert _found(report) == {"pkg.codes:is_reserved"}
    [difference] = report.differences
    assert (difference.base, difference.head) == ("True", "False")
    assert report.stats.techniques["diffbehavior"]["calls"] == 1
    assert report.stats.techniques["diffbehavior"]["inputs"] >= 1


@pytest.mark.slow
def test_the_same_sequences_run_those_lines_and_miss_the_divergence_without_it(builder: RepoBuilder) -> None:
    _boundary_pr(builder)
    report = _analyze(builder)
    assert not report.differences
    assert "solver" not in report.stats.techniques and "diffbehavior" not in report.stats.techniques
