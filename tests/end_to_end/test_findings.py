"""Findings as a reviewer sees them: minimized, grouped, in two flavours, reproduced by pytest.

Each test builds a small pull request in a temporary git repository and runs the whole
engine on it (`run_analyze`, a fixed number of sequences so runs are reproducible).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.analysis import run_analyze, run_pytest_file
from support.repos import RepoBuilder, export_commit, make_pr

from difforacle.generator.changes.model import FileChange
from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.json_form import report_to_json, validate_report

# A regression reached only through a noisy, stateful API: the generator's sequences are
# long, the minimized test must keep only what the difference needs.
LEDGER = '''\
class Ledger:
    def __init__(self, owner: str = "x"):
        self.owner = owner
        self.entries = []
        self.notes = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def record(self, amount: int) -> None:
        self.entries.append(amount)

    def balance(self) -> int:
        return sum(self.entries)

    def audit(self) -> str:
        if len(self.entries) >= 3:
            return "busy"
        return "quiet"
'''


def _statements(source: str) -> list[str]:
    """The statements inside the test function, as source lines."""
    function = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
    return [ast.unparse(statement) for statement in function.body]


@pytest.mark.slow
def test_minimized_test_keeps_only_the_calls_the_difference_needs(builder: RepoBuilder) -> None:
    head = LEDGER.replace('if len(self.entries) >= 3:', 'if len(self.entries) >= 2:')
    make_pr(builder, {"pkg/__init__.py": "", "pkg/ledger.py": LEDGER}, {"pkg/ledger.py": head})

    # a configured ledger (`ledger.entries = [0, 0]`) has the state without a call of `record`: what
    # is measured here is how far the recorded calls shrink
    report = run_analyze(builder, max_sequences=400, budget=20, minimize_share=0.5,
                         components=Components.without(["configured"]))

    # found where the second entry is recorded: the audit observer of the ledger changes
    [difference] = report.differences
    assert (difference.kind, difference.target) == ("observer", "pkg.ledger:Ledger.record")
    assert (difference.base, difference.head) == ("'quiet'", "'busy'")
    # the state needs a ledger and exactly two recorded entries (with 3, both say "busy")
    assert [s.op for s in difference.statements] == [
        "pkg.ledger:Ledger", "pkg.ledger:Ledger.record", "pkg.ledger:Ledger.record"]
    # values shrunk: no constructor argument needed, amounts down to the simplest value (0, or
    # None where generation passed one: `record` only appends it)
    simplest = {"0": {"lit": ["int", 0]}, "None": {"lit": ["none"]}}
    assert difference.statements[0].args == ()
    amounts = [next(k for k, v in simplest.items() if s.args[1:] == (v,)) for s in difference.statements[1:]]
    assert difference.minimized and difference.reproduced
    assert _statements(difference.pin_base) == [
        "ledger = Ledger()", f"ledger.record({amounts[0]})", f"ledger.record({amounts[1]})",
        "assert ledger.audit() == 'quiet', \"head: 'busy'\""]


@pytest.mark.slow
def test_both_flavours_pass_and_fail_where_they_should(builder: RepoBuilder, tmp_path: Path) -> None:
    head = LEDGER.replace("return sum(self.entries)", "return sum(self.entries) + 1")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/ledger.py": LEDGER}, {"pkg/ledger.py": head})

    report = run_analyze(builder)

    [difference] = report.differences
    assert difference.pin_head is not None and difference.test == difference.pin_base
    base_dir = export_commit(builder.root, "main", tmp_path / "base")
    head_dir = export_commit(builder.root, "feature", tmp_path / "head")
    expected = {("base", base_dir): (0, 1), ("head", head_dir): (1, 0)}  # pytest exit status per flavour
    for (side, checkout), statuses in expected.items():
        flavours = (("pin_base", difference.pin_base), ("pin_head", difference.pin_head))
        for (flavour, source), status in zip(flavours, statuses, strict=True):
            result = run_pytest_file(source, tmp_path / f"{side}-{flavour}", checkout)
            assert result.returncode == status, (side, flavour, result.stdout)


# `helper` changes; two public functions reach it. The same (target, kind, observation,
# hunk) through either entry point is one finding, with the count of both.
SHARED = '''\
def _scale(value: int) -> int:
    return value * 10


def double(value: int) -> int:
    return _scale(value) * 2


def triple(value: int) -> int:
    return _scale(value) * 3
'''


def test_differences_with_the_same_target_kind_and_hunk_are_one_finding(builder: RepoBuilder) -> None:
    head = SHARED.replace("return value * 10", "return value * 10 + 1")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/shared.py": SHARED}, {"pkg/shared.py": head})

    report = run_analyze(builder, max_sequences=300)

    # two public entry points, two findings (their targets differ), each one test
    targets = sorted(d.target for d in report.differences)
    assert targets == ["pkg.shared:double", "pkg.shared:triple"], targets
    assert all(d.count >= 1 and len(d.statements) == 1 for d in report.differences)
    assert all(d.path == "pkg/shared.py" and d.line == 2 for d in report.differences)


@pytest.mark.slow
def test_several_observers_of_one_object_group_by_observation(builder: RepoBuilder) -> None:
    head = LEDGER.replace("self.entries.append(amount)", "self.entries.append(amount + 1)")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/ledger.py": LEDGER}, {"pkg/ledger.py": head})

    report = run_analyze(builder, max_sequences=300)

    keys = [(d.target, d.kind, d.key.split("/", 1)[1].lstrip("0123456789")) for d in report.differences]
    assert len(keys) == len(set(keys)), keys  # never two findings for the same group
    assert any(t == "pkg.ledger:Ledger.record" for t, _, _ in keys)
    assert sum(d.count for d in report.differences) >= len(report.differences)


# Code that behaves differently when pytest is loaded: the workers confirm a difference
# that the suggested test cannot show. The reproduction check must catch it.
PYTEST_AWARE = '''\
import sys


def mode() -> int:
    return 1
'''
PYTEST_AWARE_HEAD = '''\
import sys


def mode() -> int:
    return 1 if "pytest" in sys.modules else 2
'''


@pytest.mark.slow
def test_a_difference_pytest_cannot_reproduce_is_hidden_by_default(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/modes.py": PYTEST_AWARE},
            {"pkg/modes.py": PYTEST_AWARE_HEAD})

    hidden = run_analyze(builder, max_sequences=50)
    shown = run_analyze(builder, max_sequences=50, show_unreproduced=True)

    assert hidden.differences == []
    assert any("did not reproduce" in note for note in hidden.notes), hidden.notes
    [difference] = shown.differences
    assert difference.target == "pkg.modes:mode" and difference.reproduced is False
    data = report_to_json(shown)
    validate_report(data)
    assert data["differences"][0]["reproduced"] is False


@pytest.mark.slow
def test_minimization_time_bound_is_reported(builder: RepoBuilder) -> None:
    head = LEDGER.replace('if len(self.entries) >= 3:', 'if len(self.entries) >= 2:')
    make_pr(builder, {"pkg/__init__.py": "", "pkg/ledger.py": LEDGER}, {"pkg/ledger.py": head})

    # by time: reproducible runs (--max-sequences) always shrink to the fixpoint
    report = run_analyze(builder, budget=6.0, max_sequences=None, minimize_share=0.0)

    [difference] = report.differences
    assert difference.minimized is False
    assert any("Minimization stopped at its time bound" in note for note in report.notes), report.notes
    assert report_to_json(report)["differences"][0]["minimized"] is False


@pytest.mark.slow
def test_report_fields_for_findings(builder: RepoBuilder) -> None:
    head = LEDGER.replace("return sum(self.entries)", "return sum(self.entries) + 1")
    make_pr(builder, {"pkg/__init__.py": "", "pkg/ledger.py": LEDGER}, {"pkg/ledger.py": head})

    data = report_to_json(run_analyze(builder))

    validate_report(data)
    [difference] = data["differences"]
    assert data["schema"] == "difforacle.report/1"  # new fields are optional: readers of /1 keep working
    assert difference["pin_base"] == difference["test"]
    assert "matches_head" in difference["pin_head"] and "matches_base" in difference["pin_base"]
    assert difference["reproduced"] is True and difference["minimized"] is True
    assert difference["statements"] == 1 and difference["count"] >= 1  # Ledger(), then its balance()
    assert difference["kind"] == "observer"


def test_hunk_lookup_by_side() -> None:
    change = FileChange("a.py", "a.py", "a", frozenset({3, 10}), frozenset({3, 11, 12}),
                        hunks=((3, 1, 3, 1), (10, 1, 11, 2), (20, 0, 22, 1)))
    assert change.hunk_at("base", 3) == 0 and change.hunk_at("head", 3) == 0
    assert change.hunk_at("base", 10) == 1 and change.hunk_at("head", 12) == 1
    assert change.hunk_at("head", 22) == 2 and change.hunk_at("base", 20) is None  # pure addition
    assert change.hunk_at("head", 5) is None
