"""Tests for `difforacle.bot.report_facts`: which differences are regressions."""

from __future__ import annotations

from support.report_samples import json_difference

from difforacle.bot.report_facts import is_regression


def test_regressions_are_differences_where_head_newly_fails() -> None:
    assert is_regression(json_difference(1, head="raises KeyError: 'x'"))
    assert is_regression(json_difference(1, kind="api", head="API change (missing): parse"))
    assert not is_regression(json_difference(1))
    assert not is_regression(json_difference(1, base="raises KeyError", head="raises ValueError"))
