"""Confirmation: is a candidate difference real? One representative per group, alone, in fresh
processes on both commits.

A mismatch seen while replaying a batch may come from the batch (state left by an earlier
sequence in the same process) or from chance (time, a slow machine). Each group's
representatives (the shortest first, at most REPRESENTATIVES) run again, each in a fresh
fork of fresh workers with a patient per-call timeout; the first that shows the same values
again confirms the group. A group's members that end differently (an exception raised from
another place, see `leaves.outcome`) are confirmed apart: one function's intended change and
its regression must not hide behind one representative. Groups whose difference turns out to be
the same (same key and outcomes in the same changed hunk) become one finding with the sum of
their counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..changes.model import ChangeSet, Checkout
from ..changes.scope import Scope
from ..generation.replay import Candidates, KeptSequence
from ..oracle.compare import Mismatch
from ..oracle.difference_key import observed_path
from ..oracle.leaves import FloatPolicy, reproduces
from ..planning.deadline import Deadline
from ..runtime.catalog import Operation
from ..runtime.sequence import CallSequence, sequence_key
from ..worker.protocol import OperationKind, statement_of
from .cases import Case, Finding, Location, Shown
from .declared_types import outside_declared_types
from .difference_check import DifferenceCheck

REPRESENTATIVES = 3
MAX_OUTCOMES = 3  # outcomes of one group confirmed apart (see `_by_outcome`)
MAX_HISTORY = 400  # statements of earlier sequences a difference may need to show (then minimized away)


@dataclass
class Confirmation:
    findings: list[Finding] = field(default_factory=list)  # one per difference, in the order confirmed
    notes: list[str] = field(default_factory=list)
    ignored: int = 0  # confirmed in a function the project's scope ignores (reached through another)
    # groups no representative confirmed, by why: "alone" (no difference when run alone in fresh
    # processes) or "values" (a difference, but with other values: nondeterministic)
    dropped: dict[str, int] = field(default_factory=dict)


class Locator:
    """Where a difference happens: the first changed line its statement executed (head first),
    else the target's unit; with the index of the diff hunk that line belongs to."""

    def __init__(self, changes: ChangeSet, base: Checkout, head: Checkout,
                 operations: dict[str, Operation]) -> None:
        self.changes, self.base, self.head, self.operations = changes, base, head, operations

    def __call__(self, statement: int, shown: Shown) -> Location:
        for side, result, checkout in (("head", shown.head, self.head), ("base", shown.base, self.base)):
            lines = sorted((file, line) for s, file, line in result.lines.covered if s == statement)
            if lines:
                file, line = lines[0]
                path = relative(file, checkout)
                return Location(path, line, side, self._hunk(side, path, line))
        module, _, qualname = shown.target.partition(":")
        for unit in self.changes.units:
            if unit.module == module and unit.qualname == qualname:
                side = "base" if unit.status == "removed" else "head"
                line = self._first_changed(side, unit.path, unit.start, unit.end)
                return Location(unit.path, line, side, self._hunk(side, unit.path, line) if line else None)
        op = self.operations.get(shown.target)
        if op and op.file and op.kind in (OperationKind.VALUE, OperationKind.EXPORT) and op.line is not None:
            # a module's value: the first changed line of its assignment (on base, where it was
            # listed); an exported name: its line in `__all__` or in the package's imports
            path = relative(op.file, self.base)
            line = self._first_changed("base", path, op.line, op.end or op.line)
            if line is not None:
                return Location(path, line, "base", self._hunk("base", path, line))
        if op and op.file:  # an unchanged function that reached the change: its file, no line of it
            return Location(relative(op.file, self.base), None, "base")
        return Location()

    def _first_changed(self, side: str, path: str, start: int, end: int) -> int | None:
        """The first line of `path` between `start` and `end` that the change touched on `side`: a
        difference's line is always a changed line (never the `def` above it)."""
        for change in self.changes.files:
            if (change.head_path if side == "head" else change.base_path) == path:
                lines = change.head_lines if side == "head" else change.base_lines
                return min((line for line in lines if start <= line <= end), default=None)
        return None

    def _hunk(self, side: str, path: str, line: int) -> int | None:
        for change in self.changes.files:
            if (change.head_path if side == "head" else change.base_path) == path:
                return change.hunk_at(side, line)
        return None


def confirm(candidates: Candidates, check: DifferenceCheck, deadline: Deadline, locate: Locator,
            policy: FloatPolicy, scope: Scope, operations: Mapping[str, Operation],
            on_progress: Callable[[int], None] = lambda found: None,
            carved: Mapping[str, frozenset[str]] | None = None,
            classes: Mapping[str, dict] | None = None) -> Confirmation:
    """Confirm the groups in the order they were found, while the deadline allows; a group's
    representatives within the declared types of their operations are tried first, and of those
    the ones carved from the project's tests (`carved`: `sequence_key` -> the tests that made it):
    the inputs a maintainer knows."""
    carved = carved or {}
    confirmation = Confirmation()
    findings: dict[tuple, Finding] = {}
    groups = list(candidates.groups.values())
    for remaining, group in zip(range(len(groups), 0, -1), groups, strict=True):
        if deadline.confirmation_over(bool(findings)):
            confirmation.notes.append(
                f"The budget ran out before {remaining} of {len(groups)} groups of candidate "
                "differences were confirmed; a larger --budget checks them.")
            break
        # the tests that carved each member (none without carving: no key is encoded then)
        made_by = ({id(kept): carved.get(sequence_key(kept.statements)) for kept, _ in group}
                   if carved else {})
        group.sort(key=lambda member: (outside_declared_types(member[0].statements, operations,
                                                              classes) is not None,
                                       made_by.get(id(member[0])) is None,
                                       statement_of(member[1].key), repr(member[0].statements)))
        for index, members in enumerate(_by_outcome(group)):
            if index and deadline.confirmation_over(bool(findings)):
                break
            known = len(findings)
            _confirm_group(members, made_by, check, locate, policy, scope, confirmation, findings)
            if len(findings) > known:
                on_progress(len(findings))
    confirmation.findings = list(findings.values())
    if confirmation.dropped:
        confirmation.notes.append(_dropped_note(confirmation.dropped))
    return confirmation


Member = tuple[KeptSequence, Mismatch]


def _confirm_group(members: list[Member], made_by: Mapping[int, frozenset[str] | None],
                   check: DifferenceCheck, locate: Locator, policy: FloatPolicy, scope: Scope,
                   confirmation: Confirmation, findings: dict[tuple, Finding]) -> None:
    """Confirm one group's best representatives in turn (`members`, best first) until one shows the
    difference again: a finding, or one more with the same identity; else the group is dropped."""
    carved_by = frozenset().union(*(tests for kept, _ in members if (tests := made_by.get(id(kept)))))
    failures = []
    tries = [(kept, mismatch, False) for kept, mismatch in members[:REPRESENTATIVES]]
    tries.append((*members[0], True))  # alone it did not show: after what ran before it in replay
    for kept, mismatch, with_history in tries:
        if with_history and ("values" in failures or not kept.history()):
            continue
        finding = _confirm_one(kept, mismatch, check, locate, policy, with_history)
        if isinstance(finding, str):
            failures.append(finding)
            continue
        if scope.ignores(finding.shown.target):
            confirmation.ignored += len(members)
            return
        finding.carved = made_by.get(id(kept)) is not None
        if finding.identity in findings:
            findings[finding.identity].count += len(members)
            findings[finding.identity].carved_by |= carved_by
        else:
            finding.count, finding.carved_by = len(members), carved_by
            findings[finding.identity] = finding
        return
    why = "values" if "values" in failures else "alone"
    confirmation.dropped[why] = confirmation.dropped.get(why, 0) + 1


def _by_outcome(members: list[Member]) -> list[list[Member]]:
    """A group's members apart by what each side did (`Mismatch.outcomes`), in the order found, at
    most MAX_OUTCOMES parts (the members of the others count with the first): an intended change
    and a regression in one function often raise the same exception class from two places, on two
    kinds of input, and one representative would show only one of them."""
    parts: dict[tuple, list[Member]] = {}
    for member in members:
        parts.setdefault(member[1].outcomes, []).append(member)
    found = list(parts.values())
    for rest in found[MAX_OUTCOMES:]:
        found[0].extend(rest)
    return found[:MAX_OUTCOMES]


def _dropped_note(dropped: dict[str, int]) -> str:
    """Candidates that did not confirm are said, with why, never dropped without a word."""
    reasons = {"alone": "showed no difference when run again in fresh processes, alone or after the "
                        "sequences that ran before them (timing, or state left by sequences that raised)",
               "values": "showed other values when run again (nondeterministic)"}
    parts = [f"{count} {reasons[why]}" for why, count in sorted(dropped.items())]
    total = sum(dropped.values())
    return (f"{total} group(s) of candidate differences seen while exploring did not confirm and are not "
            f"reported: {'; '.join(parts)}.")


def _confirm_one(kept: KeptSequence, mismatch: Mismatch, check: DifferenceCheck, locate: Locator,
                 policy: FloatPolicy, with_history: bool = False) -> Finding | str:
    """The mismatch again, alone in fresh processes on both commits (`with_history`: as one
    sequence after the ones that ran before it in its replay round, which may have left the state
    it needs); if it does not reproduce, why: "alone" (no difference there) or "values" (other
    values: nondeterministic or merely slow)."""
    path = observed_path(mismatch.key)
    alone = Case.of(kept.statements, mismatch.key)
    history = _bounded(kept.history()) if with_history else []
    case = alone.after(history)
    shown = check.observe(case, path, lines=True)
    if shown is None:
        return "alone"
    if not (reproduces(shown.mismatch.base, mismatch.base, policy)
            and reproduces(shown.mismatch.head, mismatch.head, policy)):
        return "values"
    if history:
        case, shown = _shortest_history(alone, history, path, check, policy, (case, shown))
    return Finding(case, shown, locate(case.target, shown))


def _bounded(history: list[CallSequence]) -> list[CallSequence]:
    """The nearest earlier sequences, at most MAX_HISTORY statements in all."""
    kept: list[CallSequence] = []
    size = 0
    for statements in reversed(history):
        size += len(statements)
        if size > MAX_HISTORY:
            break
        kept.insert(0, statements)
    return kept


def _shortest_history(alone: Case, history: list[CallSequence], path: str, check: DifferenceCheck,
                      policy: FloatPolicy, found: tuple[Case, Shown]) -> tuple[Case, Shown]:
    """The fewest nearest earlier sequences the difference still shows after (a binary search, a
    handful of runs), so that minimization starts from a short case rather than the whole round."""
    wanted = found[1].mismatch
    low, high = 1, len(history)  # `high` nearest sequences are known to be enough
    while low < high:
        middle = (low + high) // 2
        case = alone.after(history[-middle:])
        shown = check.observe(case, path, lines=True)
        if shown is not None and reproduces(shown.mismatch.base, wanted.base, policy) \
                and reproduces(shown.mismatch.head, wanted.head, policy):
            high, found = middle, (case, shown)
        else:
            low = middle + 1
    return found


def relative(file: str, checkout: Checkout) -> str:
    """`file` relative to the checkout's root, when it is inside it."""
    try:
        return Path(file).resolve().relative_to(checkout.root.resolve()).as_posix()
    except ValueError:
        return file
