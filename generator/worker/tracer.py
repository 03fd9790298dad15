"""Which changed units a sequence enters.

Entering a changed unit is detected by thin wrappers installed around the changed
functions (found by qualified name, so line shifts do not matter): a trace function would
put CPython 3.11 in tracing mode and slow everything down. A sequence that never enters a
changed unit cannot behave differently on the other commit, which is what lets the host
replay only the sequences that matter. Changed *lines* are measured by `probe`, only in
the runs that ask for them. Standard library only.
"""

from __future__ import annotations

import functools
import sys
import types
from typing import Any


class ChangeTracer:
    """Whether the sequence running now has entered a changed unit (set by the wrappers)."""

    def __init__(self) -> None:
        self.hit = False


def install_hit_wrappers(units: list[list[str]], tracer: ChangeTracer) -> list[str]:
    """Wrap each changed unit that exists here so that calling it sets `tracer.hit`.

    Returns the units that could not be wrapped (the host then replays every sequence).
    """
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
        setattr(owner, name, wrapped)
        if isinstance(raw, types.FunctionType):
            _replace_aliases(module_name.split(".")[0], raw, wrapped)
    return unwrapped


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


_ENTERED = _wrap_function(len, ChangeTracer()).__code__  # the code of every hit wrapper


def unwrap_hits(func: Any) -> Any:
    """The function a hit wrapper wraps (`func` itself when it is none): the code a call runs."""
    while getattr(func, "__code__", None) is _ENTERED:
        func = func.__wrapped__
    return func


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
