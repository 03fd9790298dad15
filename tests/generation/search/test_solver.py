"""Tests for `difforacle.generator.generation.search.solver`, solver-found inputs: CrossHair's
`cover` and `diffbehavior` output parsed into literal arguments, the functions it is asked about
and when, its run under the project's interpreter in the worker's sandbox (head's module beside
base's for `diffbehavior`), the note when it is missing. End to end: tests/end_to_end/test_solver.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.crosshair import CODES, needs_crosshair

from difforacle.generator.changes.model import Checkout
from difforacle.generator.generation.search import solver as solver_module
from difforacle.generator.generation.search.solver import (
    MISSING_NOTE,
    SOLVER_AFTER,
    Solver,
    parse_differences,
    parse_inputs,
    quiet_targets,
    solver_packages,
    solver_targets,
)
from difforacle.generator.planning.deadline import Deadline
from difforacle.generator.runtime.catalog import Operation, Parameter


def _param(name: str, kind: str = "POSITIONAL_OR_KEYWORD", default: bool = False) -> Parameter:
    return Parameter(name, kind, default, ("builtins.int",))


CLASSIFY = Operation("pkg.codes:classify", "function", None, (_param("code"), _param("base", default=True)),
                     (), None, None)
READ = Operation("pkg.codes:Meter.read", "method", "pkg.codes.Meter", (_param("volts"),), (), None, None)
SPREAD = Operation("pkg.codes:spread", "function", None,
                   (_param("first"), _param("rest", "VAR_POSITIONAL"), _param("scale", "KEYWORD_ONLY"),
                    _param("extra", "VAR_KEYWORD")), (), None, None)


# ---------------------------------------------------------------- parsing CrossHair's output


def test_each_argument_dictionary_becomes_the_operations_literal_arguments() -> None:
    output = '{"code": 633, "base": 10}\n{"code": 0, "base": \'ten\'}\n'
    inputs, skipped = parse_inputs(output, CLASSIFY)
    assert [(i.op_id, i.args, i.kwargs) for i in inputs] == [
        ("pkg.codes:classify", (["int", 633], ["int", 10]), ()),
        ("pkg.codes:classify", (["int", 0], ["str", "ten"]), ())]
    assert skipped == 0


def test_a_methods_receiver_is_left_to_the_call_builder() -> None:
    inputs, skipped = parse_inputs('{"self": Meter(0), "volts": -3}\n', READ)
    assert [(i.args, i.kwargs) for i in inputs] == [((["int", -3],), ())]
    assert skipped == 0


def test_variadic_and_keyword_only_parameters_are_placed_as_the_signature_takes_them() -> None:
    output = '{"first": 1, "rest": (2, 3), "scale": 4, "extra": {"unit": "V"}}\n'
    [found], _ = parse_inputs(output, SPREAD)
    assert found.args == (["int", 1], ["int", 2], ["int", 3])
    assert found.kwargs == (("scale", ["int", 4]), ("unit", ["str", "V"]))


def test_a_missing_positional_argument_sends_the_later_ones_by_name() -> None:
    [found], _ = parse_inputs('{"base": 2}\n', CLASSIFY)
    assert found.args == () and found.kwargs == (("base", ["int", 2]),)


def test_objects_unparseable_lines_and_unknown_names_are_skipped_and_counted() -> None:
    output = "\n".join(['{"code": Format.STRING, "base": 1}',  # an object: no literal spells it
                        "{\"code\": float('nan'), \"base\": 1}",  # a call, not a literal
                        "hello from the project's own print",
                        '{"code": 1, "base": 2, "other": 3}',  # no such parameter
                        '{"code": 7, "base": 2}', '{"code": 7, "base": 2}', ""])
    inputs, skipped = parse_inputs(output, CLASSIFY)
    assert [i.args for i in inputs] == [(["int", 7], ["int", 2])]  # the duplicate once
    assert skipped == 4


def test_each_input_diffbehavior_prints_becomes_the_operations_literal_arguments() -> None:
    output = "\n".join(["Given: (code=633, base=10),",
                        "     pkg.codes.classify : returns 'reserved'",
                        "  pkg.__difforacle_head__.classify : returns 'odd'",
                        "Given: (code=Format.STRING, base=1),",  # an object: no literal spells it
                        "Given: (code=633, base=10),",  # the same input again
                        "No differences found. (attempted 12 iterations)", ""])
    inputs, skipped = parse_differences(output, CLASSIFY)
    assert [(i.op_id, i.args, i.kwargs) for i in inputs] == [
        ("pkg.codes:classify", (["int", 633], ["int", 10]), ())]
    assert skipped == 1


def test_a_receiver_diffbehavior_prints_as_an_object_is_left_to_the_call_builder() -> None:
    output = "Given: (self=<pkg.codes.Meter object at 0x7f00>, volts=-3),\n"
    [found], skipped = parse_differences(output, READ)
    assert (found.args, found.kwargs, skipped) == ((["int", -3],), (), 0)


# ---------------------------------------------------------------- what is asked, and when


class _Impact:
    """Units by line, as Impact.unit_at finds them."""

    def __init__(self, units: dict[tuple[str, int], str],
                 reached_by: dict[tuple[str, str], set[tuple[str, str]]] | None = None) -> None:
        self.units = units
        self.reached_by = reached_by or {}

    def unit_at(self, side: str, path: str, line: int) -> tuple[str, str] | None:
        qualname = self.units.get((side, line))
        return ("pkg.codes", qualname) if qualname else None


CONSTRUCTOR = Operation("pkg.codes:Meter", "constructor", "pkg.codes.Meter", (), (), None, None)
BY_ID = {op.id: op for op in (CLASSIFY, READ, CONSTRUCTOR)}


def test_only_changed_functions_and_methods_with_uncovered_code_are_asked_about() -> None:
    impact = _Impact({("head", 3): "classify", ("base", 3): "classify", ("head", 4): "classify",
                      ("head", 9): "Meter.read", ("head", 12): "_helper", ("head", 15): "Meter"})
    uncovered = {("line", "head", "pkg/codes.py", 4), ("branch", "head", "pkg/codes.py", 3, 4),
                 ("branch", "base", "pkg/codes.py", 3, -1), ("line", "head", "pkg/codes.py", 9),
                 ("line", "head", "pkg/codes.py", 12), ("line", "head", "pkg/codes.py", 15),
                 ("line", "head", "pkg/codes.py", 20)}
    targets = solver_targets(uncovered, impact, BY_ID)  # type: ignore[arg-type]
    # the private helper is no operation (no seed could call it), the class body no function
    assert [(t.operation.id, t.side, t.uncovered) for t in targets] == [
        ("pkg.codes:classify", "head", 2), ("pkg.codes:Meter.read", "head", 1)]


class _Changes:
    def __init__(self, *files: object) -> None:
        self.files = files


class _File:
    def __init__(self, module: str, base_path: str | None, head_path: str | None) -> None:
        self.module, self.base_path, self.head_path = module, base_path, head_path


def test_changed_functions_that_ran_with_no_difference_are_asked_for_divergence(tmp_path: Path) -> None:
    impact = _Impact({("head", 3): "classify", ("base", 3): "classify", ("head", 4): "classify",
                      ("head", 9): "Meter.read", ("head", 12): "_helper", ("head", 15): "Meter"})
    impact.changes = _Changes(_File("pkg.codes", "pkg/codes.py", "pkg/codes.py"))  # type: ignore[attr-defined]
    ran = {("line", "head", "pkg/codes.py", 3), ("line", "base", "pkg/codes.py", 3),
           ("branch", "head", "pkg/codes.py", 3, 4), ("line", "head", "pkg/codes.py", 9),
           ("line", "head", "pkg/codes.py", 12), ("line", "head", "pkg/codes.py", 15)}
    targets = quiet_targets(ran, set(), impact, BY_ID, tmp_path)  # type: ignore[arg-type]
    assert [(t.operation.id, t.side, t.uncovered, t.head_file) for t in targets] == [
        ("pkg.codes:classify", "base", 3, tmp_path / "pkg/codes.py"),
        ("pkg.codes:Meter.read", "base", 1, tmp_path / "pkg/codes.py")]
    # one a difference was seen through is not asked about again
    differing = {"pkg.codes:classify"}
    assert [t.operation.id for t in quiet_targets(ran, differing, impact, BY_ID, tmp_path)] == [  # type: ignore[arg-type]
        "pkg.codes:Meter.read"]
    # a private helper that ran is asked about through the operations that call it, after the others
    impact.reached_by = {("pkg.codes", "_helper"): {("pkg.codes", "_helper"), ("pkg.codes", "Meter.read"),
                                                   ("pkg.codes", "Meter")}}
    assert [(t.operation.id, t.uncovered) for t in quiet_targets(ran, differing, impact, BY_ID,  # type: ignore[arg-type]
                                                                 tmp_path)] == [("pkg.codes:Meter.read", 2)]
    helper_only = {("line", "head", "pkg/codes.py", 12)}
    assert [t.operation.id for t in quiet_targets(helper_only, set(), impact, BY_ID,  # type: ignore[arg-type]
                                                  tmp_path)] == ["pkg.codes:Meter.read"]
    # a module head adds has no other version to differ from
    impact.changes = _Changes(_File("pkg.codes", None, "pkg/codes.py"))  # type: ignore[attr-defined]
    assert quiet_targets(ran, set(), impact, BY_ID, tmp_path) == []  # type: ignore[arg-type]


def test_the_solver_is_asked_once_after_its_share_of_the_run() -> None:
    solver = Solver(BY_ID, _Impact({}), {}, sys.executable)  # type: ignore[arg-type]
    assert not solver.due(SOLVER_AFTER / 2)
    assert solver.due(SOLVER_AFTER)
    assert solver.solve(set(), 10.0) == []  # nothing uncovered: nothing to ask, nothing run
    assert solver.stats.calls == 0 and not solver.notes
    assert not solver.due(1.0)


def test_too_short_a_share_of_the_budget_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver_module, "solver_packages", lambda: pytest.fail("no call was due"))
    solver = Solver(BY_ID, _Impact({("head", 4): "classify"}), {}, sys.executable)  # type: ignore[arg-type]
    assert solver.solve({("line", "head", "pkg/codes.py", 4)}, 1.0) == []
    assert solver.stats.calls == 0 and solver.asked


def test_the_share_of_the_run_is_counted_in_sequences_when_the_run_is_reproducible() -> None:
    assert Deadline(60, max_sequences=400).share_explored(100) == 0.25
    assert Deadline(60, max_sequences=400).side_seconds(0.15) is None
    now = [0.0]
    timed = Deadline(60, clock=lambda: now[0])
    now[0] = 30.0
    assert timed.share_explored(0) == 0.5
    assert timed.side_seconds(0.15) == 9.0
    now[0] = 50.0  # what is left is the later phases' reserve
    assert timed.side_seconds(0.15) == 4.0


def test_a_missing_crosshair_costs_a_note_not_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solver_module, "solver_packages", lambda: None)
    solver = Solver(BY_ID, _Impact({("head", 4): "classify"}), {}, sys.executable)  # type: ignore[arg-type]
    assert solver.solve({("line", "head", "pkg/codes.py", 4)}, 10.0) == []
    assert solver.notes == [MISSING_NOTE] and solver.stats.calls == 0


# ---------------------------------------------------------------- CrossHair in the sandbox

CODE = Operation("pkg.codes:classify", "function", None, (_param("code"),), (), None, None)
GREET = Operation("pkg.codes:greet", "function", None,
                  (Parameter("name", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",)),), (), None, None)


def _project(tmp_path: Path) -> Checkout:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "codes.py").write_text(CODES)
    return Checkout("head", "0" * 40, root, (root,))


@needs_crosshair
@pytest.mark.slow
def test_crosshair_runs_under_the_projects_interpreter_and_solves_the_branch(tmp_path: Path) -> None:
    impact = _Impact({("head", 4): "classify", ("head", 12): "greet"})
    solver = Solver({op.id: op for op in (CODE, GREET)}, impact,  # type: ignore[arg-type]
                    {"head": _project(tmp_path)}, sys.executable)
    inputs = solver.solve({("line", "head", "pkg/codes.py", 4), ("line", "head", "pkg/codes.py", 12)}, 20.0)
    assert solver.stats.calls == 2 and not solver.notes
    codes = [i.args[0][1] for i in inputs if i.op_id == CODE.id]
    assert any(code * 7 % 1000 == 431 for code in codes)
    assert ("str", "admin") in [tuple(i.args[0]) for i in inputs if i.op_id == GREET.id]


IS_RESERVED = Operation("pkg.codes:is_reserved", "function", None, (_param("code"),), (), None, None)
RESERVED = ("from .limits import LIMIT\n\n\n"
            "def is_reserved(code: int) -> bool:\n    return code * 7 % 1000 == 431\n")


def _two_sides(tmp_path: Path, head: str) -> dict[str, Checkout]:
    sides = {}
    for side, source in (("base", RESERVED), ("head", head)):
        root = tmp_path / side
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "limits.py").write_text("LIMIT = 3\n")
        (root / "pkg" / "codes.py").write_text(source)
        sides[side] = Checkout(side, "0" * 40, root, (root,))
    return sides


class _Lines:
    def targets(self) -> list[tuple]:
        return [("line", "head", "pkg/codes.py", 5), ("line", "base", "pkg/codes.py", 5)]


def _diverging(tmp_path: Path, head: str) -> Solver:
    impact = _Impact({("head", 5): "is_reserved", ("base", 5): "is_reserved"})
    impact.changes = _Changes(_File("pkg.codes", "pkg/codes.py", "pkg/codes.py"))  # type: ignore[attr-defined]
    return Solver({IS_RESERVED.id: IS_RESERVED}, impact, _two_sides(tmp_path, head),  # type: ignore[arg-type]
                  sys.executable, lines=_Lines(), cover=False, diverge=True)  # type: ignore[arg-type]


@needs_crosshair
def test_crosshair_finds_where_base_and_head_diverge_with_heads_module_beside_bases(tmp_path: Path) -> None:
    solver = _diverging(tmp_path, RESERVED.replace("== 431", "== 431 and code % 2 == LIMIT % 2 - 1"))
    inputs = solver.solve(set(), 20.0)
    assert solver.stats.calls == 1 and not solver.notes
    codes = [i.args[0][1] for i in inputs]
    assert codes and all(code * 7 % 1000 == 431 and code % 2 == 1 for code in codes)


@needs_crosshair
def test_a_head_that_does_not_load_beside_base_costs_a_note(tmp_path: Path) -> None:
    solver = _diverging(tmp_path, RESERVED.replace("import LIMIT", "import LIMIT, MAXIMUM"))
    assert solver.solve(set(), 10.0) == []
    [note] = solver.notes
    assert note.startswith("Head's version of pkg.codes does not load beside base's package (ImportError")


@needs_crosshair
def test_an_interpreter_without_crosshair_costs_a_note(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    python = getattr(sys, "_base_executable", sys.executable)  # outside this environment
    if subprocess.run([python, "-c", "import crosshair"], capture_output=True).returncode == 0:
        pytest.skip(f"{python} has a CrossHair of its own")
    monkeypatch.setattr(solver_module, "solver_packages", lambda: [])  # nothing linked for the project
    solver = Solver({GREET.id: GREET}, _Impact({("head", 12): "greet"}),  # type: ignore[arg-type]
                    {"head": _project(tmp_path)}, python)
    assert solver.solve({("line", "head", "pkg/codes.py", 12)}, 10.0) == []
    [note] = solver.notes
    assert note.startswith("CrossHair does not run under the project's interpreter (ModuleNotFoundError")


@needs_crosshair
def test_crosshair_and_its_dependencies_are_what_the_project_is_given() -> None:
    packages = solver_packages()
    assert packages is not None
    assert {"crosshair", "z3", "typing_inspect"} <= set(packages)
    assert "build" not in packages  # top_level.txt lists it; it is no installed module
