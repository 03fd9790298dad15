"""Confirmation (`difforacle.generator.findings.confirm`): candidates that do not confirm are
counted with why; a finding's line is a changed line."""

from __future__ import annotations

from pathlib import Path

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange, Unit
from difforacle.generator.changes.scope import EVERYTHING
from difforacle.generator.findings.cases import Case, Shown
from difforacle.generator.findings.confirm import Locator, confirm
from difforacle.generator.generation.replay import Candidates, KeptSequence
from difforacle.generator.oracle.compare import Mismatch
from difforacle.generator.oracle.difference_key import DifferenceKey
from difforacle.generator.oracle.leaves import EXACT_ENOUGH
from difforacle.generator.planning.deadline import Deadline
from difforacle.generator.runtime.catalog import Operation, Parameter
from difforacle.generator.worker.protocol import SequenceResult, Status, value_key

KEY = value_key(0, 0)
CALL = [{"op": "pkg.mod:f", "args": [{"lit": ["i", 1]}], "kwargs": {}}]


class _Check:
    """A DifferenceCheck stand-in: what the fresh processes show, case by case in turn."""

    def __init__(self, shown: list[Shown | None]) -> None:
        self.shown = shown

    def observe(self, case: object, path: str, lines: bool = False) -> Shown | None:
        return self.shown.pop(0)


def _result(value: int) -> SequenceResult:
    return SequenceResult(Status.OK, {KEY: ["i", value]}, executed=1)


def _candidates(groups: int) -> Candidates:
    candidates = Candidates()
    for number in range(groups):
        key = DifferenceKey("return", f"pkg.mod:f{number}", "result")
        candidates.groups[key] = [(KeptSequence(CALL, _result(1)), Mismatch(KEY, ["i", 1], ["i", 2]))]
    return candidates


def test_candidates_that_do_not_confirm_are_said_with_why(tmp_path: Path) -> None:
    checkout = Checkout("main", "a" * 40, tmp_path, (tmp_path,))
    changes = ChangeSet("a" * 40, (), ())
    other_values = Shown(Mismatch(KEY, ["i", 1], ["i", 3]), "pkg.mod:f", _result(1), _result(3))
    check = _Check([None, other_values])  # the first group: nothing alone; the second: other values
    locate = Locator(changes, checkout, checkout, {})
    confirmation = confirm(_candidates(2), check, Deadline(60.0, 100), locate, EXACT_ENOUGH, EVERYTHING, {})
    assert confirmation.findings == []
    assert confirmation.dropped == {"alone": 1, "values": 1}
    assert confirmation.notes == [
        "2 group(s) of candidate differences seen while exploring did not confirm and are not reported: "
        "1 showed no difference when run again in fresh processes, alone or after the sequences that ran "
        "before them (timing, or state left by sequences that raised); 1 showed other values when run again "
        "(nondeterministic)."]


class _Recorder(_Check):
    """Shows the difference for whatever case it is given, and keeps the cases."""

    def __init__(self, shown: Shown) -> None:
        super().__init__([])
        self.cases: list[Case] = []
        self.shown_always = shown

    def observe(self, case: object, path: str, lines: bool = False) -> Shown | None:
        assert isinstance(case, Case)
        self.cases.append(case)
        return self.shown_always


def test_a_representative_within_the_declared_types_is_tried_first(tmp_path: Path) -> None:
    # `f(text: str)`: the group's shortest member passes None, the other a text; the text is confirmed
    checkout = Checkout("main", "a" * 40, tmp_path, (tmp_path,))
    text = Parameter("text", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",))
    operations = {"pkg.mod:f": Operation("pkg.mod:f", "function", None, (text,), (), None, None)}
    none = [{"op": "pkg.mod:f", "args": [{"lit": ["none"]}], "kwargs": {}}]
    word = [{"op": "pkg.mod:f", "args": [{"lit": ["str", "ab"]}], "kwargs": {}}]
    mismatch = Mismatch(KEY, ["i", 1], ["i", 2])
    candidates = Candidates()
    candidates.groups[DifferenceKey("return", "pkg.mod:f", "result")] = [
        (KeptSequence(none, _result(1)), mismatch), (KeptSequence(word, _result(1)), mismatch)]
    check = _Recorder(Shown(mismatch, "pkg.mod:f", _result(1), _result(2)))
    locate = Locator(ChangeSet("a" * 40, (), ()), checkout, checkout, operations)
    deadline = Deadline(60.0, 100)
    confirmation = confirm(candidates, check, deadline, locate, EXACT_ENOUGH, EVERYTHING, operations)
    [finding] = confirmation.findings
    assert finding.case.statements == tuple(word) and check.cases == [finding.case]
    assert finding.count == 2
    # without declared types, the shortest member (by its text) comes first, as before
    check.cases.clear()
    confirm(candidates, check, Deadline(60.0, 100), locate, EXACT_ENOUGH, EVERYTHING, {})
    assert check.cases[0].statements == tuple(none)


def test_without_a_traced_line_a_difference_points_at_its_units_first_changed_line(tmp_path: Path) -> None:
    checkout = Checkout("main", "a" * 40, tmp_path, (tmp_path,))
    change = FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset({7}), frozenset({7, 8}),
                        hunks=((7, 1, 7, 2),))
    unit = Unit("pkg.mod", "f", "function", "modified", "pkg/mod.py", 5, 9)
    locate = Locator(ChangeSet("a" * 40, (change,), (unit,)), checkout, checkout, {})
    shown = Shown(Mismatch(KEY, ["i", 1], ["i", 2]), "pkg.mod:f", _result(1), _result(2))
    location = locate(0, shown)
    assert (location.path, location.line, location.side, location.hunk) == ("pkg/mod.py", 7, "head", 0)


def test_a_case_after_its_history_is_one_sequence_with_references_moved() -> None:
    first = [{"op": "m:A", "args": [], "kwargs": {}}, {"op": "m:A.put", "args": [{"ref": 0}], "kwargs": {}}]
    second = [{"op": "m:f", "args": [{"lit": ["i", 1]}], "kwargs": {}}]
    case = Case(({"op": "m:B", "args": [], "kwargs": {}},
                 {"op": "m:B.get", "args": [{"ref": 0}], "kwargs": {"k": {"ref": 0}}}), var=0)
    joined = case.after([first, second])
    assert [s["op"] for s in joined.statements] == ["m:A", "m:A.put", "m:f", "m:B", "m:B.get"]
    assert joined.statements[1]["args"] == [{"ref": 0}]
    assert joined.statements[4]["args"] == [{"ref": 3}]
    assert joined.statements[4]["kwargs"] == {"k": {"ref": 3}}
    assert (joined.target, joined.var) == (4, 3)


def _raises(message: str) -> list:
    return ["E", "TypeError", message, "builtins"]


class _Echo(_Check):
    """Shows again, for each case, the mismatch its group's member showed (by the literal it passes)."""

    def __init__(self, by_literal: dict[str, Mismatch]) -> None:
        super().__init__([])
        self.by_literal = by_literal

    def observe(self, case: object, path: str, lines: bool = False) -> Shown | None:
        assert isinstance(case, Case)
        mismatch = self.by_literal[case.statements[0]["args"][0]["lit"][1]]
        result = SequenceResult(Status.OK, {}, executed=1)
        return Shown(mismatch, "pkg.mod:get", result, result)


def test_one_functions_exceptions_from_two_places_are_confirmed_apart(tmp_path: Path) -> None:
    """An intended change and a regression in one function, both turning a TypeError into a result
    on two kinds of input, are two findings; one message on many inputs stays one."""
    checkout = Checkout("main", "a" * 40, tmp_path, (tmp_path,))
    returns = ["i", 1]
    decimal = "Cannot parse an argument of type <class 'decimal.Decimal'>."
    shown = {"d1": Mismatch(KEY, _raises(decimal), returns), "d2": Mismatch(KEY, _raises(decimal), returns),
             "t1": Mismatch(KEY, _raises("tzinfo must be a tzinfo, not type 'int'"), returns),
             "t2": Mismatch(KEY, _raises("tzinfo must be a tzinfo, not type 'float'"), returns)}
    candidates = Candidates()
    candidates.groups[DifferenceKey("exception", "pkg.mod:get", "!")] = [
        (KeptSequence([{"op": "pkg.mod:get", "args": [{"lit": ["str", name]}], "kwargs": {}}], _result(1)),
         mismatch) for name, mismatch in shown.items()]
    locate = Locator(ChangeSet("a" * 40, (), ()), checkout, checkout, {})
    deadline = Deadline(60.0, 100)
    confirmation = confirm(candidates, _Echo(shown), deadline, locate, EXACT_ENOUGH, EVERYTHING, {})
    found = sorted((finding.shown.mismatch.base[2], finding.count) for finding in confirmation.findings)
    assert found == [(decimal, 2),
                     ("tzinfo must be a tzinfo, not type 'int'", 2)]
