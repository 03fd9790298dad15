"""Carving: the calls the project's own tests make into the catalog, recorded as sequences.

Random generation rarely builds the inputs real changes hide behind (a `{:,d}` format spec, an
`"HH:MMSS"` string, an object in the state a test sets up); the project's tests almost always do.
Following Elbaum et al.'s carving of unit tests from system tests (and Pynguin, which seeds its
population from existing tests), the pytest run of `pytest_boot.py` gets a `Recorder` plugin:
before the test modules are imported, every catalog operation is wrapped, and each call a test
makes into one (from the test's own code, not from inside the library) becomes a statement,
when its receiver and arguments can be rebuilt from code: literals (`literals.encode`, plus
dates and durations), or objects an earlier recorded statement of the same test returned. One
test, one sequence; a statement that raised ends a sequence of its own (replay stops at an
exception) and the test's recording goes on without it. Each test's outcome (passed, failed,
skipped) and the operations it called are written too: a test that passes on base and fails on
head is a broken existing test, the strongest sign of a regression. The sequences are plain statements of
the catalog: the engine replays, compares, minimizes and renders them as generated ones, and a
rendered test never needs the project's fixtures or test modules. Standard library only.
"""

from __future__ import annotations

import datetime
import enum
import functools
import importlib
import json
import sys
import threading
import types
from typing import Any

from . import literals
from .introspect import build_catalog
from .protocol import OperationKind

MAX_STATEMENTS = 60  # per test sequence: later calls of literals alone become sequences of their own
MAX_SEQUENCES = 3000  # per run: the explorer's first batches, not its whole budget


class Recorder:
    """A pytest plugin: wrap the catalog's operations at session start, record each test's calls."""

    def __init__(self, modules: list[str], out_path: str) -> None:
        self.modules, self.out_path = modules, out_path
        self.depth = 0
        self.main_thread = threading.get_ident()
        self.test: _TestRecording | None = None
        self.seen: dict[str, set[str]] = {}  # each sequence written, and the tests that made it
        self.counts = {"tests": 0, "sequences": 0}
        self.out = None

    # ---------------------------------------------------------------- pytest hooks

    def pytest_sessionstart(self, session: object) -> None:
        """Before collection, so that `from pkg import f` in a test module binds the wrapper."""
        self.out = open(self.out_path, "w", encoding="utf-8")  # noqa: SIM115 - closed at session end
        catalog = build_catalog(self.modules)
        roots = {name.split(".")[0] for name in self.modules}
        for op in catalog["operations"]:
            if op.get("dispatches") or op["kind"] in (OperationKind.VALUE, OperationKind.EXPORT):
                continue  # `copy.deepcopy`, `operator.__sub__`, a table: nothing of the project's to wrap
            try:
                self._wrap(op["id"], op["kind"], roots)
            except Exception:  # an operation that cannot be wrapped is not recorded, nothing more
                continue

    def pytest_runtest_setup(self, item: Any) -> None:
        self.test = _TestRecording(item.nodeid)  # fixtures build objects in setup: the test records them
        self.counts["tests"] += 1

    def pytest_runtest_logreport(self, report: Any) -> None:
        """A phase's outcome: a test failed if any phase failed, passed if its call passed."""
        if report.failed or report.skipped or report.when == "call":
            self._write({"outcome": [report.nodeid, report.when, report.outcome]})

    def pytest_runtest_teardown(self, item: Any) -> None:
        if self.test is not None:
            self._emit(self.test.statements, self.test.nodeid)
            self._write({"called": [item.nodeid, sorted(self.test.called)]})
        self.test = None
        self._write({"counts": self.counts})  # the counts so far: a run stopped by its time limit keeps them

    def pytest_sessionfinish(self, session: object) -> None:
        if self.out is not None:
            self._write({"counts": self.counts})
            self.out.close()
            self.out = None

    # ---------------------------------------------------------------- wrapping

    def _wrap(self, op_id: str, kind: str, roots: set[str]) -> None:
        module_name, _, qualname = op_id.partition(":")
        module = importlib.import_module(module_name)
        parts = qualname.split(".")
        if kind == OperationKind.FUNCTION:
            original = getattr(module, parts[-1])
            if isinstance(original, types.FunctionType):
                _rebind(original, self._recording(op_id, kind, original), roots)
            return
        owner: Any = module
        for part in parts[:-1]:
            owner = getattr(owner, part)
        if kind == OperationKind.CONSTRUCTOR:  # through its own __init__ (not an enum's lookup or a __new__)
            klass = getattr(owner, parts[-1])
            init = klass.__dict__.get("__init__")
            if isinstance(init, types.FunctionType) and not isinstance(klass, enum.EnumMeta):
                klass.__init__ = self._recording(op_id, kind, init, klass)
            return
        name = parts[-1]
        definer = next((k for k in owner.__mro__ if name in k.__dict__), None)
        if definer is None or definer.__module__.split(".")[0] not in roots:
            return
        static = definer.__dict__[name]
        if kind == OperationKind.METHOD and isinstance(static, types.FunctionType):
            setattr(definer, name, self._recording(op_id, kind, static))
        elif kind == OperationKind.STATIC and isinstance(static, staticmethod):
            setattr(definer, name, staticmethod(self._recording(op_id, kind, static.__func__)))
        elif kind == OperationKind.STATIC and isinstance(static, classmethod):
            inner = static.__func__
            setattr(definer, name, classmethod(self._recording(op_id, "classmethod", inner)))

    def _recording(self, op_id: str, kind: str, function: Any, klass: type | None = None) -> Any:
        recorder = self

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            test = recorder.test
            if test is None or recorder.depth or threading.get_ident() != recorder.main_thread:
                return function(*args, **kwargs)
            test.called.add(op_id)
            recorder.depth += 1
            try:
                statement = test.statement(op_id, kind, args, kwargs, klass)
                # a long test's later calls of literals stand alone (their own sequences): the
                # assertion a pull request appends to a long test is what it means to change
                alone = test.full
                try:
                    value = function(*args, **kwargs)
                except BaseException:
                    if statement is not None:  # replay stops at an exception: a sequence of its own
                        recorder._emit([statement] if alone else [*test.statements, statement], test.nodeid)
                    raise
                if statement is not None and alone:
                    recorder._emit([statement], test.nodeid)
                elif statement is not None:
                    test.add(statement, args[0] if kind == OperationKind.CONSTRUCTOR else value)
                return value
            finally:
                recorder.depth -= 1

        return wrapper

    def _write(self, record: dict) -> None:
        if self.out is not None:
            self.out.write(json.dumps(record) + "\n")
            self.out.flush()

    def _emit(self, statements: list[dict], test: str) -> None:
        """One sequence and the test that made it (a sequence two tests make is written once)."""
        if not statements or self.out is None or self.counts["sequences"] >= MAX_SEQUENCES:
            return
        text = json.dumps(statements)
        made_by = self.seen.get(text)
        if made_by is not None:  # another test that makes it is evidence too (asserting tests)
            if test not in made_by:
                made_by.add(test)
                self._write({"repeat": statements, "test": test})
            return
        self.seen[text] = {test}
        self.counts["sequences"] += 1
        self._write({"sequence": statements, "test": test})


class _TestRecording:
    """One test's statements, and which statement made each object they return (by identity)."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.statements: list[dict] = []
        self.made: dict[int, int] = {}  # id(value) -> index of the statement that returned it
        self.alive: list[Any] = []  # keeps those values alive, so that their ids are not reused
        self.called: set[str] = set()  # the operations the test called, rebuildable or not

    @property
    def full(self) -> bool:
        """The test's sequence is at its length: a later call is recorded only when it stands alone."""
        return len(self.statements) >= MAX_STATEMENTS

    def statement(self, op_id: str, kind: str, args: tuple, kwargs: dict, klass: type | None) -> dict | None:
        """The call as a statement, or None when an argument cannot be rebuilt from code (or, once the
        sequence is full, from literals alone)."""
        if kind == OperationKind.CONSTRUCTOR:
            if klass is None or not args or type(args[0]) is not klass:
                return None  # a subclass's construction through super().__init__
            args = args[1:]
        elif kind == "classmethod":
            args = args[1:]  # the class: the operation names it
        encoded = [self._argument(arg) for arg in args]
        named = {name: self._argument(value) for name, value in kwargs.items()}
        arguments = [*encoded, *named.values()]
        if any(arg is None or (self.full and "ref" in arg) for arg in arguments):
            return None
        return {"op": op_id, "args": encoded, "kwargs": named}

    def add(self, statement: dict, value: Any) -> None:
        self.made.setdefault(id(value), len(self.statements))
        self.alive.append(value)
        self.statements.append(statement)

    def _argument(self, value: Any) -> dict | None:
        literal = _literal(value)
        if literal is not None:
            return {"lit": literal}
        index = self.made.get(id(value))
        return None if index is None else {"ref": index}


def _literal(value: Any) -> list | None:
    """A literal for `value`: the generator's kinds, and naive dates, times and durations."""
    literal = literals.encode(value)
    if literal is not None:
        return literal
    if type(value) is datetime.datetime and value.tzinfo is None:
        return ["datetime", value.isoformat()]
    if type(value) is datetime.date:
        return ["date", value.isoformat()]
    if type(value) is datetime.timedelta:
        literal = ["timedelta", repr(value.total_seconds())]
        return literal if literals.decode(literal) == value else None
    return None


def _rebind(original: types.FunctionType, wrapper: Any, roots: set[str]) -> None:
    """Every binding of `original` in the project's loaded modules (re-exports included) becomes `wrapper`."""
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in roots:
            continue
        namespace = getattr(module, "__dict__", {})
        for attribute, value in list(namespace.items()):
            if value is original:
                namespace[attribute] = wrapper
