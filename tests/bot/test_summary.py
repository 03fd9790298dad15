"""Tests for `difforacle.bot.summary`: what a pull request gets to read, the summary comment, the
check run's title, review comments and suggestions."""

from __future__ import annotations

from support.report_samples import json_difference

from difforacle.bot.summary import (
    COMMENT_LIMIT,
    SUMMARY_MARKER,
    headline,
    review_comment,
    suggestion,
    summary_markdown,
)


def _report(differences: list[dict]) -> dict:
    return {"schema": "difforacle.report/1", "base": "a" * 40, "head": "b" * 40, "differences": differences,
            "coverage": {"changed_lines": 4, "changed_lines_covered": 3, "uncovered": {"pkg/parse.py": [13]}},
            "stats": {"sequences": 10, "seconds": 1.0}, "notes": ["a note"]}


def test_summary_names_each_difference_and_what_was_not_reached() -> None:
    failing = json_difference(2, kind="exception", head="raises ValueError: bad")
    report = _report([json_difference(1), failing])
    text = summary_markdown(report, inline={"D1"})
    assert text.startswith(SUMMARY_MARKER + "\n\n## difforacle: aaaaaaa..bbbbbbb\n")
    assert "**2 behavioural differences** in the changed code, 1 where head now fails." in text
    title = "difforacle: 2 behavioural differences, 1 where head now fails (aaaaaaa..bbbbbbb)"
    assert headline(report) == title  # the check run's title
    row = "| D1 | `pkg.parse:parse` | return | `3600` | `3660` | `pkg/parse.py:12` (review comment) |"
    assert row in text
    assert ("Not covered (no difference there means *not tested*, not *unchanged*):\n\n- `pkg/parse.py`: 13"
            in text)
    assert "- a note" in text
    assert text.count("\n### D") == 2 and text.count("Regression test (passes on base, fails on head)") == 2


def test_summary_stays_below_the_comment_limit_and_says_what_it_left_out() -> None:
    big = "def test_x():\n" + "    x = 1\n" * 3000
    text = summary_markdown(_report([json_difference(n, test=big, pin_base=big) for n in range(1, 40)]))
    assert len(text) < COMMENT_LIMIT
    assert "more finding(s) left out" in text and "| D39 |" in text


def test_review_comment_and_suggestion_carry_the_test() -> None:
    comment = review_comment(json_difference(1))
    assert "base: `3600`" in comment and "```python\ndef test_parse():" in comment
    block = suggestion(json_difference(1), "    assert True")
    assert "```suggestion\n    assert True\n\n\ndef test_parse():" in block
