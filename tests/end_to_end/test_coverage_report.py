"""The report's coverage section on a known diff: exactly the changed lines and branches, both sides."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.bot.markdown import render_markdown
from difforacle.generator.report.json_form import report_to_json, validate_report

BASE = '''\
_SENTINEL = object()


def grade(score):
    if score >= 90:
        return "A"
    return "B"
'''

# line 5 modified; lines 7-8 added, and line 8 cannot run (nothing outside the module
# can pass the private sentinel)
HEAD = '''\
_SENTINEL = object()


def grade(score):
    if score >= 80:
        return "A"
    if score is _SENTINEL:
        return "never"
    return "B"
'''


@pytest.mark.slow
def test_coverage_section_lists_exactly_the_changed_lines_and_branches(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/grades.py": BASE}, {"pkg/grades.py": HEAD})

    report = run_analyze(builder, max_sequences=300)

    coverage = report.coverage
    assert coverage.measured_by.startswith("coverage.py ")
    # top level: the file's primary side, head (5, 7, 8 changed; 8 never runs)
    assert (coverage.changed_lines, coverage.changed_lines_covered) == (3, 2)
    assert coverage.uncovered == {"pkg/grades.py": [8]}
    assert (coverage.changed_branches, coverage.changed_branches_covered) == (4, 3)
    head, base = coverage.sides["head"], coverage.sides["base"]
    assert head.uncovered_branches == {"pkg/grades.py": [[7, 8]]}
    # base: the modified line 5 and both of its branches
    assert (base.changed_lines, base.changed_lines_covered, base.uncovered) == (1, 1, {})
    assert (base.changed_branches, base.changed_branches_covered) == (2, 2)
    data = report_to_json(report)
    validate_report(data)
    assert data["coverage"]["sides"]["head"]["uncovered"] == {"pkg/grades.py": [8]}
    markdown = render_markdown(data)
    assert "covered 2 of 3 changed lines (66%) and 3 of 4 branches" in markdown
    assert "- `pkg/grades.py`: 8" in markdown
