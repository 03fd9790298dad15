"""Running a case on both commits in fresh processes and deciding whether it shows a difference.

Confirmation and minimization both need the same question answered for many sequences:
"run this on base and on head, each sequence in its own forked process; does the statement
under test still behave differently, in the same way?" The same way means: the same
observation (exception, result, or the same attribute/observer path of the same variable),
the same kind, the same function executed (the callee), and leaves of the same shape on
each side (an exception of the same type, a value of the same type). The values themselves
may change, since minimization changes the inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .compare import Mismatch, kind_of, leaves_equal
from .executor import Worker
from .minimize import Case
from .worker.protocol import EXCEPTION_MARK, ObservationKey, SequenceResult, exception_key, value_key

CHECK_RANDOM_SEED = 1  # the replay seed: confirmation reruns what replay saw


@dataclass(frozen=True)
class Shown:
    """A difference a case showed: the mismatch at its key, the callee, and both runs."""

    mismatch: Mismatch
    target: str
    base: SequenceResult
    head: SequenceResult


@dataclass(frozen=True)
class Signature:
    """What must stay the same for a smaller case to show "the same" difference."""

    kind: str
    suffix: str  # "!" for the exception key, else the key without statement and variable
    target: str
    base_shape: tuple
    head_shape: tuple

    @staticmethod
    def of(shown: Shown) -> Signature:
        return Signature(kind_of(shown.mismatch), key_suffix(shown.mismatch.key), shown.target,
                         shape(shown.mismatch.base), shape(shown.mismatch.head))


def key_suffix(key: str) -> str:
    parsed = ObservationKey.parse(key)
    return EXCEPTION_MARK if parsed.is_exception else parsed.path


def case_key(case: Case, suffix: str) -> str:
    """The observation key of `suffix` for the case's differing statement and observed variable."""
    if suffix == EXCEPTION_MARK:
        return exception_key(case.target)
    var = case.target if case.var is None else case.var
    return value_key(case.target, var) + suffix


def case_from_key(statements: Sequence[dict], key: str) -> Case:
    """The case a mismatch key describes: statements up to the differing one, and the observed variable."""
    parsed = ObservationKey.parse(key)
    var = parsed.variable if parsed.variable is not None and not parsed.observes_result else None
    return Case(tuple(statements[: parsed.statement + 1]), var)


def shape(leaf: list | None) -> tuple:
    """A leaf's kind without its value: the tag, plus the type for exceptions, API changes and objects."""
    if leaf is None:
        return ()
    if leaf[0] in ("E", "API", "T", "enum"):
        return (leaf[0], leaf[1] if leaf[0] != "enum" else str(leaf[1]).rsplit(".", 1)[0])
    return (leaf[0],)


class DifferenceCheck:
    """Runs cases on a base and a head worker at once, each sequence in a fresh fork."""

    def __init__(self, base: Worker, head: Worker) -> None:
        self.base, self.head = base, head
        self._pool = ThreadPoolExecutor(2)

    def run(self, cases: Sequence[Case], lines: bool = False) -> list[tuple[SequenceResult, SequenceResult]]:
        batch = [list(c.statements) for c in cases]
        options = {"isolate": True, "callees": True, "lines": lines}
        base = self._pool.submit(self.base.run, batch, CHECK_RANDOM_SEED, **options)
        head = self._pool.submit(self.head.run, batch, CHECK_RANDOM_SEED, **options)
        return list(zip(base.result(), head.result(), strict=True))

    def observe(self, case: Case, suffix: str, lines: bool = False) -> Shown | None:
        """What the case shows at its key, or None if base and head agree there."""
        return _shown(case, suffix, *self.run([case], lines)[0])

    def same(self, cases: Sequence[Case], signature: Signature) -> list[Shown | None]:
        """For each case, what it shows if that is the same difference as `signature`, else None."""
        shown = [_shown(case, signature.suffix, base, head) for case, (base, head) in zip(
            cases, self.run(cases), strict=True)]
        return [s if s is not None and Signature.of(s) == signature else None for s in shown]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _shown(case: Case, suffix: str, base: SequenceResult, head: SequenceResult) -> Shown | None:
    key = case_key(case, suffix)
    base_leaf, head_leaf = base.observations.get(key), head.observations.get(key)
    if leaves_equal(base_leaf, head_leaf):
        return None
    callees = base.callees or head.callees
    target = callees[case.target] if case.target < len(callees) else case.statements[-1]["op"]
    return Shown(Mismatch(key, base_leaf, head_leaf), target, base, head)
