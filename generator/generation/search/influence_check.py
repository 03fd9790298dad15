"""The dynamic influence check (JTestCraft §4.4.1): did each call of a candidate influence the
method under test, in the run that just happened?

A call influenced it when a field it wrote on the receiver was read, by the method under test
or by a later call that itself influenced it, before another call overwrote that field; or
when a later influencing call (or the method under test) was given the value it returned, not
None. This is Table 4.4: `def(a); use(a); use(a)` and `def(a); def(a); use(a)` are redundant
(the middle call changes nothing, the first write is overwritten), `def(a); def(b); use(a,b)`
and `def(a); use(a),def(a); use(a)` are kept. Order within one call does not matter. The facts
come from the worker (the worker's `influence`); the check walks the calls backwards, keeping the
fields still live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...worker.protocol import Statement

NONE_TYPE = "builtins.NoneType"


@dataclass(frozen=True)
class Verdict:
    """`checked`: the facts were there (the method under test ran, the receiver was traced);
    `redundant`: the calls (statement indexes) that influenced nothing; `dead`: those of them
    that wrote fields, none of which was read before being overwritten (a call that wrote
    nothing may write when an earlier call enables it: `raise_level()` before `arm()`)."""

    checked: bool
    redundant: tuple[int, ...] = ()
    dead: tuple[int, ...] = ()


def check_influence(statements: Sequence[Statement], calls: Sequence[int], facts: dict | None,
                    types: Sequence[Sequence[str]]) -> Verdict:
    """Which of `calls` (statement indexes, in order) did not influence the last statement."""
    last = len(statements) - 1
    if facts is None or str(last) not in facts.get("reads", {}):
        return Verdict(False)
    reads = {int(i): set(names) for i, names in facts["reads"].items()}
    writes = {int(i): set(names) for i, names in facts.get("writes", {}).items()}
    live = set(reads[last])
    influencing = {last}
    redundant, dead = [], []
    for index in sorted(calls, reverse=True):
        written = writes.get(index, set())
        used = _value_used(index, statements, influencing) and NONE_TYPE not in (
            types[index][:1] if index < len(types) else ())
        if written & live or used:
            influencing.add(index)
            live = (live - written) | reads.get(index, set())
        else:
            redundant.append(index)
            if written:
                dead.append(index)
    return Verdict(True, tuple(sorted(redundant)), tuple(sorted(dead)))


def _value_used(index: int, statements: Sequence[Statement], by: set[int]) -> bool:
    """Whether a statement of `by` was given statement `index`'s value as an argument."""
    return any(arg.get("ref") == index for later in by
               for arg in (*statements[later]["args"], *statements[later]["kwargs"].values()))
