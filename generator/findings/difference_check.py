"""Running cases on both commits in fresh processes and telling what difference they show.

Confirmation and minimization both need the same question answered for many sequences:
"run this on base and on head, each sequence in its own forked process; what does the
statement under test do differently?" The answer is a `Shown` (see `difference`): the
mismatch at the case's observation, and the function that actually ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..oracle.compare import Mismatch, raised_before
from ..oracle.difference_key import DifferenceKey
from ..oracle.leaves import FloatPolicy, leaves_equal
from ..runtime.workers import Worker
from ..worker.protocol import SequenceResult
from .cases import Case, Shown

CHECK_RANDOM_SEED = 1  # the replay seed: confirmation reruns what replay saw


class DifferenceCheck:
    """Runs cases on a base and a head worker at once, each sequence in a fresh fork."""

    def __init__(self, base: Worker, head: Worker, policy: FloatPolicy) -> None:
        self.base, self.head, self.policy = base, head, policy
        self._pool = ThreadPoolExecutor(2)

    def run(self, cases: Sequence[Case], lines: bool = False) -> list[tuple[SequenceResult, SequenceResult]]:
        batch = [list(c.statements) for c in cases]
        options = {"isolate": True, "callees": True, "lines": lines}
        base = self._pool.submit(self.base.run, batch, CHECK_RANDOM_SEED, **options)
        head = self._pool.submit(self.head.run, batch, CHECK_RANDOM_SEED, **options)
        return list(zip(base.result(), head.result(), strict=True))

    def observe(self, case: Case, path: str, lines: bool = False) -> Shown | None:
        """What the case shows at its observation `path`, or None if base and head agree there."""
        return self._shown(case, path, *self.run([case], lines)[0])

    def same(self, cases: Sequence[Case], key: DifferenceKey,
             shapes: tuple[tuple, tuple]) -> list[Shown | None]:
        """For each case, what it shows if that is the difference `key` with values of `shapes`, else None."""
        shown = [self._shown(case, key.path, base, head) for case, (base, head) in zip(
            cases, self.run(cases), strict=True)]
        return [s if s is not None and s.key == key and s.shapes == shapes else None for s in shown]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _shown(self, case: Case, path: str, base: SequenceResult, head: SequenceResult) -> Shown | None:
        key = case.key(path)
        base_leaf, head_leaf = base.observations.get(key), head.observations.get(key)
        if leaves_equal(base_leaf, head_leaf, self.policy):
            return None
        op = case.statements[-1]["op"]
        on_base, on_head = _callee(base, case), _callee(head, case)
        # what ran on base; where base dispatched to no function of the project (a `__hash__` it
        # lacks, run through `hash()`), what ran on head
        target = on_base if on_base not in (None, op) else on_head or on_base or op
        raised = raised_before(key, base.observations, head.observations)
        return Shown(Mismatch(key, base_leaf, head_leaf, raised), target, base, head)


def _callee(result: SequenceResult, case: Case) -> str | None:
    """The function the case's last statement ran on this side, when the worker named it."""
    return result.callees[case.target] if case.target < len(result.callees) else None
