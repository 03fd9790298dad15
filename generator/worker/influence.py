"""The facts the host's dynamic influence check needs (JTestCraft §4.4.1). Standard library only.

For a candidate built by the host's Candidate Sequence Search, the worker records, for each of
the candidate's calls on the receiver and for the method under test (the last statement):
which fields of the receiver the call *wrote* (its instance dictionary compared before and
after, two levels deep, so `self.items.append(x)` and `self.timer.start()` count), and which
it *read* on that same object (a recording `__getattribute__` set on the receiver's class for
the duration of the call only). The host decides from these facts which calls influenced the
method under test. Nothing is recorded for sequences the host did not ask about, so ordinary
sequences pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any

MARK_ITEMS = 64  # items of a container looked at when telling whether a call changed it
MARK_DEPTH = 2  # levels below a field: the field's object and its own fields
_ABSENT = object()
_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None))


class InfluenceRecorder:
    """Reads and writes on one receiver, per traced statement, for one sequence run."""

    def __init__(self, spec: dict) -> None:
        """`spec`: {"receiver": index of the statement whose value is the receiver,
        "calls": indexes of the candidate's calls}; the last statement is always traced. A receiver
        of -1 (the method under test is a function) traces nothing: only returned values count."""
        self.receiver_index: int = spec["receiver"]
        self.traced = set(spec["calls"])
        self.reads: dict[int, set[str]] = {}
        self.writes: dict[int, list[str]] = {}
        self.untraceable = False  # the receiver's class refuses a recording __getattribute__

    def around(self, index: int, last: int, values: list, call: Callable[[], Any]) -> Any:
        """Run `call` (statement `index`), recording its reads and writes when it is traced."""
        if index == self.receiver_index and index in self.traced:  # a constructor: it defines every field
            value = call()
            self.writes[index] = sorted(_fields(value) or ())
            return value
        if (index not in self.traced and index != last) or not 0 <= self.receiver_index < len(values):
            return call()
        receiver = values[self.receiver_index]
        before = _fields(receiver)
        if before is None:
            self.untraceable = True
            return call()
        marks = {name: _mark(value, MARK_DEPTH) for name, value in before.items()}
        reads: set[str] = set()
        self.reads[index] = reads
        restore = _record_reads(type(receiver), receiver, reads)
        if restore is None:
            self.untraceable = True
        try:
            return call()
        finally:
            if restore is not None:
                restore()
            after = _fields(receiver) or {}
            self.writes[index] = sorted(
                name for name in set(before) | set(after)
                if name not in before or name not in after or _mark(after[name], MARK_DEPTH) != marks[name])
            del before  # held until now so that no id in `marks` could be reused by a new object

    def record(self) -> dict | None:
        """The facts, as the result record carries them; None when the receiver could not be traced."""
        if self.untraceable:
            return None
        return {"reads": {str(i): sorted(names) for i, names in self.reads.items()},
                "writes": {str(i): names for i, names in self.writes.items()}}


def _fields(obj: Any) -> dict[str, Any] | None:
    """A copy of the instance dictionary (its values kept alive); None for an object without one."""
    try:
        fields = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return dict(fields) if isinstance(fields, dict) else None


def _mark(value: Any, depth: int) -> Any:
    """A comparable summary of `value` that changes when the value, or its contents `depth` levels
    down, change. Objects are named by id: the caller keeps them alive while comparing."""
    if isinstance(value, _IMMUTABLE):
        return (type(value), value)
    if depth <= 0:
        return id(value)
    if isinstance(value, (list, tuple)) or type(value).__name__ == "deque":
        return (id(value), len(value), tuple(_mark(item, depth - 1) for item in islice(value, MARK_ITEMS)))
    if isinstance(value, dict):
        return (id(value), len(value), tuple((_mark(k, 0), _mark(v, depth - 1))
                                             for k, v in islice(value.items(), MARK_ITEMS)))
    if isinstance(value, (set, frozenset)):
        return (id(value), len(value), frozenset(map(id, islice(value, MARK_ITEMS))))
    fields = _fields(value)
    if fields is None:
        return id(value)
    return (id(value), tuple((name, _mark(item, depth - 1))
                             for name, item in islice(fields.items(), MARK_ITEMS)))


def _record_reads(cls: type, target: Any, reads: set[str]) -> Callable[[], None] | None:
    """Make `cls` record the attribute names read on `target`; returns what undoes it, or None
    when the class cannot be changed (a built-in or extension type)."""
    inherited = cls.__getattribute__
    own = cls.__dict__.get("__getattribute__", _ABSENT)

    def recording(self: Any, name: str) -> Any:
        if self is target:
            reads.add(name)
        return inherited(self, name)

    try:
        type.__setattr__(cls, "__getattribute__", recording)
    except (TypeError, AttributeError):
        return None

    def restore() -> None:
        if own is _ABSENT:
            type.__delattr__(cls, "__getattribute__")
        else:
            type.__setattr__(cls, "__getattribute__", own)

    return restore
