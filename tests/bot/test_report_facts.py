"""Tests for `difforacle.bot.report_facts`: which differences are regressions."""

from __future__ import annotations

from difforacle.bot.report_facts import is_regression


def _difference(number: int, **fields: object) -> dict:
    base = {"id": f"D{number}", "kind": "return", "target": "pkg.parse:parse", "path": "pkg/parse.py",
            "line": 12, "side": "head", "base": "3600", "head": "3660",
            "test": "def test_parse():\n    assert parse('1h') == 3600\n"}
    base["pin_base"] = base["test"]
    return {**base, **fields}


def test_regressions_are_differences_where_head_newly_fails() -> None:
    assert is_regression(_difference(1, head="raises KeyError: 'x'"))
    assert is_regression(_difference(1, kind="api", head="API change (missing): parse"))
    assert not is_regression(_difference(1))
    assert not is_regression(_difference(1, base="raises KeyError", head="raises ValueError"))
