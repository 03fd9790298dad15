"""Tagged JSON form of literal arguments, shared by the host (generation, rendering) and the worker.

A literal is a list whose first item is a tag: ["int", 3], ["float", "nan"], ["str", "a"],
["bytes", "6162"], ["bool", true], ["none"], ["list", [lit, ...]], ["tuple", [...]],
["set", [...]], ["frozenset", [...]], ["dict", [[klit, vlit], ...]], and ["fn", lit]: a
function that accepts any arguments and returns the literal (for callback parameters such
as `timer`), and ["counter", n]: a function returning n, n+1, n+2, ... on successive calls
(a clock that moves). Floats travel as `repr` text so that NaN, infinities and -0.0 survive JSON.
Standard library only: this module runs in the worker.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

PRIMITIVE_TAGS = ("int", "float", "str", "bytes", "bool", "none")
CONTAINER_TAGS = ("list", "tuple", "set", "frozenset", "dict")


def decode(lit: list) -> Any:
    """Build the Python value a literal stands for (a fresh object on every call)."""
    tag = lit[0]
    if tag == "int":
        return int(lit[1])
    if tag == "float":
        return float(lit[1])
    if tag == "str":
        return lit[1]
    if tag == "bytes":
        return bytes.fromhex(lit[1])
    if tag == "bool":
        return bool(lit[1])
    if tag == "none":
        return None
    if tag == "list":
        return [decode(item) for item in lit[1]]
    if tag == "tuple":
        return tuple(decode(item) for item in lit[1])
    if tag == "set":
        return {decode(item) for item in lit[1]}
    if tag == "frozenset":
        return frozenset(decode(item) for item in lit[1])
    if tag == "dict":
        return {decode(k): decode(v) for k, v in lit[1]}
    if tag == "fn":
        return _constant_function(decode(lit[1]))
    if tag == "counter":
        return _counter_function(int(lit[1]))
    raise ValueError(f"unknown literal tag {tag!r}")


# The state (next value) of every counting clock made in this process. Observations rewind
# them: a rendered test observes once, at the end, so each observer the worker runs must see
# the clocks where the statement left them, however often it reads them itself.
_CLOCKS: list[list[int]] = []


@contextlib.contextmanager
def clocks_rewound() -> Iterator[None]:
    """Run the block, then put every counting clock back where it was."""
    saved = [(clock, clock[0]) for clock in _CLOCKS]
    try:
        yield
    finally:
        for clock, value in saved:
            clock[0] = value


def forget_clocks() -> None:
    """Called before each sequence: clocks of earlier sequences are garbage."""
    _CLOCKS.clear()


def _counter_function(start: int) -> Any:
    upcoming = [start]
    _CLOCKS.append(upcoming)

    def counter(*args: Any, **kwargs: Any) -> int:
        value = upcoming[0]
        upcoming[0] += 1
        return value

    return counter


def _constant_function(value: Any) -> Any:
    def constant(*args: Any, **kwargs: Any) -> Any:
        return value

    return constant


def encode(value: Any, depth: int = 3) -> list | None:
    """The literal for `value` if it is a (small, nested) primitive, else None."""
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", value]
    if type(value) is int:
        return ["int", value]
    if type(value) is float:
        return ["float", repr(value)]
    if type(value) is str:
        return ["str", value]
    if type(value) is bytes:
        return ["bytes", value.hex()]
    if depth <= 0:
        return None
    if type(value) in (list, tuple, set, frozenset):
        items = [encode(item, depth - 1) for item in value]
        if any(item is None for item in items):
            return None
        tag = {list: "list", tuple: "tuple", set: "set"}.get(type(value), "frozenset")
        return [tag, items]
    if type(value) is dict:
        pairs = [[encode(k, depth - 1), encode(v, depth - 1)] for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return ["dict", pairs]
    return None


def source(lit: list) -> str:
    """Python source text for a literal (used by the pytest renderer)."""
    tag = lit[0]
    if tag == "float":
        value = float(lit[1])
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if tag in ("int", "str", "bool", "none", "bytes"):
        return repr(decode(lit))
    if tag == "list":
        return "[" + ", ".join(source(item) for item in lit[1]) + "]"
    if tag == "tuple":
        items = [source(item) for item in lit[1]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if tag == "set":
        if not lit[1]:
            return "set()"
        return "{" + ", ".join(source(item) for item in lit[1]) + "}"
    if tag == "frozenset":
        return "frozenset(" + (source(["set", lit[1]]) if lit[1] else "") + ")"
    if tag == "dict":
        return "{" + ", ".join(f"{source(k)}: {source(v)}" for k, v in lit[1]) + "}"
    if tag == "fn":
        return f"lambda *args, **kwargs: {source(lit[1])}"
    if tag == "counter":
        return f"lambda *args, _ticks=itertools.count({int(lit[1])}): next(_ticks)"
    raise ValueError(f"unknown literal tag {tag!r}")
