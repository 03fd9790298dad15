"""Tests for bot.workflow, bot.anchors and bot.summary: what a step and a pull request get to read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from difforacle.bot.anchors import DiffAnchors
from difforacle.bot.github_client import PullFile
from difforacle.bot.report_facts import is_regression
from difforacle.bot.summary import (
    COMMENT_LIMIT,
    SUMMARY_MARKER,
    headline,
    review_comment,
    suggestion,
    summary_markdown,
)
from difforacle.bot.workflow import Annotation, Workflow, command

# ---------------------------------------------------------------- workflow commands and files


def test_annotation_data_and_properties_are_escaped() -> None:
    line = command(Annotation("warning", "50% off\nsecond line\r", "a: title, with comma",
                              "src/a,b:c.py", 3, 4))
    assert line == ("::warning file=src/a%2Cb%3Ac.py,line=3,endLine=4,title=a%3A title%2C with comma"
                    "::50%25 off%0Asecond line%0D")
    assert "\n" not in line


def test_a_message_cannot_inject_another_command() -> None:
    line = command(Annotation("error", "x\n::set-output name=evil::1"))
    assert line.count("::") == 4 and "\n" not in line  # ::error:: and the escaped text's own two
    with pytest.raises(ValueError, match="level"):
        command(Annotation("fatal", "x"))


def test_outputs_use_a_delimiter_a_value_cannot_forge(tmp_path: Path) -> None:
    output, summary = tmp_path / "out", tmp_path / "summary.md"
    workflow = Workflow({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}, io.StringIO())
    workflow.set_outputs({"differences": "2", "report": "/tmp/r.json\nevil=1"})
    workflow.add_summary("## hello")
    workflow.add_summary("more")
    lines = output.read_text().splitlines()
    assert lines[0].startswith("differences<<ghadelimiter_") and lines[1] == "2"
    assert lines[2] == lines[0].split("<<")[1]
    delimiter = lines[3].split("<<")[1]
    assert lines[4:7] == ["/tmp/r.json", "evil=1", delimiter]
    assert summary.read_text() == "## hello\nmore\n"


def test_without_workflow_files_nothing_is_written(tmp_path: Path) -> None:
    out = io.StringIO()
    workflow = Workflow({}, out)
    workflow.set_outputs({"a": "1"})
    workflow.add_summary("x")
    workflow.annotate([Annotation("notice", "hi")])
    assert out.getvalue() == "::notice::hi\n"


# ---------------------------------------------------------------- anchors

PATCH = """\
@@ -10,3 +10,4 @@ def parse(text):
     value = text.strip()
-    return int(value)
+    number = int(value)
+    return number * 60
     # end
"""


def test_anchors_are_the_hunk_lines_of_each_side() -> None:
    anchors = DiffAnchors([PullFile("pkg/parse.py", "modified", PATCH), PullFile("logo.png", "added", None)])
    assert all(anchors.valid("pkg/parse.py", line, "RIGHT") for line in (10, 11, 12, 13))
    assert not anchors.valid("pkg/parse.py", 14, "RIGHT") and not anchors.valid("pkg/parse.py", 9, "RIGHT")
    assert anchors.valid("pkg/parse.py", 11, "LEFT") and not anchors.valid("pkg/parse.py", 13, "LEFT")
    assert not anchors.valid("logo.png", 1, "RIGHT") and not anchors.valid("other.py", 1, "RIGHT")
    assert not anchors.valid("pkg/parse.py", None, "RIGHT")


def test_a_changed_test_file_matching_the_source_is_found() -> None:
    test_patch = "@@ -0,0 +1,2 @@\n+def test_parse():\n+    assert True\n"
    anchors = DiffAnchors([PullFile("pkg/parse.py", "modified", PATCH),
                           PullFile("tests/test_parse.py", "added", test_patch)])
    assert anchors.test_file_for("pkg/parse.py") == ("tests/test_parse.py", 2, "    assert True")
    assert anchors.test_file_for("pkg/other.py") is None


# ---------------------------------------------------------------- summary and comments


def _difference(number: int, **fields: object) -> dict:
    base = {"id": f"D{number}", "kind": "return", "target": "pkg.parse:parse", "path": "pkg/parse.py",
            "line": 12, "side": "head", "base": "3600", "head": "3660",
            "test": "def test_parse():\n    assert parse('1h') == 3600\n"}
    base["pin_base"] = base["test"]
    return {**base, **fields}


def _report(differences: list[dict]) -> dict:
    return {"schema": "difforacle.report/1", "base": "a" * 40, "head": "b" * 40, "differences": differences,
            "coverage": {"changed_lines": 4, "changed_lines_covered": 3, "uncovered": {"pkg/parse.py": [13]}},
            "stats": {"sequences": 10, "seconds": 1.0}, "notes": ["a note"]}


def test_summary_names_each_difference_and_what_was_not_reached() -> None:
    failing = _difference(2, kind="exception", head="raises ValueError: bad")
    report = _report([_difference(1), failing])
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
    text = summary_markdown(_report([_difference(n, test=big, pin_base=big) for n in range(1, 40)]))
    assert len(text) < COMMENT_LIMIT
    assert "more finding(s) left out" in text and "| D39 |" in text


def test_regressions_are_differences_where_head_newly_fails() -> None:
    assert is_regression(_difference(1, head="raises KeyError: 'x'"))
    assert is_regression(_difference(1, kind="api", head="API change (missing): parse"))
    assert not is_regression(_difference(1))
    assert not is_regression(_difference(1, base="raises KeyError", head="raises ValueError"))


def test_review_comment_and_suggestion_carry_the_test() -> None:
    comment = review_comment(_difference(1))
    assert "base: `3600`" in comment and "```python\ndef test_parse():" in comment
    block = suggestion(_difference(1), "    assert True")
    assert "```suggestion\n    assert True\n\n\ndef test_parse():" in block
