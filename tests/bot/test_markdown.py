"""Tests for `difforacle.bot.markdown`: the report's one Markdown layout (command line and pull
request alike), rendered from its JSON form, and the Markdown helpers."""

from __future__ import annotations

import copy
import json

import pytest
from support.report_samples import BASE, HEAD, sample_difference, sample_report

from difforacle.bot.markdown import (
    compress_lines,
    fenced,
    inline_code,
    inline_value,
    render_markdown,
    verdict,
)
from difforacle.generator import report_to_json
from difforacle.generator.report.model import Report, RunError, TableEntry

TEST = "def test_f():\n    assert f() == 1\n"


def _render(report: Report, **options: object) -> str:
    return render_markdown(report_to_json(report), **options)


def test_markdown_contents() -> None:
    text = _render(sample_report())
    assert "0123456..fedcba9" in text.splitlines()[0]
    # d3, a public name gone, is the one where head now fails
    assert "**4 behavioural differences** in the changed code, 1 where head now fails." in text
    assert "covered 13 of 20 changed lines" in text
    assert "- `pkg/mod.py`: 3, 10-14, 30" in text
    assert "### d1 return: `pkg.mod:Cache.get`" in text
    assert "### d2 exception: `pkg.mod:Cache.__setitem__`" in text
    assert "### d3 api: `pkg.util:<module>`" in text
    assert "At `pkg/mod.py:12`." in text
    assert "Location unknown." in text
    assert "| d1 | `pkg.mod:Cache.get` | return | `1` | `2` | `pkg/mod.py:12` |" in text
    assert ("| d2 | `pkg.mod:Cache.__setitem__` | exception | `None` | ``KeyError('a`b')`` | "
            "`pkg/mod.py:12` |") in text
    assert "| d3 | `pkg.util:<module>` | api | `1` | `2` |  |" in text
    assert "Seen in 3 sequences." in text and text.count("Seen in") == 1
    assert "```python\ndef test_x1():\n    assert 1 == 1\n```" in text
    assert "1200 sequences in 12.35 s (97.2 sequences per second)" in text
    assert "; 40 of them ran changed code and were run again on both commits; 1 crashed their process" in text
    assert "- Skipped non-Python file docs/index.md" in text
    assert "<!--" not in text and "review comment" not in text  # the pull request's options only


def test_the_sections_come_in_order() -> None:
    report = sample_report()
    report.differences.append(sample_difference(5, severity="minor", kind="exception",
                                                base="raises error: at 4", head="raises error: at 8"))
    text = _render(report)
    order = ["## difforacle:", "behavioural differences", "| | target |", "Changed-line coverage",
             "### d1 ", "### d4 ", "### Minor differences", "### d5 ", "### Stats", "### Notes"]
    positions = [text.index(mark) for mark in order]
    assert positions == sorted(positions)
    assert "| d5 | `pkg.mod:Cache.get` | exception (minor) |" in text
    assert ("**4 behavioural differences** in the changed code, 1 where head now fails. Nothing could be "
            "checked for 7 changed lines of 20. 1 minor difference in exception messages from outside the "
            "project.") in text


def test_markdown_truncates_long_values() -> None:
    text = _render(sample_report())
    assert "`" + "x" * 200 + "…`" in text
    assert "x" * 201 not in text


def test_markdown_for_no_differences() -> None:
    text = _render(Report(base=BASE, head=HEAD))
    assert "No behavioural difference: no changed line of importable code to run." in text
    assert "Changed-line coverage" not in text  # no "covered 0 of 0": nothing was there to cover
    assert "| | target |" not in text
    assert "###" in text and "### Notes" not in text


def test_coverage_with_branches_and_every_line_covered() -> None:
    data = report_to_json(Report(base=BASE, head=HEAD))
    data["coverage"] = {"changed_lines": 2, "changed_lines_covered": 2, "changed_branches": 2,
                        "changed_branches_covered": 1}
    lines = render_markdown(data).splitlines()
    assert ("Changed-line coverage: covered 2 of 2 changed lines (100%) and 1 of 2 branches out of them."
            in lines)
    assert "No behavioural difference in the 2 changed lines, all of which ran." in lines
    assert "Not covered" not in "\n".join(lines)


def test_uncovered_lines_say_that_nothing_was_tested_there() -> None:
    text = _render(sample_report())
    assert ("Changed-line coverage: covered 13 of 20 changed lines (65%). Not covered (no difference there "
            "means *not tested*, not *unchanged*):\n\n- `pkg/mod.py`: 3, 10-14, 30") in text


def test_unmeasured_coverage_is_said() -> None:
    data = report_to_json(Report(base=BASE, head=HEAD))
    data["coverage"]["measured_by"] = "not measured"
    text = render_markdown(data)
    assert "Changed-line coverage: not measured." in text
    assert "how much of the change was checked is unknown" in text


def test_a_partial_report_says_where_the_run_stopped() -> None:
    report = sample_report()
    report.error = RunError("confirming", "RuntimeError: boom")
    text = _render(report)
    assert ("**Partial report:** the run stopped on an internal error while confirming "
            "(`RuntimeError: boom`); see the notes.") in text
    assert text.splitlines()[2].startswith("**Partial report:**")
    assert "Partial report" not in _render(Report(base=BASE, head=HEAD))


def test_the_details_of_a_difference() -> None:
    pin_head = "def test_x1_head():\n    assert 1 == 2\n"
    report = Report(base=BASE, head=HEAD, differences=[
        sample_difference(1, pin_head=pin_head, reproduced=False),
        sample_difference(2, side="base", line=7, reproduced=True)])
    text = _render(report)
    assert "**Not reproduced:** pytest did not confirm this test in a fresh process; treat with care." in text
    assert text.count("Not reproduced") == 1
    assert ("<details><summary>If the change is intended: the test to keep (passes on head)</summary>\n\n"
            "```python\ndef test_x1_head():\n    assert 1 == 2\n```\n\n</details>") in text
    assert text.count("<details>") == 1
    assert "At `pkg/mod.py:7` on base." in text  # a removed line: the line number is base's
    assert "Regression test (passes on base, fails on head):\n\n```python\ndef test_x2():" in text


def test_markdown_is_deterministic() -> None:
    data = report_to_json(sample_report())
    text = render_markdown(data)
    assert text == render_markdown(copy.deepcopy(data)) == render_markdown(json.loads(json.dumps(data)))
    assert text == _render(sample_report())


def test_markdown_fence_survives_backticks_in_test() -> None:
    test = 'def test_doc():\n    assert f() == "```"\n'
    text = _render(Report(base=BASE, head=HEAD, differences=[sample_difference(1, test=test)]))
    assert "````python\n" + test + "````" in text


def test_an_older_report_without_optional_fields_renders() -> None:
    """Only the schema's required fields: the test is `test`, one sequence, reproduction unknown."""
    difference = {"id": "D1", "kind": "return", "target": "pkg.mod:f", "path": "pkg/mod.py", "line": 3,
                  "base": "1", "head": "2", "test": TEST}
    data = {"schema": "difforacle.report/1", "base": BASE, "head": HEAD, "differences": [difference],
            "coverage": {"changed_lines": 1, "changed_lines_covered": 1},
            "stats": {"sequences": 5, "seconds": 2.0}}
    text = render_markdown(data)
    assert "```python\n" + TEST.rstrip() + "\n```" in text
    assert "5 sequences in 2.00 s (2.5 sequences per second); 0 of them" in text
    assert "Seen in" not in text and "Not reproduced" not in text and "### Notes" not in text


# ---------------------------------------------------------------- pull-request options


def test_pull_request_options() -> None:
    report = sample_report()
    text = _render(report, marker="<!-- marker -->", inline={"d1"}, notes=["published late", "two\nlines"])
    assert text.startswith("<!-- marker -->\n\n## difforacle: 0123456..fedcba9\n\n")
    assert "| d1 | `pkg.mod:Cache.get` | return | `1` | `2` | `pkg/mod.py:12` (review comment) |" in text
    d1 = text.split("### d1 ")[1].split("\n### ")[0]
    assert "Also posted as a review comment on the changed line." in d1
    assert text.count("review comment") == 2
    notes = text.split("### Notes\n\n")[1]
    assert notes == "- published late\n- two\n  lines\n- Skipped non-Python file docs/index.md\n"


def test_the_limit_leaves_out_the_last_details_and_says_how_many() -> None:
    big = "def test_big():\n" + "    x = 1\n" * 200
    report = Report(base=BASE, head=HEAD, differences=[sample_difference(n, test=big) for n in range(1, 11)])
    full = _render(report)
    limit = len(full) - 1
    text = _render(report, limit=limit)
    assert len(text) <= limit
    assert "*1 more finding(s) left out to stay within GitHub's comment size; the check run and the JSON " \
           "report have them all.*" in text
    assert "### d9 " in text and "### d10 " not in text and "| d10 |" in text  # the table keeps them all
    assert text.index("more finding(s) left out") < text.index("### Stats")
    assert _render(report, limit=len(full)) == full


def test_the_minor_section_is_never_left_without_its_differences() -> None:
    big = "def test_big():\n" + "    x = 1\n" * 200
    report = Report(base=BASE, head=HEAD, differences=[sample_difference(1, test=big),
                                                       sample_difference(2, test=big, severity="minor")])
    full = _render(report)
    assert "### Minor differences" in full
    text = _render(report, limit=len(full) - 1)
    assert "### Minor differences" not in text and "### d1 " in text and "| d2 |" in text


def test_text_beyond_the_limit_even_without_details_is_cut() -> None:
    report = Report(base=BASE, head=HEAD, differences=[sample_difference(1)], notes=["n" * 5000])
    text = _render(report, limit=1000)
    assert len(text) <= 1000 and text.endswith("\n\n*(truncated)*\n")


# ---------------------------------------------------------------- the headline


@pytest.mark.parametrize(("differences", "regressions", "minor", "expected"), [
    (2, 1, 0, "**2 behavioural differences** in the changed code, 1 where head now fails."),
    (1, 1, 1, "**1 behavioural difference** in the changed code, 1 where head now fails. 1 minor difference "
              "in exception messages from outside the project."),
    (0, 0, 2, "No behavioural difference in the 4 changed lines, all of which ran. 2 minor differences in "
              "exception messages from outside the project."),
])
def test_the_headline_counts_regressions_and_minor_differences(differences: int, regressions: int, minor: int,
                                                                expected: str) -> None:
    assert verdict(differences, 4, 4, regressions=regressions, minor=minor) == expected


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("lines", "expected"),
    [([], ""), ([5], "5"), ([3, 1, 2], "1-3"), ([10, 11, 12, 13, 14, 20, 22, 23], "10-14, 20, 22-23")],
)
def test_compress_lines(lines: list[int], expected: str) -> None:
    assert compress_lines(lines) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("a", "`a`"), ("a`b", "``a`b``"), ("`a", "`` `a ``"), ("``", "``` `` ```"), (" a ", "`  a  `"),
    (" ", "` `"),
])
def test_inline_code_survives_backticks(text: str, expected: str) -> None:
    assert inline_code(text) == expected


def test_inline_value_is_one_line_and_says_empty() -> None:
    assert inline_value("") == "*(empty)*"
    assert inline_value("a\r\nb\nc") == "`a\\nb\\nc`"


def test_fenced_is_longer_than_any_backtick_run() -> None:
    assert fenced("x = 1\n\n", "python") == "```python\nx = 1\n```"
    assert fenced("s = '`````'", "") == "``````\ns = '`````'\n``````"


def test_a_tables_entries_that_differ_are_listed_by_change() -> None:
    entries = [TableEntry("added", "['RETURNING']", ("RETURNING",)), TableEntry("removed", "['LIMIT']"),
               *(TableEntry("added", f"['K{i}']") for i in range(12))]
    report = sample_report()
    report.differences = [sample_difference(1, target="pkg.rules:KEYWORDS", entries=entries[:2])]
    assert "Entries of the table that differ: added `['RETURNING']`; removed `['LIMIT']`." in _render(report)
    report.differences = [sample_difference(1, target="pkg.rules:KEYWORDS", entries=entries)]
    listed = ("Entries of the table that differ: added `['RETURNING']`, `['K0']`, `['K1']`, `['K2']`, "
              "`['K3']`, `['K4']`, `['K5']`, `['K6']`, `['K7']`; removed `['LIMIT']`; and 4 more.")
    assert listed in _render(report)
    report.differences = [sample_difference(1)]
    assert "Entries of the table" not in _render(report)
