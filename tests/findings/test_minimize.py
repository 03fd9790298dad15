"""Differential minimization (`difforacle.generator.findings.minimize`), against checks that model
how a difference depends on a sequence.

The fake checks interpret sequences of a tiny language (`new`, `add`, `noise`, `push`,
`pop`, `target`), the way the engine's check runs them on both commits: a candidate
"keeps the difference" when the model says the target statement still differs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from difforacle.generator.findings.cases import Case
from difforacle.generator.findings.minimize import cost, minimize, without
from difforacle.generator.runtime.catalog import Operation, Parameter
from difforacle.generator.worker.resolve import volume_id, volume_target


def call(op: str, *args: dict, **kwargs: dict) -> dict:
    return {"op": op, "args": list(args), "kwargs": dict(kwargs)}


def ref(index: int) -> dict:
    return {"ref": index}


def lit(value: object) -> dict:
    if isinstance(value, int):
        return {"lit": ["int", value]}
    return {"lit": ["str", value]}


def run_model(case: Case) -> dict | None:
    """Values of the model's objects; None when a statement is invalid (a wrong reference)."""
    values: list[object] = []
    for statement in case.statements:
        op, args = statement["op"], [_value(a, values) for a in statement["args"]]
        if op == "new":
            values.append({"total": 0, "stack": 0})
        elif op == "add":
            if not isinstance(args[0], dict) or not isinstance(args[1], int):
                return None
            args[0]["total"] += args[1]
            values.append(None)
        elif op in ("push", "pop"):
            if not isinstance(args[0], dict):
                return None
            args[0]["stack"] += 1 if op == "push" else -1
            values.append(None)
        else:  # noise and target
            values.append(args[0] if args else None)
    return values[-1] if isinstance(values[-1], dict) else None


def _value(arg: dict, values: list) -> object:
    if "ref" in arg:
        return values[arg["ref"]]
    return arg["lit"][1] if arg["lit"][0] != "none" else None


def total_at_least(threshold: int):
    """The target differs while the object it reads has a total of at least `threshold`."""

    def check(cases: Sequence[Case]) -> list[object]:
        outcomes = []
        for case in cases:
            state = run_model(case)
            ok = case.statements[-1]["op"] == "target" and state is not None and state["total"] >= threshold
            outcomes.append(("differs", state["total"]) if ok else None)
        return outcomes

    return check


def noisy_case() -> Case:
    return Case((
        call("noise", lit("abc")),
        call("new"),
        call("noise", lit(12345)),
        call("add", ref(1), lit(7)),
        call("new"),
        call("add", ref(4), lit(100)),
        call("add", ref(1), lit(40)),
        call("noise", ref(4)),
        call("target", ref(1)),
    ))


def test_drops_noise_and_keeps_the_calls_that_build_the_state() -> None:
    check = total_at_least(10)
    result = minimize(noisy_case(), ("differs", 47), check, deadline=float("inf"))
    assert result.complete
    # a new object, one add (shrunk to the smallest amount that still differs), the target
    assert [s["op"] for s in result.case.statements] == ["new", "add", "target"]
    assert result.case.statements[1]["args"][1] == lit(10)
    assert result.outcome == ("differs", 10)
    assert check([result.case])[0] is not None


def test_a_difference_that_needs_several_calls_keeps_them() -> None:
    """Values cannot grow past 50 here, so reaching 120 needs three adds: all of them stay."""
    statements = (call("new"), *(call("add", ref(0), lit(50)) for _ in range(3)), call("noise", lit(1)),
                  call("target", ref(0)))
    result = minimize(Case(statements), ("differs", 150), total_at_least(120), deadline=float("inf"))
    ops = [s["op"] for s in result.case.statements]
    assert ops == ["new", "add", "add", "add", "target"]
    assert sum(s["args"][1]["lit"][1] for s in result.case.statements if s["op"] == "add") == 120


def test_an_already_minimal_case_stays_unchanged() -> None:
    case = Case((call("new"), call("target", ref(0))))

    def check(cases: Sequence[Case]) -> list[object]:  # only the exact original shows it
        return ["same" if c == case else None for c in cases]

    result = minimize(case, "same", check, deadline=float("inf"))
    assert result.case == case and result.outcome == "same"
    assert result.accepted == 0 and result.complete


def test_statements_that_only_go_together_are_removed_by_delta_debugging() -> None:
    """A push without its pop (or the reverse) breaks the difference: they go as a pair."""
    statements = (call("new"), call("add", ref(0), lit(5)), call("push", ref(0)), call("pop", ref(0)),
                  call("target", ref(0)))

    def balanced(cases: Sequence[Case]) -> list[object]:
        outcomes = []
        for case in cases:
            state = run_model(case)
            ok = state is not None and state["stack"] == 0 and state["total"] >= 5
            outcomes.append("differs" if ok and case.statements[-1]["op"] == "target" else None)
        return outcomes

    result = minimize(Case(statements), "differs", balanced, deadline=float("inf"))
    assert [s["op"] for s in result.case.statements] == ["new", "add", "target"]
    assert "ddmin" in result.passes


def test_observed_variable_is_never_dropped_and_references_are_renumbered() -> None:
    statements = (call("noise", lit(1)), call("new"), call("noise", lit(2)), call("new"),
                  call("add", ref(3), lit(3)), call("target", ref(1)))
    observed = Case(statements, var=3)

    def state_of_var(cases: Sequence[Case]) -> list[object]:
        outcomes = []
        for case in cases:
            last = case.statements[-1]
            ok = case.var is not None and case.statements[case.var]["op"] == "new" and any(
                s["op"] == "add" and s["args"][0] == ref(case.var) for s in case.statements)
            ok = ok and last["op"] == "target" and "ref" in last["args"][0]  # a method of an object
            outcomes.append("differs" if ok else None)
        return outcomes

    result = minimize(observed, "differs", state_of_var, deadline=float("inf"))
    ops = [s["op"] for s in result.case.statements]
    assert ops.count("new") == 2 and ops[-1] == "target" and "noise" not in ops
    assert result.case.statements[result.case.var]["op"] == "new"
    assert result.case.statements[-1]["args"][0]["ref"] != result.case.var


def test_optional_arguments_are_dropped_and_references_become_none() -> None:
    ops = {"m:f": Operation("m:f", "function", None, (
        Parameter("x", "POSITIONAL_OR_KEYWORD", False, ()),
        Parameter("y", "POSITIONAL_OR_KEYWORD", True, ())), (), None, None)}
    case = Case((call("new"), call("m:f", lit(3), ref(0), flag=lit(1))))

    def needs_x(cases: Sequence[Case]) -> list[object]:
        return ["differs" if c.statements[-1]["args"][:1] == [lit(3)] else None for c in cases]

    result = minimize(case, "differs", needs_x, deadline=float("inf"), operations=ops)
    assert result.case.statements == (call("m:f", lit(3)),)


def test_a_case_within_the_declared_types_is_not_shrunk_outside_them() -> None:
    # `f(node: Node)` and `g(text: str)`: None is simpler than an object or a text, and the check
    # would accept it, but no caller passes it; `h(x)` declares nothing, so None may replace it there
    node = Parameter("node", "POSITIONAL_OR_KEYWORD", False, ("pkg.Node",))
    text = Parameter("text", "POSITIONAL_OR_KEYWORD", False, ("builtins.str",))
    untyped = Parameter("x", "POSITIONAL_OR_KEYWORD", False, ())
    ops = {"m:f": Operation("m:f", "function", None, (node, text), (), None, None),
           "m:h": Operation("m:h", "function", None, (untyped,), (), None, None)}
    case = Case((call("new"), call("m:f", ref(0), lit("abc")), call("m:h", ref(0))))

    def anything(cases: Sequence[Case]) -> list[object]:
        return ["differs" if c.statements and c.statements[-1]["op"] == "m:h" else None for c in cases]

    result = minimize(case, "differs", anything, deadline=float("inf"), operations=ops)
    assert result.case.statements == (call("m:h", {"lit": ["none"]}),)
    kept = minimize(Case((call("new"), call("m:f", ref(0), lit("abc")))), "differs",
                    lambda cases: ["differs" if c.statements[-1]["op"] == "m:f" else None for c in cases],
                    deadline=float("inf"), operations=ops)
    assert kept.case.statements == (call("new"), call("m:f", ref(0), lit("")))  # shorter, never None
    # a case already outside them (only such inputs show its difference) still shrinks freely
    outside = minimize(Case((call("new"), call("m:f", {"lit": ["none"]}, lit("abc")))), "differs",
                       lambda cases: ["differs" if c.statements[-1]["op"] == "m:f" else None for c in cases],
                       deadline=float("inf"), operations=ops)
    assert outside.case.statements == (call("m:f", {"lit": ["none"]}, lit("")),)


def test_the_deadline_cuts_minimization_short_and_says_so() -> None:
    ticks = itertools.count()
    result = minimize(noisy_case(), ("differs", 47), total_at_least(10), deadline=2,
                      clock=lambda: next(ticks))
    assert not result.complete
    assert cost(result.case) <= cost(noisy_case())
    assert total_at_least(10)([result.case])[0] is not None


def test_minimization_is_deterministic() -> None:
    first = minimize(noisy_case(), ("differs", 47), total_at_least(10), deadline=float("inf"))
    second = minimize(noisy_case(), ("differs", 47), total_at_least(10), deadline=float("inf"))
    assert first.case == second.case and first.checks == second.checks


@st.composite
def sequences(draw: st.DrawFn) -> Case:
    """Random well-formed sequences over the model, ending with a target on some object."""
    statements: list[dict] = [call("new")]
    for _ in range(draw(st.integers(0, 12))):
        objects = [i for i, s in enumerate(statements) if s["op"] == "new"]
        choice = draw(st.sampled_from(["new", "add", "noise", "push", "pop"]))
        if choice == "new":
            statements.append(call("new"))
        elif choice == "noise":
            statements.append(call("noise", lit(draw(st.text(max_size=5)))))
        else:
            target = draw(st.sampled_from(objects))
            args = (ref(target), lit(draw(st.integers(-50, 50)))) if choice == "add" else (ref(target),)
            statements.append(call(choice, *args))
    objects = [i for i, s in enumerate(statements) if s["op"] == "new"]
    statements.append(call("target", ref(draw(st.sampled_from(objects)))))
    return Case(tuple(statements))


@settings(max_examples=150, deadline=None)
@given(sequences(), st.integers(-20, 60))
def test_minimization_keeps_the_difference(case: Case, threshold: int) -> None:
    check = total_at_least(threshold)
    outcome = check([case])[0]
    if outcome is None:
        return  # this sequence shows no difference: nothing to minimize
    result = minimize(case, outcome, check, deadline=float("inf"))
    assert check([result.case])[0] == result.outcome is not None
    assert cost(result.case) <= cost(case)
    # a fixpoint: minimizing the result again changes nothing
    again = minimize(result.case, result.outcome, check, deadline=float("inf"))
    assert again.case == result.case
    # 1-minimal: no single statement (with its dependents) can go
    for index in range(result.case.target):
        smaller = without(result.case, [index])
        assert smaller is None or check([smaller])[0] is None


def test_an_object_built_by_a_chain_of_calls_gives_way_to_an_earlier_one() -> None:
    """`a != c` where c came from b came from a new object: `a != a` shows it just as well."""
    statements = (call("new"), call("new"), call("derive", ref(1)), call("derive", ref(2)),
                  call("target", ref(0), ref(3)))

    def two_objects(cases: Sequence[Case]) -> list[object]:
        outcomes = []
        for case in cases:
            last = case.statements[-1]
            refs = [a for a in last["args"] if "ref" in a]
            ok = last["op"] == "target" and len(refs) == 2 and all(
                case.statements[a["ref"]]["op"] in ("new", "derive") for a in refs)
            outcomes.append("differs" if ok else None)
        return outcomes

    result = minimize(Case(statements), "differs", two_objects, deadline=float("inf"))
    assert result.case.statements == (call("new"), call("target", ref(0), ref(0)))


def test_a_bound_on_checks_stops_minimization_reproducibly() -> None:
    """Runs bound by sequence counts bound shrinking by candidate checks, not by the clock."""
    statements = [{"op": "m:f", "args": [{"lit": ["int", n]}], "kwargs": {}} for n in range(8)]
    case = Case(tuple(statements))
    calls: list[int] = []

    def check(cases: list[Case]) -> list[object | None]:
        calls.append(len(cases))
        return [None] * len(cases)  # nothing smaller shows the difference

    result = minimize(case, "outcome", check, deadline=float("inf"), max_checks=5)
    assert sum(calls) == result.checks == 5 and result.complete is False
    assert result.case == case


def test_a_volume_call_is_made_no_more_often_than_the_difference_needs() -> None:
    """A difference past a cache of 256 entries: 4097 calls shrink to 257, and not to the plain call."""
    def check(cases: Sequence[Case]) -> list[object]:
        outcomes = []
        for case in cases:
            repeated = volume_target(case.statements[1]["op"])
            calls = repeated[1] if repeated is not None and repeated[0] == "put" else 1
            shown = calls > 256 and case.statements[-1]["op"] == "target"
            outcomes.append(("evicted", calls) if shown else None)
        return outcomes

    case = Case((call("new"), call(volume_id("put", 4097), ref(0), lit("k")), call("target", ref(0))))
    result = minimize(case, ("evicted", 4097), check, deadline=float("inf"))
    assert [s["op"] for s in result.case.statements] == ["new", "put<x257>", "target"]
    assert result.outcome == ("evicted", 257) and "calls" in result.passes
