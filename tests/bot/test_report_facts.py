"""Tests for `difforacle.bot.report_facts`: which differences are regressions."""

from __future__ import annotations

from support.report_samples import json_difference

from difforacle.bot.report_facts import behavioural, counts, is_regression


def test_regressions_are_differences_where_head_newly_fails() -> None:
    assert is_regression(json_difference(1, head="raises KeyError: 'x'"))
    assert is_regression(json_difference(1, kind="api", head="API change (missing): parse"))
    assert not is_regression(json_difference(1))
    assert not is_regression(json_difference(1, base="raises KeyError", head="raises ValueError"))


def test_what_counts_fails_checks_and_sets_the_exit_status() -> None:
    outside = json_difference(1, head="raises AttributeError: x", verdict="outside-declared-types")
    minor = json_difference(2, base="raises TypeError: a", head="raises TypeError: b", severity="minor")
    unexplained = json_difference(3, verdict="unexplained")
    older = json_difference(4)  # a report from before verdicts: every major difference counts
    assert [counts(d) for d in (outside, minor, unexplained, older)] == [False, False, True, True]
    assert behavioural({"differences": [outside, minor, unexplained, older]}) == [unexplained, older]
    assert not is_regression(outside)  # head newly raises, but only on an input no caller passes
