"""A behavioural difference as it moves through the stages: from a mismatch in a replayed
sequence, to a confirmed finding with a location, to a minimized case.

`DifferenceKey` is the one definition of "the same difference": its kind, the code that ran,
and what was observed (the exception, or a path from the statement's result or from an
object it was given). Exploration groups its candidates by it (the target is then the
operation the statement calls; a confirming run names the function that actually ran);
confirmation merges findings with the same key in the same changed hunk; minimization
accepts a smaller case only if it shows the same key, with values of the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .compare import Mismatch, kind_of
from .model import Difference, DifferenceKind
from .pools import shift
from .worker.protocol import EXCEPTION_MARK, Leaf, ObservationKey, SequenceResult, exception_key, value_key

RESULT, ARGUMENT = "result", "argument"  # the roles an observed value can have in its statement


@dataclass(frozen=True)
class DifferenceKey:
    kind: DifferenceKind
    target: str  # "pkg.mod:Qual.name": the operation called, or (once confirmed) the function that ran
    observation: str  # "!", or the role and the path: "result@len", "argument.size"

    @staticmethod
    def of(mismatch: Mismatch, target: str) -> DifferenceKey:
        return DifferenceKey(kind_of(mismatch), target, ObservationKey.parse(mismatch.key).observation)

    @property
    def path(self) -> str:
        """The observation without its role ("!" for the exception): the key's steps."""
        return self.observation.removeprefix(RESULT).removeprefix(ARGUMENT)


@dataclass(frozen=True)
class Case:
    """`statements[-1]` shows the difference; `var` is the observed statement (None: the last one)."""

    statements: tuple[dict, ...]
    var: int | None = None

    @property
    def target(self) -> int:
        return len(self.statements) - 1

    def protected(self) -> set[int]:
        return {self.target} if self.var is None else {self.target, self.var}

    def key(self, path: str) -> str:
        """The observation key of `path` ("!" or steps) for this case's differing statement."""
        if path == EXCEPTION_MARK:
            return exception_key(self.target)
        return value_key(self.target, self.target if self.var is None else self.var) + path

    def after(self, history: list[list[dict]]) -> Case:
        """This case run after `history` in the same process, as one sequence: the earlier
        sequences' statements first, this case's references moved past them."""
        joined: list[dict] = []
        for statements in [*history, list(self.statements)]:
            start = len(joined)
            joined.extend([shift(statement, start) for statement in statements])
        offset = len(joined) - len(self.statements)
        return Case(tuple(joined), None if self.var is None else self.var + offset)

    @staticmethod
    def of(statements: list[dict] | tuple[dict, ...], key: str) -> Case:
        """The case a mismatch key describes: statements up to the differing one, and the observed value."""
        parsed = ObservationKey.parse(key)
        var = parsed.variable if parsed.variable is not None and not parsed.observes_result else None
        return Case(tuple(statements[: parsed.statement + 1]), var)


@dataclass(frozen=True)
class Shown:
    """A difference a case showed on both commits: the mismatch at its key, the function that ran."""

    mismatch: Mismatch
    target: str
    base: SequenceResult
    head: SequenceResult

    @property
    def key(self) -> DifferenceKey:
        return DifferenceKey.of(self.mismatch, self.target)

    @property
    def shapes(self) -> tuple[tuple, tuple]:
        return shape(self.mismatch.base), shape(self.mismatch.head)


def observed_path(key: str) -> str:
    """What a key observes, without its statement and variable numbers: "!" or the steps."""
    parsed = ObservationKey.parse(key)
    return EXCEPTION_MARK if parsed.is_exception else parsed.path


def shape(leaf: Leaf | None) -> tuple:
    """A leaf's kind without its value: the tag, plus the type for exceptions, API changes and objects."""
    if leaf is None:
        return ()
    if leaf[0] in ("E", "API", "T", "enum", "v", "v~"):
        return (leaf[0], leaf[1] if leaf[0] != "enum" else str(leaf[1]).rsplit(".", 1)[0])
    return (leaf[0],)


class Location(NamedTuple):
    """Where a difference happens: a line of `path` on `side` ("head" or "base"), and its diff hunk."""

    path: str | None = None
    line: int | None = None
    side: str | None = None
    hunk: int | None = None


@dataclass
class Finding:
    """A confirmed difference: the case that shows it (minimized in place), where, and how often."""

    case: Case
    shown: Shown
    location: Location
    count: int = 1  # candidate sequences that showed it
    minimized: bool = True  # False when minimization stopped at its bound

    @property
    def identity(self) -> tuple[DifferenceKey, str | None, int | None]:
        """Findings with the same key in the same changed hunk are one."""
        return self.shown.key, self.location.path, self.location.hunk


def merge_repeats(differences: list[Difference]) -> tuple[list[Difference], list[str]]:
    """One difference for each changed line, kind and pair of values: the others, found through
    other entry points (the callers of a changed private helper all show its new message), merge
    into the first, which counts their sequences. A note names the entry points merged away."""
    kept: dict[tuple, Difference] = {}
    merged: dict[str, list[str]] = {}
    for difference in differences:
        if difference.path is None or difference.line is None:
            kept[(id(difference),)] = difference
            continue
        same = (difference.path, difference.line, difference.side, difference.kind, difference.severity,
                difference.base, difference.head)
        first = kept.setdefault(same, difference)
        if first is not difference:
            first.count += difference.count
            merged.setdefault(first.target, []).append(difference.target)
    notes = [f"{len(others)} more entry point(s) showed the same difference as {target} at the same "
             f"line and were merged into it: {', '.join(sorted(set(others))[:5])}"
             + (", ..." if len(set(others)) > 5 else "") for target, others in merged.items()]
    return list(kept.values()), notes
