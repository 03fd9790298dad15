"""Comparing observations: masking what varies on base, finding what differs on head.

Observations are flat dicts from key to leaf (the worker's observer writes them; `leaves` says
when two are equal). A key whose value differs between two base runs (other process, other hash
seed, other random seed) is *masked*: never compared, never asserted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..report.model import DifferenceKind
from ..worker.protocol import (
    EXCEPTION_MARK,
    Leaf,
    ObservationKey,
    SequenceResult,
    Tag,
    exception_key,
    statement_of,
)
from .leaves import EXACT_ENOUGH, FloatPolicy, leaves_equal, outcome


def unstable_keys(first: dict, second: dict, policy: FloatPolicy = EXACT_ENOUGH) -> set[str]:
    """Keys whose leaves differ between two runs of the same sequence on the same commit."""
    if first == second:  # the common case, at C speed: only the observers found impure vary
        return {k for k, leaf in first.items() if leaf[0] == Tag.UNSTABLE}
    keys = first.keys() | second.keys()
    found = {k for k in keys if not leaves_equal(first.get(k), second.get(k), policy)}
    found |= {k for k in keys if (first.get(k) or second.get(k) or [""])[0] == Tag.UNSTABLE}
    return found


def _order(key: str) -> tuple[int, int, str]:
    parsed = ObservationKey.parse(key)
    if parsed.is_exception:
        return parsed.statement, 0, ""
    return parsed.statement, 1 if parsed.observes_result else 2, key


@dataclass(frozen=True)
class Mismatch:
    key: str
    base: Leaf | None
    head: Leaf | None
    # the exception the key's statement raised on both sides, when the key observes what that
    # failed call left behind (the state of its receiver): the rendered test expects it first
    raised: Leaf | None = None

    @property
    def outcomes(self) -> tuple[tuple, tuple]:
        """What each side did, without the values it quoted (see `leaves.outcome`); a name missing or
        a call refused on one side is one outcome, whatever the other side did with each input."""
        if any(leaf is not None and leaf[0] == Tag.API for leaf in (self.base, self.head)):
            return (), ()
        return outcome(self.base), outcome(self.head)


def raised_before(key: str, base: dict, head: dict) -> Leaf | None:
    """The exception both sides' statement of `key` raised, if it raised (see `Mismatch.raised`)."""
    parsed = ObservationKey.parse(key)
    if parsed.is_exception:
        return None
    mark = exception_key(parsed.statement)
    leaf = base.get(mark)
    return leaf if leaf is not None and leaf[0] == Tag.RAISED and leaves_equal(leaf, head.get(mark)) else None


def first_mismatch(base: SequenceResult, head: SequenceResult, masked: set[str],
                   policy: FloatPolicy = EXACT_ENOUGH) -> Mismatch | None:
    """The earliest key (statement order; exception, then result, then state) that differs.

    A side that lost its observations (the process crashed or hung) only has its `!` key:
    the comparison then starts at the statement where it stopped.
    """
    base_obs, head_obs = base.observations, head.observations
    if base_obs == head_obs:  # the common case, at C speed (equal leaves are equal by any policy)
        return None
    start = 0
    for side in (base, head):
        if side.lost:
            start = max(start, side.executed)
    keys = [k for k in base_obs.keys() | head_obs.keys() if k not in masked and statement_of(k) >= start]
    differing = (key for key in sorted(keys, key=_order)
                 if not leaves_equal(base_obs.get(key), head_obs.get(key), policy)
                 and not _stopped_earlier(key, base, head))
    found = next(differing, None)
    if found is None:
        return None
    if _only_reordered(base_obs.get(found), head_obs.get(found)):  # an entry of it that differs, if any
        found = next((key for key in differing if key.startswith(found + "[")), found)
    return Mismatch(found, base_obs.get(found), head_obs.get(found), raised_before(found, base_obs, head_obs))


def _only_reordered(base: Leaf | None, head: Leaf | None) -> bool:
    """Two leaves of a mapping with the same keys in another order: an entry of it that differs
    is the difference to show (`table["filter"]` is 20, not 21), the order only when none does."""
    def keys(leaf: Leaf | None) -> list | None:
        if leaf is None or len(leaf) != 3 or not isinstance(leaf[1], int) or not isinstance(leaf[2], list):
            return None
        return leaf[2]

    before, after = keys(base), keys(head)
    if before is None or after is None or base[0] != head[0] or base[1] != head[1] or before == after:
        return False
    return sorted(map(repr, before)) == sorted(map(repr, after))


def _stopped_earlier(key: str, base: SequenceResult, head: SequenceResult) -> bool:
    """True if a key is missing on one side only because that side stopped at an earlier statement."""
    statement = statement_of(key)
    for side in (base, head):
        stops = [statement_of(k) for k in side.observations if k.endswith("/" + EXCEPTION_MARK)]
        if key not in side.observations and any(stop < statement for stop in stops):
            return True
    return False


def kind_of(mismatch: Mismatch) -> DifferenceKind:
    leaves = [leaf for leaf in (mismatch.base, mismatch.head) if leaf]
    if any(leaf[0] == Tag.API for leaf in leaves):
        return "api"
    key = ObservationKey.parse(mismatch.key)
    if key.is_exception:
        return "exception"
    if key.observes_result:
        # the result itself (its items, len(), str()) is a return; a method or property of it, an observer
        called = any(step.kind in ("call", "property") for step in key.steps)
        return "observer" if called else "return"
    return "observer" if key.through_observer else "state"
