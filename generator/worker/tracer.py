"""Which changed units a sequence enters, and which changed lines it executes.

A global trace function sees every new frame; it checks the frame's code object against
the changed units' code objects (found by qualified name, so line shifts do not matter) and
returns a line tracer only for frames of changed units, so unchanged code runs at almost
full speed. A sequence that never enters a changed unit cannot behave differently on the
other commit, which is what lets the host replay only the sequences that matter.
Standard library only.
"""

from __future__ import annotations

import inspect
import sys
from types import CodeType, FrameType
from typing import Any


class ChangeTracer:
    def __init__(self, codes: set[CodeType], lines: dict[str, list[int]]) -> None:
        """`codes`: code objects of the changed units; `lines`: file -> changed lines."""
        self._codes = codes
        self._lines = {path: frozenset(found) for path, found in lines.items()}
        self.hit = False
        self.statement = 0
        self.record_lines = False
        self.covered: set[tuple[int, str, int]] = set()  # (statement, file, line)

    def start(self) -> None:
        if self._codes:
            sys.settrace(self._on_call)

    def stop(self) -> None:
        sys.settrace(None)

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        inside = code in self._codes
        if not inside:
            return None
        self.hit = True
        if not self.record_lines:
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


def unit_codes(units: list[list[str]]) -> set[CodeType]:
    """Code objects (nested ones included) of the (module, qualname) units that exist here."""
    codes: set[CodeType] = set()
    for module_name, qualname in units:
        module = sys.modules.get(module_name)
        owner: Any = module
        for part in qualname.split(".")[:-1]:
            owner = getattr(owner, part, None)
        raw = getattr(owner, "__dict__", {}).get(qualname.split(".")[-1]) if owner is not None else None
        for func in _functions_of(raw):
            _collect(getattr(inspect.unwrap(func), "__code__", None), codes)
    return codes


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
