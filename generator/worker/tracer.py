"""Which changed units a sequence enters, and which changed lines it executes.

Entering a changed unit is detected by thin wrappers installed around the changed
functions (found by qualified name, so line shifts do not matter): a trace function would
put CPython 3.11 in tracing mode and halve the speed of everything. A sequence that never
enters a changed unit cannot behave differently on the other commit, which is what lets
the host replay only the sequences that matter.

Changed *lines* (coverage, and where a difference happens) need a trace function; it is
switched on only for runs that ask for lines, and returns a line tracer only for frames of
changed units. Standard library only.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any


class ChangeTracer:
    def __init__(self, lines: dict[str, list[int]]) -> None:
        """`lines`: file -> changed lines; the units' code objects come with the wrappers."""
        self._codes: set[CodeType] = set()
        self._lines = {path: frozenset(found) for path, found in lines.items()}
        self.hit = False
        self.statement = 0
        self.record_lines = False
        self.covered: set[tuple[int, str, int]] = set()  # (statement, file, line)

    def start(self) -> None:
        if self._codes and self.record_lines:
            sys.settrace(self._on_call)

    def during_import(self, load: Callable[[], Any]) -> tuple[Any, set[tuple[str, int]]]:
        """Run `load` (the imports) with every changed line of the changed files traced.

        Module bodies, class bodies and functions they call (tables filled at import) run
        only here, before any sequence; their changed lines are covered by the import.
        """
        covered: set[tuple[str, int]] = set()

        def on_call(frame: FrameType, event: str, arg: Any) -> Any:
            path = frame.f_code.co_filename
            lines = self._lines.get(path)
            if lines is None:
                return None

            def on_line(frame: FrameType, event: str, arg: Any) -> Any:
                if event == "line" and frame.f_lineno in lines:
                    covered.add((path, frame.f_lineno))
                return on_line

            return on_line

        sys.settrace(on_call)
        try:
            result = load()
        finally:
            sys.settrace(None)
        return result, covered

    def watch(self, codes: set[CodeType]) -> None:
        self._codes = codes

    def stop(self) -> None:
        sys.settrace(None)

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code not in self._codes:
            return None
        lines = self._lines.get(code.co_filename)
        if lines is None:
            return None
        self._note_line(code.co_filename, lines, frame.f_lineno)

        def on_line(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                self._note_line(code.co_filename, lines, frame.f_lineno)
            return on_line

        return on_line

    def _note_line(self, path: str, lines: frozenset[int], line: int) -> None:
        if line in lines:
            self.covered.add((self.statement, path, line))


def install_hit_wrappers(units: list[list[str]], tracer: ChangeTracer) -> tuple[set[CodeType], list[str]]:
    """Wrap each changed unit that exists here so that calling it sets `tracer.hit`.

    Returns the units' code objects (nested ones included, for line tracing) and the
    units that could not be wrapped (the host then replays every sequence).
    """
    codes: set[CodeType] = set()
    unwrapped: list[str] = []
    for module_name, qualname in units:
        owner, name = _owner(module_name, qualname)
        raw = vars(owner).get(name) if owner is not None else None
        if raw is None:
            continue
        wrapped = _wrap_member(raw, tracer)
        if wrapped is None:
            unwrapped.append(f"{module_name}:{qualname}")
            continue
        for func in _functions_of(raw):
            _collect(getattr(inspect.unwrap(func), "__code__", None), codes)
        setattr(owner, name, wrapped)
        if isinstance(raw, types.FunctionType):
            _replace_aliases(module_name.split(".")[0], raw, wrapped)
    return codes, unwrapped


def _owner(module_name: str, qualname: str) -> tuple[Any, str]:
    owner: Any = sys.modules.get(module_name)
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
    return owner, parts[-1]


def _wrap_function(func: Any, tracer: ChangeTracer) -> Any:
    @functools.wraps(func)
    def entered(*args: Any, **kwargs: Any) -> Any:
        tracer.hit = True
        return func(*args, **kwargs)

    return entered


def _wrap_member(raw: Any, tracer: ChangeTracer) -> Any:
    if isinstance(raw, types.FunctionType):
        return _wrap_function(raw, tracer)
    if isinstance(raw, (staticmethod, classmethod)):
        return type(raw)(_wrap_function(raw.__func__, tracer))
    if isinstance(raw, property):
        wrap = [_wrap_function(f, tracer) if f is not None else None for f in (raw.fget, raw.fset, raw.fdel)]
        return property(*wrap, raw.__doc__)
    return None


def _replace_aliases(package: str, original: Any, wrapped: Any) -> None:
    """Point other project modules' names for `original` (`from .mod import f`) at the wrapper."""
    for name, module in list(sys.modules.items()):
        if module is None or (name != package and not name.startswith(package + ".")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                setattr(module, attribute, wrapped)


def _functions_of(raw: Any) -> list[Any]:
    if isinstance(raw, (staticmethod, classmethod)):
        return [raw.__func__]
    if isinstance(raw, property):
        return [f for f in (raw.fget, raw.fset, raw.fdel) if f is not None]
    return [raw] if callable(raw) else []


def _collect(code: CodeType | None, codes: set[CodeType]) -> None:
    if code is None or code in codes:
        return
    codes.add(code)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            _collect(const, codes)
