"""Tests for `difforacle.bot.workflow`: the workflow commands, outputs and files a step gets to read."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from difforacle.bot.workflow import Annotation, Workflow, command


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
