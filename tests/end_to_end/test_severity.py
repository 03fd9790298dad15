"""Severity: a difference only in the wording of an exception the standard library or a dependency
raised is minor, reported in its own section, and never a regression."""

from __future__ import annotations

import json

import pytest
from support.analysis import differences_summary, run_analyze
from support.command_line import run_cli
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


@pytest.mark.slow
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
    (["E", "error", "bad at position 4", "re", "outside"],
     ["E", "error", "bad at position 8", "re", "outside"], "minor"),  # the standard library's wording
    (["E", "JSONDecodeError", "x: line 1", "json.decoder", "outside"],
     ["E", "JSONDecodeError", "y", "json.decoder", "outside"], "minor"),  # json.loads raised it
    (["E", "JSONDecodeError", "bad: line 1 column 4 (char 3)", "json.decoder", "raise"],
     ["E", "JSONDecodeError", "bad: line 1 column 3 (char 2)", "json.decoder", "raise"],
     "major"),  # the project raises the standard library's class itself: its message is the project's
    (["E", "error", "bad at position 4", "re"], ["E", "error", "bad at position 8", "re"],
     "major"),  # nobody said who raised it: never minor without that evidence
    (["E", "ParseError", "bad at 4", "pkg.errors"], ["E", "ParseError", "bad at 8", "pkg.errors"], "major"),
    (["E", "ValueError", "bad at 4", "builtins"], ["E", "ValueError", "bad at 8", "builtins"], "major"),
    (["E", "error", "bad", "re", "outside"], ["E", "KeyError", "bad", "builtins", "outside"],
     "major"),  # another exception
    (["i", 1], ["E", "error", "bad", "re", "outside"], "major"),  # head now raises
    (["E", "error", "bad", "re", "outside"], ["E", "error", "bad", "re", "outside"], "major"),  # the same
    (["E", "TypeError", "object of type 'NoneType' has no len()", "builtins", "outside"],
     ["E", "TypeError", "argument of type 'NoneType' is not iterable", "builtins", "outside"], "minor"),
    (["E", "ValueError", "bad at 4", "builtins", "raise"],
     ["E", "ValueError", "bad at 8", "builtins", "raise"], "major"),  # the project's own `raise`
    (["E", "ValueError", "bad at 4", "builtins", "outside"],
     ["E", "ValueError", "bad at 8", "builtins", "raise"], "major"),  # head raises it itself now
    (["E", "SystemExit", "1", "builtins", "raise"], ["E", "SystemExit", "0", "builtins", "raise"],
     "major"),  # an exit status is the project's value, never a message
])
def test_what_is_minor(base: list, head: list, expected: str) -> None:
    """An exception's new message is minor only when the worker saw the interpreter, the standard
    library or a dependency raise it on both commits (a 5th field, "outside"), whatever its class:
    the project's own `raise` of a standard class (ValueError, json.JSONDecodeError) is its
    behaviour."""
    assert severity(Mismatch("0!", base, head)) == expected


# Undeclared parameters: None is an input a caller may pass (for `text: str`, a difference only None
# shows is set apart by triage, whoever raised it; see test_triage.py).
NONE_SIZE = '''\
def size(text):
    return len(text)


def check(text):
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


GATE = '''\
import sys


def gate(results: list) -> None:
    """Exit with status 1 when a check failed: a CI gate."""
    failed = not all(results)
    sys.exit(1 if failed else 0)
'''
CONFIG = '''\
def parse(text: str) -> dict:
    """`key = value` lines; a line without `=` is an error naming its line, counted from 1."""
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if "=" not in line: raise ValueError(f"line {number}: no '=' in {line!r}")
        key, _, value = line.partition("=")
        found[key.strip()] = value.strip()
    return found
'''
PAIRS = '''\
import json


def parse_pair(text: str) -> tuple:
    """`key:value`; without the colon, the JSON parser's own error class, at the end of the text."""
    if ":" not in text:
        raise json.JSONDecodeError("expected ':'", text, len(text))
    key, _, value = text.partition(":")
    return key, value
'''


@pytest.mark.slow
@pytest.mark.parametrize(("module", "before", "after", "target"), [
    ("gate", GATE, GATE.replace("1 if failed else 0", "0 if failed else 1"), "pkg.gate:gate"),
    ("config", CONFIG, CONFIG.replace(", start=1)", ")"), "pkg.config:parse"),
    ("pairs", PAIRS, PAIRS.replace("len(text))", "len(text) - 1)"), "pkg.pairs:parse_pair"),
], ids=["inverted-exit-status", "one-line-raise", "project-raised-json-error"])
def test_what_the_projects_code_raises_is_never_minor(builder: RepoBuilder, module: str, before: str,
                                                      after: str, target: str) -> None:
    """Each a regression: every failing gate now passes; a parser names the wrong line; a parser's
    own JSONDecodeError points one character early. The exception's class is the same on both
    sides (SystemExit, ValueError, a standard library's class), its message or code is the project's."""
    make_pr(builder, {"pkg/__init__.py": "", f"pkg/{module}.py": before}, {f"pkg/{module}.py": after})
    report = run_analyze(builder, max_sequences=600)
    found = [d for d in report.differences if d.target == target]
    assert found and {d.severity for d in found} == {"major"}, differences_summary(report)


@pytest.mark.slow
def test_the_exit_status_follows_the_severity(builder: RepoBuilder) -> None:
    """Only an interpreter's wording changed: listed as minor, exit 0. The project's own message
    changed too: exit 1."""
    wording = NONE_SIZE.replace("return len(text)", "return sum(1 for _ in text)")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/size.py": NONE_SIZE}, {"pkg/size.py": wording})
    common = ("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", "--budget", "10",
              "--max-sequences", "400", "--quiet")
    quiet = run_cli(*common, "--json", str(builder.root.parent / "minor.json"))
    assert quiet.returncode == 0, (quiet.stdout, quiet.stderr)
    data = json.loads((builder.root.parent / "minor.json").read_text())
    assert data["differences"] and {d["severity"] for d in data["differences"]} == {"minor"}
    builder.switch("feature")
    builder.commit({"pkg/size.py": wording.replace("text must be a string", "a string is needed")},
                   "the project's own message too")
    builder.switch("main")
    loud = run_cli(*common)
    assert loud.returncode == 1, (loud.stdout, loud.stderr)
