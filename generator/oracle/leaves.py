"""What a leaf means on the host: when two leaves are equal, how one reads in a report, and its
shape (its kind without its value).

The worker writes leaves (see `Tag` in the worker's protocol for the grammar). Floats are equal
by a `FloatPolicy` (by default a relative tolerance of 1e-9 and an absolute one of 1e-12; a
project can loosen it), NaN equals NaN, and everything else must be equal exactly.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..worker.literals import source as literal_source
from ..worker.protocol import Leaf, Tag

REL_TOL = 1e-9
ABS_TOL = 1e-12


@dataclass(frozen=True)
class FloatPolicy:
    """Two floats are equal when `math.isclose(x, y, rel_tol=rel, abs_tol=abs)`, or both are NaN."""

    rel: float = REL_TOL
    abs: float = ABS_TOL


EXACT_ENOUGH = FloatPolicy()  # the engine's own tolerance

# The classes of the RAISED leaves the worker itself writes when a call never ended (a project's
# exception has a module too).
HANGS = frozenset({"Timeout", "Hang"})
LOST = HANGS | {"Crash"}


def leaves_equal(a: Leaf | None, b: Leaf | None, policy: FloatPolicy = EXACT_ENOUGH) -> bool:
    if a is None or b is None:
        return a is b
    if a[0] == Tag.RAISED and b[0] == Tag.RAISED:
        return a[:4] == b[:4]  # type, message, module; who raised it (a 5th field) is not behaviour
    if a[0] == Tag.FLOAT and b[0] == Tag.FLOAT:
        x, y = float(a[1]), float(b[1])
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return math.isclose(x, y, rel_tol=policy.rel, abs_tol=policy.abs)
    return a == b


def is_lost(leaf: Leaf | None, kinds: frozenset[str] = LOST) -> bool:
    """A hang, timeout or crash recorded by the worker (by default; `kinds=HANGS` for hangs only)."""
    return leaf is not None and leaf[0] == Tag.RAISED and leaf[1] in kinds and len(leaf) < 4


def is_raised(leaf: Leaf | None) -> bool:
    """The statement raised, or its operation is missing or rejects the call on this commit."""
    return leaf is not None and leaf[0] in (Tag.RAISED, Tag.API)


def reproduces(leaf: Leaf | None, expected: Leaf | None, policy: FloatPolicy = EXACT_ENOUGH) -> bool:
    """`leaf` shows what `expected` did; a hang only has to hang again (its message names the limit)."""
    if is_lost(expected, HANGS):
        return is_lost(leaf, HANGS)
    return leaves_equal(leaf, expected, policy)


def shape(leaf: Leaf | None) -> tuple:
    """A leaf's kind without its value: the tag, plus the type for exceptions, API changes and objects."""
    if leaf is None:
        return ()
    if leaf[0] in (Tag.RAISED, Tag.API, Tag.OBJECT, Tag.ENUM, Tag.STANDARD, Tag.LONG_STANDARD):
        return (leaf[0], leaf[1] if leaf[0] != Tag.ENUM else str(leaf[1]).rsplit(".", 1)[0])
    return (leaf[0],)


# what an exception's message quotes of its input: a quoted text, a repr in angle brackets, a number
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|<[^<>\n]*>|\d+(?:\.\d+)?")


def outcome(leaf: Leaf | None) -> tuple:
    """For a raised exception, its class and what its message says without what it quotes of the
    input (`'int'`, `<class 'x'>`, `3`): two exceptions of one class from two places of a function
    (`tzinfo must be a tzinfo, not type 'int'` and `Cannot parse an argument of type <class
    'Decimal'>`) are two outcomes, one message on many inputs is one. Any other leaf is no outcome
    of its own (`()`): values differ with every input."""
    if leaf is not None and leaf[0] == Tag.RAISED and len(leaf) > 3:
        # twice: a quote inside a repr (`<class 'x'>`) goes first, then the repr around it
        return leaf[1], _QUOTED.sub("_", _QUOTED.sub("_", str(leaf[2])))
    return ()


def leaf_text(leaf: Leaf | None, other: Leaf | None = None) -> str:
    """A short human-readable form of a leaf, for reports and comments."""
    if leaf is None:
        if is_raised(other):
            return "returns normally"
        return "(not present)"
    tag = leaf[0]
    if tag == Tag.NONE:
        return "None"
    if tag in (Tag.INT, Tag.BOOL):
        return repr(leaf[1])
    if tag == Tag.FLOAT:
        return leaf[1]
    if tag == Tag.STR:
        return repr(leaf[1])
    if tag == Tag.BYTES:
        return repr(bytes.fromhex(leaf[1]))
    if tag == Tag.RAISED:
        return f"raises {leaf[1]}: {leaf[2]}" if leaf[2] else f"raises {leaf[1]}"
    if tag == Tag.API:
        return f"API change ({leaf[1]}): {leaf[2]}"
    if tag == Tag.EXCEPTION_VALUE:
        return f"{leaf[1]}({leaf[2]!r})"
    if tag == Tag.UNOBSERVABLE:
        return f"cannot be observed: {leaf_text([Tag.RAISED, *leaf[1:]])}"
    if tag == Tag.OBJECT:
        return f"<{leaf[1]} object>"
    if tag in (Tag.LIST, Tag.TUPLE, Tag.GENERATOR):
        return f"{tag} of {leaf[1]} items"
    if tag == Tag.SET:
        if len(leaf) > 2 and isinstance(leaf[2], list):
            return "{" + ", ".join(map(_item_text, leaf[2])) + "}"
        return f"set of {leaf[1]} items"
    if len(leaf) == 3 and isinstance(leaf[2], list):  # dict and mapping headers
        return f"{tag} with keys [{', '.join(map(_item_text, leaf[2]))}]"
    if tag in (Tag.ENUM, Tag.FUNCTION):
        return leaf[1]
    if tag == Tag.STANDARD:  # a date, a duration, a Decimal: its repr
        return leaf[2]
    if tag == Tag.LONG_STANDARD:
        return f"{leaf[4]}... ({leaf[2]} characters, sha1 {leaf[3]})"
    return " ".join(str(x) for x in leaf)


def describe(leaf: Leaf | None, other: Leaf | None) -> str:
    """The other side's value for a test's comment or assertion message: what `leaf_text` says,
    spelled out for the leaves that are digests or cut short."""
    if leaf is None:
        return leaf_text(leaf, other)
    tag = leaf[0]
    if is_lost(leaf):
        verb = "crashes" if leaf[1] == "Crash" else "hangs"
        return f"{verb} ({leaf[2]})" if leaf[2] else verb
    if tag == Tag.BIG_INT:
        return f"an int of {leaf[1]} bits (hash {leaf[2]})"
    if tag == Tag.LONG_STR:
        start = f" starting {leaf[3]!r}" if len(leaf) > 3 else ""
        return f"a str of {leaf[1]} characters{start} (sha1 {leaf[2]})"
    if tag == Tag.LONG_BYTES:
        return f"{leaf[1]} bytes (sha1 {leaf[2]})"
    if tag == Tag.COMPLEX:
        return leaf[1]
    if tag == Tag.GENERATOR:
        return f"a generator of {leaf[1]} items"
    return leaf_text(leaf, other)


def _item_text(item: list | str) -> str:
    """A dict key or set element: a literal when it has one, else a type name."""
    return literal_source(item) if isinstance(item, list) else f"<{item}>"
