"""Changed private code that no public code calls by name is called directly, and said to be."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.bot.markdown import render_markdown
from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.json_form import report_to_json, validate_report

FORMATS = '''\
def _pipe_row(cells: list[str]) -> str:
    return "|" + "|".join(cells) + "|"


_STYLES = {"Pipe-Table/v2": _pipe_row}


def render(rows: list[list[str]], style: str) -> str:
    """The rows in a style, looked up in a table by its name (no call names the row function)."""
    return "\\n".join(_STYLES[style](row) for row in rows)
'''
FORMATS_HEAD = FORMATS.replace('"|" + "|".join(cells) + "|"', '"| " + " | ".join(cells) + " |"')


@pytest.mark.slow
def test_a_changed_private_function_only_a_table_holds_is_called_directly(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/formats.py": FORMATS}, {"pkg/formats.py": FORMATS_HEAD})
    report = run_analyze(builder, budget=20.0, max_sequences=200)
    [direct] = [d for d in report.differences if d.target == "pkg.formats:_pipe_row"]
    assert direct.direct and direct.kind == "return"
    assert report.stats.techniques["direct"] == {"operations": 1}
    assert "_pipe_row(" in direct.test
    data = report_to_json(report)
    validate_report(data)
    [shown] = [d for d in data["differences"] if d["target"] == "pkg.formats:_pipe_row"]
    assert shown["direct"] is True
    assert "Reached directly: its test calls a changed private function or method" in render_markdown(data)
    assert all(not d.direct for d in report.differences if d.target != "pkg.formats:_pipe_row")
    without = run_analyze(builder, budget=20.0, max_sequences=200, components=Components.without(["direct"]))
    assert not any(d.target == "pkg.formats:_pipe_row" for d in without.differences)
    assert "direct" not in without.stats.techniques
