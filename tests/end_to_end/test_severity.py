"""Severity: a difference only in the wording of an exception the standard library or a dependency
raised is minor, reported in its own section, and never a regression."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.bot.markdown import render_markdown
from difforacle.bot.report_facts import is_regression
from difforacle.bot.summary import headline, summary_markdown
from difforacle.generator import report_to_json, validate_report
from difforacle.generator.findings.render import severity
from difforacle.generator.oracle.compare import Mismatch
from difforacle.generator.oracle.leaves import leaves_equal

PATTERNS = '''\
import re


def matches(pattern: str, text: str) -> bool:
    return bool(re.compile("(?:" + pattern + ")").match(text))
'''


def test_a_moved_position_in_a_standard_library_message_is_minor(builder: RepoBuilder) -> None:
    """The change wraps the pattern in one more group: matching is the same, only the position in
    `re.error`'s message moves."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/pat.py": PATTERNS},
            {"pkg/pat.py": PATTERNS.replace('"(?:" + pattern + ")"', '"(?:(?:" + pattern + "))"')})
    report = run_analyze(builder, max_sequences=500)
    assert report.differences and {d.severity for d in report.differences} == {"minor"}
    [difference] = report.differences
    assert difference.base.startswith("raises error: ") and difference.head.startswith("raises error: ")
    data = report_to_json(report)
    validate_report(data)
    markdown = render_markdown(data)
    assert markdown.splitlines()[2] == ("No behavioural difference in the 1 changed line, all of which ran. "
                                        "1 minor difference in exception messages from outside the project.")
    assert "### Minor differences" in markdown
    assert not is_regression(data["differences"][0])
    assert headline(data).startswith("difforacle: no behavioural difference in the 1 changed line, all of "
                                     "which ran. 1 minor difference")
    assert "| exception (minor) |" in summary_markdown(data)


@pytest.mark.parametrize(("base", "head", "expected"), [
    (["E", "error", "bad at position 4", "re"], ["E", "error", "bad at position 8", "re"], "minor"),
    (["E", "JSONDecodeError", "x: line 1", "json.decoder"], ["E", "JSONDecodeError", "y", "json.decoder"],
     "minor"),
    (["E", "ParseError", "bad at 4", "pkg.errors"], ["E", "ParseError", "bad at 8", "pkg.errors"], "major"),
    (["E", "ValueError", "bad at 4", "builtins"], ["E", "ValueError", "bad at 8", "builtins"], "major"),
    (["E", "error", "bad", "re"], ["E", "KeyError", "bad", "builtins"], "major"),  # another exception
    (["i", 1], ["E", "error", "bad", "re"], "major"),  # head now raises
    (["E", "error", "bad", "re"], ["E", "error", "bad", "re"], "major"),  # nothing to call minor
    (["E", "TypeError", "object of type 'NoneType' has no len()", "builtins", "outside"],
     ["E", "TypeError", "argument of type 'NoneType' is not iterable", "builtins", "outside"], "minor"),
    (["E", "ValueError", "bad at 4", "builtins", "raise"],
     ["E", "ValueError", "bad at 8", "builtins", "raise"], "major"),  # the project's own `raise`
    (["E", "ValueError", "bad at 4", "builtins", "outside"],
     ["E", "ValueError", "bad at 8", "builtins", "raise"], "major"),  # head raises it itself now
])
def test_what_is_minor(base: list, head: list, expected: str) -> None:
    """A builtin exception is minor only when the worker saw something other than the project's own
    `raise` raise it on both commits (a 5th field): the project's `raise ValueError(...)` shares the class."""
    assert severity(Mismatch("0!", base, head), frozenset({"pkg"})) == expected


NONE_SIZE = '''\
def size(text: str) -> int:
    return len(text)


def check(text: str) -> int:
    if not isinstance(text, str):
        raise TypeError("text must be a string")
    return 1
'''


def test_who_raised_a_builtin_exception_decides_its_severity(builder: RepoBuilder) -> None:
    """`len(None)` turned into `None in ...` changes CPython's wording (minor); the project's own
    `raise TypeError(...)` with a new message is its behaviour (major)."""
    after = NONE_SIZE.replace("return len(text)", "return sum(1 for _ in text)").replace(
        "text must be a string", "a string is needed")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/size.py": NONE_SIZE}, {"pkg/size.py": after})
    report = run_analyze(builder, max_sequences=400)
    by_target = {d.target: d for d in report.differences if d.kind == "exception" and "TypeError" in d.base}
    assert by_target["pkg.size:size"].severity == "minor"
    assert by_target["pkg.size:check"].severity == "major"


def test_who_raised_an_exception_is_never_compared() -> None:
    same = ["E", "KeyError", "'a'", "builtins"]
    assert leaves_equal([*same, "raise"], [*same, "outside"]) and leaves_equal(same, [*same, "raise"])
    assert not leaves_equal([*same, "raise"], ["E", "KeyError", "'b'", "builtins", "raise"])
