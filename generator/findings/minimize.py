"""Differential minimization: the shortest, simplest sequence that still shows a difference.

A `Case` is a call sequence whose last statement is the one that behaves differently,
plus the statement whose value is observed (`var`, for state and observer differences).
The minimizer proposes smaller cases and asks a `check` function, which runs them on both
commits in fresh processes, whether the *same* difference still shows. Passes, in a fixed
order, repeated until none makes progress (a fixpoint) or the deadline passes:

1. drop one statement with everything that depends on it, last statement first;
2. delta debugging (ddmin) over the statements still removable, for groups that must go
   together;
3. simpler values: literals shrink (`simpler_literals`), a reference to an object becomes
   None, optional arguments are dropped.

A case within its operations' declared types is never shrunk to one outside them
(`declared_types`): a simpler input no caller could pass is not a simpler test.

A long case (more than LONG statements, as one confirmed after the sequences of its replay
round) gets ddmin first: halving it costs a handful of checks, where dropping its statements
one at a time would spend the whole bound of a reproducible run.

Every accepted candidate is strictly smaller by `cost` (statements, then literal weight),
so minimization terminates; candidates are tried in a deterministic order and the first
that keeps the difference wins, so the same input gives the same result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..planning.deadline import Deadline
from ..runtime.catalog import Operation
from ..runtime.sequence import CallSequence, arguments, dependents, plain_operation, renumbered
from ..worker.protocol import Arg, OperationKind, Statement
from ..worker.resolve import CALL, volume_id, volume_target
from ..worker.volume import SIZES
from .cases import Case, Finding, Location, Shown
from .declared_types import outside_declared_types
from .difference_check import DifferenceCheck
from .render import can_pin
from .simpler_literals import simpler, weight

REF_WEIGHT = 6  # a reference costs more than None: dropping one can free its statement
EARLIER_REFS = 8  # earlier statements tried in place of a referenced object
BATCH = 16  # candidates checked per round trip to the workers
LONG = 12  # statements: a longer case is halved by ddmin before single statements are dropped
POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL")

Outcome = TypeVar("Outcome")


@dataclass
class Minimized(Generic[Outcome]):
    case: Case
    outcome: Outcome
    complete: bool  # False when the deadline cut minimization short
    checks: int = 0  # candidates run
    accepted: int = 0  # candidates that kept the difference
    passes: list[str] = field(default_factory=list)  # names of passes that made progress


# runs each case on both commits: what difference it shows (None: not the one kept)
RunCases = Callable[[Sequence[Case]], Sequence["Outcome | None"]]


# ---------------------------------------------------------------- the stage: findings, shrunk


@dataclass
class Minimization:
    notes: list[str] = field(default_factory=list)


def minimize_findings(findings: list[Finding], check: DifferenceCheck, deadline: Deadline,
                      operations: dict[str, Operation],
                      locate: Callable[[int, Shown], Location],
                      classes: Mapping[str, dict] | None = None) -> Minimization:
    """Shrink each finding's case in place, sharing the minimization time equally among them."""
    until = deadline.minimization_until()
    for remaining, finding in zip(range(len(findings), 0, -1), findings, strict=True):
        share = (until - time.monotonic()) / remaining
        _minimize_finding(finding, check, time.monotonic() + share, deadline.minimization_checks,
                          operations, locate, classes)
    cut = [f for f in findings if not f.minimized]
    if not cut:
        return Minimization()
    bound = f"bound of {deadline.minimization_checks} checks" if deadline.reproducible else "time bound"
    remedy = "a run bound by time shrinks further" if deadline.reproducible else "raise --minimize-share"
    targets = ", ".join(sorted({f.shown.target for f in cut}))
    return Minimization([f"Minimization stopped at its {bound} for {len(cut)} test(s) ({targets}); "
                         f"they may be longer than needed ({remedy})."])


def _minimize_finding(finding: Finding, check: DifferenceCheck, until: float, max_checks: int | None,
                      operations: dict[str, Operation], locate: Callable[[int, Shown], Location],
                      classes: Mapping[str, dict] | None = None) -> None:
    """Shrink while the same difference shows, and stays assertable on the sides it was."""
    key, shapes = finding.shown.key, finding.shown.shapes
    pins = [pin for pin in ("base", "head") if can_pin(finding.shown.mismatch, pin)]

    def same(cases: Sequence[Case]) -> list[Shown | None]:
        shown = check.same(cases, key, shapes)
        return [s if s is not None and all(can_pin(s.mismatch, p) for p in pins) else None for s in shown]

    result = minimize(finding.case, finding.shown, same, deadline=until, operations=operations,
                      max_checks=max_checks, classes=classes)
    finding.minimized = result.complete
    if result.case != finding.case:
        shown = check.observe(result.case, key.path, lines=True) or result.outcome
        finding.case, finding.shown = result.case, shown
        finding.location = locate(result.case.target, shown)


# ---------------------------------------------------------------- the algorithm


def cost(case: Case) -> tuple[int, int]:
    """Fewer statements first, then simpler arguments."""
    total = 0
    for statement in case.statements:
        for arg in (*statement["args"], *statement["kwargs"].values()):
            # a reference to an earlier statement is simpler: the later ones may then go
            total += 1 + (REF_WEIGHT + arg["ref"] if "ref" in arg else weight(arg["lit"]))
        repeated = volume_target(statement["op"])
        total += repeated[1] if repeated is not None else 0  # fewer calls of a volume call are simpler
    return len(case.statements), total


def minimize(case: Case, outcome: Outcome, check: RunCases, *, deadline: float,
             operations: dict[str, Operation] | None = None,
             clock: Callable[[], float] = time.monotonic,
             max_checks: int | None = None,
             classes: Mapping[str, dict] | None = None) -> Minimized[Outcome]:
    """Shrink `case` while `check` keeps returning an outcome (not None) for the candidates.

    `outcome` is what `check` returned for `case` itself; the result carries the outcome
    of the final case, so callers render what the minimized sequence actually does.
    `max_checks` bounds the work by the number of candidates checked instead of (or besides)
    the clock, which keeps a bounded run reproducible.
    """
    return _Minimizer(check, deadline, operations or {}, clock, max_checks, classes).run(case, outcome)


class _Minimizer(Generic[Outcome]):
    def __init__(self, check: RunCases, deadline: float, operations: dict[str, Operation],
                 clock: Callable[[], float], max_checks: int | None = None,
                 classes: Mapping[str, dict] | None = None) -> None:
        self.check, self.deadline, self.operations, self.clock = check, deadline, operations, clock
        self.classes = classes
        self.max_checks = max_checks
        self.outcomes: dict[str, Outcome | None] = {}  # candidate (as JSON) -> what check said
        self.result: Minimized[Outcome]

    def run(self, case: Case, outcome: Outcome) -> Minimized[Outcome]:
        self.result = Minimized(case, outcome, complete=True)
        self.within_types = outside_declared_types(case.statements, self.operations, self.classes) is None
        passes = self.passes()
        if case.target > LONG:  # a long case (one confirmed after its history): halve it first
            passes = [passes[1], passes[0], *passes[2:]]
        progress = True
        while progress and self.result.complete:
            progress = False
            for name, shrink_pass in passes:
                improved = shrink_pass()
                if improved:
                    self.result.passes.append(name)
                progress |= improved
                if not self.result.complete:
                    break
        return self.result

    def passes(self) -> list[tuple[str, Callable[[], bool]]]:
        """The passes, in order: each tries to make the case smaller and says whether it did."""
        return [("drop", lambda: self._greedy(self._drop_candidates)),
                ("ddmin", self._ddmin),
                ("calls", lambda: self._greedy(self._fewer_calls_candidates)),
                ("values", lambda: self._greedy(self._value_candidates))]

    # ------------------------------------------------------------ search

    def _greedy(self, candidates: Callable[[Case], Iterator[Case]]) -> bool:
        """Accept the first candidate that keeps the difference; repeat until none does."""
        improved = False
        while self.result.complete and self._first_accepted(candidates(self.result.case)):
            improved = True
        return improved

    def _first_accepted(self, candidates: Iterator[Case]) -> bool:
        """Check candidates in order, a batch at a time; adopt the first that keeps the difference.

        Outcomes are remembered: a candidate that succeeded in an earlier batch, after an
        earlier one was adopted, is adopted again without running it twice.
        """
        limit = cost(self.result.case)
        batch: list[Case] = []
        for candidate in candidates:
            if cost(candidate) >= limit or not self._admissible(candidate):
                continue
            text = _text(candidate)
            if text in self.outcomes:
                if self.outcomes[text] is None:
                    continue
                if batch and self._run(batch):
                    return True
                self._adopt(candidate, self.outcomes[text])
                return True
            batch.append(candidate)
            if len(batch) == BATCH:
                if self._run(batch):
                    return True
                if not self.result.complete:
                    return False
                batch = []
        return bool(batch) and self._run(batch)

    def _admissible(self, candidate: Case) -> bool:
        """A case within its operations' declared types stays within them (None for an object is
        simpler, but `f(None)` for `f(text: str)` is not an input a caller would pass)."""
        return (not self.within_types
                or outside_declared_types(candidate.statements, self.operations, self.classes) is None)

    def _run(self, batch: list[Case]) -> bool:
        """Check a batch; adopt its first success. False also when the deadline has passed."""
        if self.clock() >= self.deadline:
            self.result.complete = False
            return False
        if self.max_checks is not None:
            if self.result.checks >= self.max_checks:
                self.result.complete = False
                return False
            batch = batch[:self.max_checks - self.result.checks]
        outcomes = self.check(batch)
        self.result.checks += len(batch)
        for candidate, outcome in zip(batch, outcomes, strict=True):
            self.outcomes[_text(candidate)] = outcome
        for candidate, outcome in zip(batch, outcomes, strict=True):
            if outcome is not None:
                self._adopt(candidate, outcome)
                return True
        return False

    def _adopt(self, candidate: Case, outcome: Outcome) -> None:
        self.result.case, self.result.outcome = candidate, outcome
        self.result.accepted += 1

    def _ddmin(self) -> bool:
        """Delta debugging over the removable statements: keep one chunk, or drop one chunk."""
        improved, granularity = False, 2
        while self.result.complete:
            removable = sorted(set(range(self.result.case.target)) - self.result.case.protected())
            if len(removable) < 2:
                break
            granularity = min(granularity, len(removable))
            size = -(-len(removable) // granularity)  # contiguous chunks, as in ddmin
            chunks = [removable[i:i + size] for i in range(0, len(removable), size)]
            keep_one = [[i for i in removable if i not in chunk] for chunk in chunks]
            candidates = (without(self.result.case, indices) for indices in [*keep_one, *chunks])
            if self._first_accepted(c for c in candidates if c is not None):
                improved, granularity = True, max(granularity - 1, 2)
            elif granularity >= len(removable):
                break
            else:
                granularity = min(2 * granularity, len(removable))
        return improved

    # ------------------------------------------------------------ candidates

    def _drop_candidates(self, case: Case) -> Iterator[Case]:
        for index in range(case.target - 1, -1, -1):
            candidate = without(case, [index])
            if candidate is not None:
                yield candidate

    def _fewer_calls_candidates(self, case: Case) -> Iterator[Case]:
        """Per volume call: the plain call, then made once past each smaller usual size."""
        for index, statement in enumerate(case.statements):
            repeated = volume_target(statement["op"])
            if repeated is None:
                continue
            inner, count = repeated
            yield _replaced(case, index, {**statement, "op": inner})
            for size in SIZES:
                if size + 1 < count:
                    yield _replaced(case, index, {**statement, "op": volume_id(inner, size + 1)})

    def _value_candidates(self, case: Case) -> Iterator[Case]:
        """Per statement, in order: optional arguments dropped, then each argument simpler."""
        for index, statement in enumerate(case.statements):
            for smaller in self._fewer_arguments(statement):
                yield _replaced(case, index, smaller)
            receiver = 0 if self._has_receiver(statement) else None
            for position, arg in arguments(statement):
                for simpler_arg in _simpler_arguments(arg, receiver=position == receiver):
                    yield _replaced(case, index, _with_argument(statement, position, simpler_arg))

    def _fewer_arguments(self, statement: Statement) -> Iterator[Statement]:
        for name in sorted(statement["kwargs"]):
            yield {**statement, "kwargs": {k: v for k, v in statement["kwargs"].items() if k != name}}
        op = self.operations.get(plain_operation(statement["op"]))
        if op is None or not statement["args"]:
            return
        params = [p for p in op.params if p.kind in POSITIONAL]
        offset = 1 if self._has_receiver(statement) else 0  # the receiver is args[0], of no parameter
        last = len(statement["args"]) - 1
        position = last - offset
        if position >= 0 and (position >= len(params) or params[position].has_default
                              or params[position].kind == "VAR_POSITIONAL"):
            yield {**statement, "args": statement["args"][:last]}


    def _has_receiver(self, statement: Statement) -> bool:
        """A method's first argument, and the callable a returned callable's call calls, are receivers."""
        op = self.operations.get(plain_operation(statement["op"]))
        return statement["op"] == CALL or (op is not None and op.kind == OperationKind.METHOD)


def _text(case: Case) -> str:
    """A case as a dictionary key."""
    return json.dumps([case.statements, case.var], sort_keys=True)


def _simpler_arguments(arg: Arg, receiver: bool) -> Iterator[Arg]:
    """None for an object (never for a method's receiver), an object made earlier, a simpler literal."""
    if "ref" in arg:
        if not receiver:
            yield {"lit": ["none"]}
        yield from ({"ref": earlier} for earlier in range(min(arg["ref"], EARLIER_REFS)))
    else:
        for lit in simpler(arg["lit"]):
            yield {"lit": lit}


def _with_argument(statement: Statement, position: int | str, arg: Arg) -> Statement:
    if isinstance(position, int):
        args = list(statement["args"])
        args[position] = arg
        return {**statement, "args": args}
    return {**statement, "kwargs": {**statement["kwargs"], position: arg}}


def _replaced(case: Case, index: int, statement: Statement) -> Case:
    statements = list(case.statements)
    statements[index] = statement
    return Case(tuple(statements), case.var)


def without(case: Case, indices: Sequence[int]) -> Case | None:
    """The case with `indices` and their dependents removed, references renumbered; None if
    that would remove the differing statement or the observed one."""
    removed = dependents(case.statements, indices)
    if removed & case.protected():
        return None
    new_index: dict[int, int] = {}
    kept: CallSequence = []
    for position, statement in enumerate(case.statements):
        if position in removed:
            continue
        new_index[position] = len(kept)
        kept.append(renumbered(statement, new_index))
    var = None if case.var is None else new_index[case.var]
    return Case(tuple(kept), var)

