"""Comparing observations: masking what varies on base, finding what differs on head.

Observations are flat dicts from key to leaf (see generator.worker.observe). Floats are
equal by a `FloatPolicy` (by default a relative tolerance of 1e-9 and an absolute one of
1e-12; a project can loosen it), NaN equals NaN, and everything else must be equal exactly.
A key whose value differs between two base runs (other process, other hash seed, other
random seed) is *masked*: never compared, never asserted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..report.model import DifferenceKind
from ..worker.literals import source as literal_source
from ..worker.protocol import (
    EXCEPTION_MARK,
    Leaf,
    ObservationKey,
    SequenceResult,
    exception_key,
    statement_of,
)

REL_TOL = 1e-9
ABS_TOL = 1e-12


@dataclass(frozen=True)
class FloatPolicy:
    """Two floats are equal when `math.isclose(x, y, rel_tol=rel, abs_tol=abs)`, or both are NaN."""

    rel: float = REL_TOL
    abs: float = ABS_TOL


EXACT_ENOUGH = FloatPolicy()  # the engine's own tolerance


def leaves_equal(a: Leaf | None, b: Leaf | None, policy: FloatPolicy = EXACT_ENOUGH) -> bool:
    if a is None or b is None:
        return a is b
    if a[0] == "E" and b[0] == "E":
        return a[:4] == b[:4]  # type, message, module; who raised it (a 5th field) is not behaviour
    if a[0] == "f" and b[0] == "f":
        x, y = float(a[1]), float(b[1])
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return math.isclose(x, y, rel_tol=policy.rel, abs_tol=policy.abs)
    return a == b


# Leaves the worker itself writes when a call never ended (a project exception has a module too).
HANGS = frozenset({"Timeout", "Hang"})
LOST = HANGS | {"Crash"}


def is_lost(leaf: list | None, kinds: frozenset[str] = LOST) -> bool:
    """A hang, timeout or crash recorded by the worker (by default; `kinds=HANGS` for hangs only)."""
    return leaf is not None and leaf[0] == "E" and leaf[1] in kinds and len(leaf) < 4


def reproduces(leaf: Leaf | None, expected: Leaf | None, policy: FloatPolicy = EXACT_ENOUGH) -> bool:
    """`leaf` shows what `expected` did; a hang only has to hang again (its message names the limit)."""
    if is_lost(expected, HANGS):
        return is_lost(leaf, HANGS)
    return leaves_equal(leaf, expected, policy)


def unstable_keys(first: dict, second: dict, policy: FloatPolicy = EXACT_ENOUGH) -> set[str]:
    """Keys whose leaves differ between two runs of the same sequence on the same commit."""
    if first == second:  # the common case, at C speed: only the observers found impure vary
        return {k for k, leaf in first.items() if leaf[0] == "unstable"}
    keys = first.keys() | second.keys()
    found = {k for k in keys if not leaves_equal(first.get(k), second.get(k), policy)}
    found |= {k for k in keys if (first.get(k) or second.get(k) or [""])[0] == "unstable"}
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


def raised_before(key: str, base: dict, head: dict) -> Leaf | None:
    """The exception both sides' statement of `key` raised, if it raised (see `Mismatch.raised`)."""
    parsed = ObservationKey.parse(key)
    if parsed.is_exception:
        return None
    mark = exception_key(parsed.statement)
    leaf = base.get(mark)
    return leaf if leaf is not None and leaf[0] == "E" and leaves_equal(leaf, head.get(mark)) else None


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
    for key in sorted(keys, key=_order):
        if not leaves_equal(base_obs.get(key), head_obs.get(key), policy):
            if _stopped_earlier(key, base, head):
                continue
            return Mismatch(key, base_obs.get(key), head_obs.get(key), raised_before(key, base_obs, head_obs))
    return None


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
    if any(leaf[0] == "API" for leaf in leaves):
        return "api"
    key = ObservationKey.parse(mismatch.key)
    if key.is_exception:
        return "exception"
    if key.observes_result:
        # the result itself (its items, len(), str()) is a return; a method or property of it, an observer
        called = any(step.kind in ("call", "property") for step in key.steps)
        return "observer" if called else "return"
    return "observer" if key.through_observer else "state"


def _item_text(item: list | str) -> str:
    """A dict key or set element: a literal when it has one, else a type name."""
    return literal_source(item) if isinstance(item, list) else f"<{item}>"


def leaf_text(leaf: list | None, other: list | None = None) -> str:
    """A short human-readable form of a leaf, for reports and comments."""
    if leaf is None:
        if other is not None and other[0] in ("E", "API"):
            return "returns normally"
        return "(not present)"
    tag = leaf[0]
    if tag == "n":
        return "None"
    if tag in ("i", "t"):
        return repr(leaf[1])
    if tag == "f":
        return leaf[1]
    if tag == "s":
        return repr(leaf[1])
    if tag == "b":
        return repr(bytes.fromhex(leaf[1]))
    if tag == "E":
        return f"raises {leaf[1]}: {leaf[2]}" if leaf[2] else f"raises {leaf[1]}"
    if tag == "API":
        return f"API change ({leaf[1]}): {leaf[2]}"
    if tag == "exc":  # an exception object held as a value
        return f"{leaf[1]}({leaf[2]!r})"
    if tag == "unobservable":  # observing the value raised (see generator.worker.observe)
        return f"cannot be observed: {leaf_text(['E', *leaf[1:]])}"
    if tag == "T":
        return f"<{leaf[1]} object>"
    if tag in ("list", "tuple", "gen"):
        return f"{tag} of {leaf[1]} items"
    if tag == "set":
        if len(leaf) > 2 and isinstance(leaf[2], list):
            return "{" + ", ".join(map(_item_text, leaf[2])) + "}"
        return f"set of {leaf[1]} items"
    if len(leaf) == 3 and isinstance(leaf[2], list):  # dict and mapping headers
        return f"{tag} with keys [{', '.join(map(_item_text, leaf[2]))}]"
    if tag in ("enum", "fn"):
        return leaf[1]
    if tag == "v":  # a standard value (a date, a duration, a Decimal): its repr
        return leaf[2]
    if tag == "v~":
        return f"{leaf[4]}... ({leaf[2]} characters, sha1 {leaf[3]})"
    return " ".join(str(x) for x in leaf)
