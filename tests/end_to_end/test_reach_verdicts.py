"""Verdicts by reach: per changed unit, what ran and why the rest did not; headlines that never
call unrun code "no difference"."""

from __future__ import annotations

from collections import Counter

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.bot.markdown import render_markdown, verdict
from difforacle.generator import report_to_json, validate_report
from difforacle.generator.changes.model import ChangeSet, FileChange, Unit
from difforacle.generator.generation.generator import Attempts
from difforacle.generator.generation.reach import Reasons
from difforacle.generator.generation.techniques import Components
from difforacle.generator.planning.impact import Impact
from difforacle.generator.runtime.catalog import Catalog, Operation

LIBRARY = '''\
import hashlib
import sys

if sys.version_info < (3, 0):
    LEGACY = 1


def _helper(x):
    return x + 1


def public(x: int) -> int:
    return x * 2


def rare(x: int) -> int:
    if hashlib.sha256(str(x).encode()).hexdigest().startswith("0000000"):
        return 1
    return 0


class Connection:
    def __init__(self) -> None:
        raise RuntimeError("needs a server")


class Handle:
    def __init__(self, connection: Connection) -> None:
        if not isinstance(connection, Connection):
            raise TypeError("a Connection is needed")
        self.connection = connection

    def send(self, data: bytes) -> int:
        return len(data)
'''

CHANGED = (LIBRARY.replace("LEGACY = 1", "LEGACY = 2")
           .replace("return x + 1", "return x + 2")
           .replace("return x * 2", "return x * 3")
           .replace("        return 1\n    return 0", "        return 2\n    return 0")
           .replace("return len(data)", "return len(data) + 1"))


def _reasons(report) -> dict[str, tuple[int, int, str]]:
    return {unit.unit: (unit.lines, unit.run, unit.reason) for unit in report.reach}


@pytest.mark.slow
def test_each_changed_unit_says_whether_it_ran_and_why_not(builder: RepoBuilder) -> None:
    make_pr(builder, {"lib.py": LIBRARY}, {"lib.py": CHANGED})
    # `_helper` is reached by no public operation: the technique `direct` would call it directly
    report = run_analyze(builder, max_sequences=400, components=Components.without(["direct"]))
    reach = _reasons(report)
    assert reach["lib:public"] == (1, 1, "")
    assert reach["lib:<module>"][:2] == (1, 0)
    assert reach["lib:<module>"][2].startswith("module-level code that did not run at import")
    assert reach["lib:_helper"][:2] == (1, 0)
    assert reach["lib:_helper"][2].startswith("no public operation reaches it")
    lines, run, reason = reach["lib:rare"]
    assert (lines, run) == (1, 0) and reason.startswith("called ")
    assert reason.endswith("never along its changed lines: a branch those calls did not take")
    assert reach["lib:Handle.send"] == (1, 0, "building its receiver or arguments always raised before the "
                                              "call")
    data = report_to_json(report)
    validate_report(data)
    assert {unit["unit"] for unit in data["reach"]} == set(reach)
    markdown = render_markdown(data)
    assert "### Changed code that was not checked" in markdown
    assert "- `lib:_helper` (`lib.py`): 0 of 1 changed line checked; no public operation reaches it" \
        in markdown
    section = markdown.split("### Changed code that was not checked")[1].split("\n###")[0]
    assert "`lib:Handle.send`" in section and "`lib:public`" not in section


def test_a_clean_run_over_unrun_code_says_nothing_could_be_checked(builder: RepoBuilder) -> None:
    before = {"lib.py": "def _helper(x):\n    return x + 1\n\n\ndef public(x: int) -> int:\n    return x\n"}
    make_pr(builder, before, {"lib.py": before["lib.py"].replace("x + 1", "x + 2")})
    report = run_analyze(builder, max_sequences=100, components=Components.without(["direct"]))
    assert not report.differences
    headline = render_markdown(report_to_json(report)).splitlines()[2]
    assert headline == "Nothing could be checked: none of the 1 changed line ran."


@pytest.mark.slow
def test_a_table_that_only_ran_at_import_was_not_checked(builder: RepoBuilder) -> None:
    """Without reading module values, a module of data alone offers no operation: no sequence
    runs, and the import that ran its changed line compared nothing, so the run must not read as
    a clean pass."""
    use = "from pkg.table import KEYWORDS\n\n\ndef lookup(key: str) -> int:\n    return KEYWORDS[key]\n"
    make_pr(builder, {"pkg/__init__.py": "", "pkg/table.py": "KEYWORDS = {'a': 1}\n", "pkg/use.py": use},
            {"pkg/table.py": "KEYWORDS = {'a': 2}\n"})
    read = run_analyze(builder, max_sequences=100)  # the table is read and compared: checked, and differs
    assert [(d.target, d.base, d.head) for d in read.differences] == [("pkg.table:KEYWORDS", "1", "2")]
    assert [(unit.unit, unit.lines, unit.run) for unit in read.reach] == [("pkg.table:<module>", 1, 1)]
    report = run_analyze(builder, max_sequences=100, components=Components.without(["values"]))
    assert report.coverage.changed_lines_covered == 1  # it did run, at import
    [unit] = report.reach
    assert (unit.unit, unit.lines, unit.run) == ("pkg.table:<module>", 1, 0)
    assert unit.reason.startswith("it ran only while its module was imported")
    markdown = render_markdown(report_to_json(report))
    headline = markdown.splitlines()[2]  # never "did not run" beside coverage saying that it ran
    assert headline == ("Nothing could be checked: the 1 changed line ran only at import, and no call "
                        "compared what it does.")
    assert "covered 1 of 1 changed lines" in markdown and "none of the" not in markdown
    assert "0 of 1 changed line checked; it ran only while its module was imported" in markdown


@pytest.mark.parametrize(("differences", "changed", "run", "measured", "expected"), [
    (0, 4, 4, True, "No behavioural difference in the 4 changed lines, all of which ran."),
    (0, 4, 3, True, "No behavioural difference in the 3 changed lines that ran; nothing could be checked "
                    "for 1 changed line."),
    (0, 2, 0, True, "Nothing could be checked: none of the 2 changed lines ran."),
    (0, 0, 0, True, "No behavioural difference: no changed line of importable code to run."),
    (0, 3, 0, False, "No behavioural difference found, but changed-line coverage was not measured: how much "
                     "of the change was checked is unknown."),
    (1, 3, 3, True, "**1 behavioural difference** in the changed code."),
    (2, 5, 3, True, "**2 behavioural differences** in the changed code. Nothing could be checked for "
                    "2 changed lines of 5."),
])
def test_the_headline_speaks_for_the_lines_that_ran(differences: int, changed: int, run: int, measured: bool,
                                                     expected: str) -> None:
    assert verdict(differences, changed, run, measured=measured) == expected
    assert verdict(differences, changed, run, measured=measured, emphasis=False) == expected.replace("**", "")


@pytest.mark.parametrize(("changed", "ran", "expected"), [
    (1, 1, "Nothing could be checked: the 1 changed line ran only at import, and no call compared what it "
           "does."),
    (3, 3, "Nothing could be checked: the 3 changed lines ran only at import, and no call compared what they "
           "do."),
    (3, 1, "Nothing could be checked: 1 of the 3 changed lines ran, only at import, and no call compared "
           "what they do; the others did not run."),
    (3, 0, "Nothing could be checked: none of the 3 changed lines ran."),
])
def test_lines_that_ran_only_at_import_are_unchecked_not_unrun(changed: int, ran: int, expected: str) -> None:
    assert verdict(0, changed, 0, ran=ran) == expected
    assert verdict(0, changed, changed, ran=ran) == (f"No behavioural difference in the {changed} changed "
                                                     f"line{'s' if changed > 1 else ''}, all of which ran.")



SEND = "class Handle:\n    def __init__(self, stream):\n        self.stream = stream\n\n" \
       "    def send(self, data):\n        return len(data)\n"


@pytest.mark.parametrize(("attempts", "expected"), [
    (Attempts(), "never called: the time went to other operations"),
    (Attempts(chosen=5, no_receiver=4, no_argument=Counter({"data": 1})),
     "no Handle object to call it on could be built"),
    (Attempts(chosen=5, no_receiver=1, no_argument=Counter({"data": 4})),
     "no value could be built for its argument 'data'"),
    (Attempts(chosen=5, unprepared=5), "building its receiver or arguments always raised before the call"),
    (Attempts(chosen=5, lost=3), "its 3 call(s) all crashed or timed out"),
    (Attempts(chosen=5, raised=4, lost=1), "its 5 call(s) all raised, never along its changed lines"),
    (Attempts(chosen=5, ran=2, raised=1), "called 3 time(s) (1 raised), but never along its changed lines: "
                                          "a branch those calls did not take"),
])
def test_why_a_method_did_not_run(attempts: Attempts, expected: str) -> None:
    """Read from what became of the calls of the operations that reach the unit."""
    change = FileChange("lib.py", "lib.py", "lib", frozenset({6}), frozenset({6}))
    unit = Unit("lib", "Handle.send", "method", "modified", "lib.py", 5, 6)
    impact = Impact.of(ChangeSet("c" * 40, (change,), (unit,)), {"lib": SEND})
    send = Operation("lib:Handle.send", "method", "lib.Handle", (), (), None, None)
    reasons = Reasons(impact, Catalog([send], {}, {}), {send.id: attempts})
    assert reasons(("lib", "Handle.send"), partly=False) == expected
    elsewhere = Reasons(impact, Catalog([send], {}, {"lib": "ImportError: no"}), {send.id: attempts})
    assert elsewhere(("lib", "Handle.send"), partly=False) == "its module does not import on base"


def test_a_new_module_is_said_to_be_new_not_broken() -> None:
    change = FileChange(None, "lib.py", "lib", frozenset(), frozenset({6}))
    unit = Unit("lib", "Handle.send", "method", "added", "lib.py", 5, 6)
    impact = Impact.of(ChangeSet("c" * 40, (change,), (unit,)), {})
    reasons = Reasons(impact, Catalog([], {}, {"lib": "ModuleNotFoundError: No module named 'lib'"}), {})
    expected = "its module is new: base has nothing to compare it with"
    assert reasons(("lib", "Handle.send"), partly=False) == expected
