"""A difference as confirmation and minimization hold it: the case that shows it, what it showed
on both commits, where, and how often."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..oracle.compare import Mismatch
from ..oracle.difference_key import DifferenceKey
from ..oracle.leaves import shape
from ..runtime.sequence import CallSequence, shift
from ..worker.protocol import (
    EXCEPTION_MARK,
    ObservationKey,
    SequenceResult,
    Statement,
    exception_key,
    value_key,
)


@dataclass(frozen=True)
class Case:
    """`statements[-1]` shows the difference; `var` is the observed statement (None: the last one)."""

    statements: tuple[Statement, ...]
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

    def after(self, history: list[CallSequence]) -> Case:
        """This case run after `history` in the same process, as one sequence: the earlier
        sequences' statements first, this case's references moved past them."""
        joined: CallSequence = []
        for statements in [*history, list(self.statements)]:
            start = len(joined)
            joined.extend([shift(statement, start) for statement in statements])
        offset = len(joined) - len(self.statements)
        return Case(tuple(joined), None if self.var is None else self.var + offset)

    @staticmethod
    def of(statements: CallSequence | tuple[Statement, ...], key: str) -> Case:
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
    carved: bool = False  # the case was cut from a sequence carved from the project's tests
    # the tests whose carved sequences showed this difference (any of the group's members)
    carved_by: frozenset[str] = frozenset()

    @property
    def identity(self) -> tuple[DifferenceKey, str | None, int | None, tuple]:
        """Findings with the same key and outcomes in the same changed hunk are one."""
        return self.shown.key, self.location.path, self.location.hunk, self.shown.mismatch.outcomes
