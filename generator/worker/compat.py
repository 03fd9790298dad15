"""What differs between the interpreters the worker runs under: the project's, Python 3.9 and later.

The host needs 3.11, but the worker runs under whatever interpreter the project uses, and many
projects still test on 3.9 and 3.10. Everything the worker takes from a newer standard library is
named here once, with what stands in for it on an older one; `vermin` (in CI) checks that nothing
else in the worker needs more than 3.9 (`boot.OLDEST`, which refuses older ones). Standard library only.
"""

from __future__ import annotations

import enum
import functools
import importlib.machinery
import os
import sys
import sysconfig
import types
import typing
from typing import Any

# `int | None` evaluated: types.UnionType from 3.10 on; before, only typing.Union exists
_UNION_TYPE: tuple[type, ...] = (types.UnionType,) if hasattr(types, "UnionType") else ()  # novm
UNION_ORIGINS: tuple[Any, ...] = (typing.Union, *_UNION_TYPE)
# `X | Y` of classes, as isinstance targets and aliases (3.10+), beside `list[int]` (3.9+)
ALIAS_TYPES: tuple[type, ...] = (types.GenericAlias, *_UNION_TYPE)


def typing_forms(*names: str) -> tuple[Any, ...]:
    """The special forms of `typing` this interpreter has, of those named (`Never` and `Self`
    arrived in 3.11): an annotation can only use the ones that exist."""
    return tuple(getattr(typing, name) for name in names if hasattr(typing, name))


def is_typeddict(value: Any) -> bool:
    """Whether `value` is a TypedDict class (typing's or typing_extensions'): `typing.is_typeddict`
    from 3.10 on, which before is told by the attributes every TypedDict class has."""
    if not isinstance(value, type):
        return False
    if hasattr(typing, "is_typeddict") and typing.is_typeddict(value):  # novm
        return True
    return issubclass(value, dict) and hasattr(value, "__required_keys__") and hasattr(value, "__total__")


def is_new_type(value: Any) -> bool:
    """Whether `value` is a `typing.NewType`: an instance of that class from 3.10 on; before, a
    function with the `__supertype__` NewType gives it."""
    if isinstance(typing.NewType, type):
        return isinstance(value, typing.NewType)
    return callable(value) and hasattr(value, "__supertype__") and hasattr(value, "__qualname__")


if sys.version_info >= (3, 11):
    StrEnum = enum.StrEnum  # novm
else:
    class StrEnum(str, enum.Enum):
        """enum.StrEnum of 3.11: members are their values, as text and when formatted."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return format(str(self.value), spec)


@functools.cache
def is_standard_module(name: str) -> bool:
    """Whether the top-level module `name` is the standard library's: `sys.stdlib_module_names`
    from 3.10 on; before, a built-in module or one found in the interpreter's own library folder
    (not in its site-packages, a subfolder), looked up without importing it."""
    names = getattr(sys, "stdlib_module_names", None)
    if names is not None:
        return name in names
    if name in sys.builtin_module_names:
        return True
    paths = sysconfig.get_paths()
    library = [os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths]
    folders = [os.path.join(folder, part) for folder in library for part in ("", "lib-dynload")]
    return importlib.machinery.PathFinder.find_spec(name, folders) is not None  # not site-packages
