"""The public attributes of a class that its users set one by one (`configured`).

Users configure objects: `renderer = Renderer(); renderer.width = 40; renderer.fill = "*"`, then
render. A change often sits behind such a setting, which no constructor argument reaches: the
attribute is assigned in `__init__` from a literal, or is a property whose setter validates. The
catalog lists each such attribute as an operation `pkg.mod:Class.attr<set>` (a method whose one
parameter is the value; the resolver assigns it), so generation builds configured objects the way
it builds any call, and GRT's impurity step assigns a few before an object is reused. An attribute
is settable when it is a public property with a setter, a dataclass field of a class that is not
frozen, or a public instance attribute the class's own `__init__` assigns (`self.width = 80`,
`self.width = width`), unless it is assigned from a parameter the `__init__` checks (`if window < 1:
raise ...`): set directly, it would skip the check users cannot skip through the constructor.
Its value's type comes from the setter's parameter, the `__init__`
parameter it is assigned from, or the literal it starts as. Standard library only.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

MAX_SETTABLE = 8  # attributes listed per class: the first by name


@dataclass(frozen=True)
class Settable:
    """One settable attribute: `function` is what the types of its value are read from (a
    property's setter, or the `__init__` whose `parameter` it is), `parameter` the value's."""

    name: str
    function: Any
    parameter: inspect.Parameter


def settable_attributes(klass: type, ours: Any) -> list[Settable]:
    """The public settable attributes of `klass` (at most MAX_SETTABLE); `ours(function)`: whether a
    function is the project's (a property of a standard base is not the project's to configure)."""
    found: dict[str, Settable] = {}
    for name in sorted(dir(klass)):
        if name.startswith("_"):
            continue
        try:
            static = inspect.getattr_static(klass, name)
        except AttributeError:
            continue
        if isinstance(static, property) and static.fset is not None and ours(static.fset):
            value = _setter_parameter(static.fset)
            if value is not None:
                found[name] = Settable(name, static.fset, value)
    for name, (function, parameter) in _initialized(klass, ours).items():
        if name not in found and not _is_behaviour(klass, name):
            found[name] = Settable(name, function, parameter)
    return [found[name] for name in sorted(found)][:MAX_SETTABLE]


def _setter_parameter(fset: Any) -> inspect.Parameter | None:
    """The value parameter of a property's setter (`def width(self, value: int)`)."""
    try:
        parameters = list(inspect.signature(fset).parameters.values())
    except (TypeError, ValueError):
        return None
    return parameters[1].replace(kind=inspect.Parameter.POSITIONAL_ONLY) if len(parameters) == 2 else None


def _is_behaviour(klass: type, name: str) -> bool:
    """Whether a class attribute of that name is a method, property or other descriptor: assigning
    over it replaces behaviour, not a setting."""
    try:
        static = inspect.getattr_static(klass, name)
    except AttributeError:
        return False
    return callable(static) or hasattr(type(static), "__get__")


def _initialized(klass: type, ours: Any) -> dict[str, tuple[Any, inspect.Parameter]]:
    """Name -> (the `__init__`, the value's parameter) of the public attributes a dataclass declares
    as fields, or that the class's own `__init__` (its first in the MRO that is the project's)
    assigns on `self`."""
    if dataclasses.is_dataclass(klass):
        params = getattr(klass, "__dataclass_params__", None)
        if params is not None and params.frozen:
            return {}
        init = klass.__init__
        signature = _signature(init)
        return {field.name: (init, signature[field.name].replace(kind=inspect.Parameter.POSITIONAL_ONLY))
                for field in dataclasses.fields(klass)
                if not field.name.startswith("_") and field.name in signature}
    init = next((k.__dict__["__init__"] for k in klass.__mro__ if "__init__" in k.__dict__), None)
    if init is None or not inspect.isfunction(init) or not ours(init):
        return {}
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return {}
    signature = _signature(init)
    checked = _checked_names(tree)
    found: dict[str, tuple[Any, inspect.Parameter]] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) and node.value is not None else []
        for target in targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and not target.attr.startswith("_")):
                continue
            value = _value_parameter(target.attr, node.value, signature)  # type: ignore[union-attr]
            if value is not None and value.name in checked and value.name in signature:
                continue  # the constructor checks what it takes: set directly, the check is skipped
            if value is not None and target.attr not in found:
                found[target.attr] = (init, value)
    return found


def _checked_names(tree: ast.AST) -> set[str]:
    """The names an `if`, `assert` or `while` condition of the `__init__` reads (`if window < 1:
    raise ...`): parameters it validates."""
    conditions = (ast.If, ast.Assert, ast.While, ast.IfExp)
    tests = [node.test for node in ast.walk(tree) if isinstance(node, conditions)]
    return {node.id for test in tests for node in ast.walk(test) if isinstance(node, ast.Name)}


def _value_parameter(name: str, value: ast.expr, signature: dict[str, inspect.Parameter]
                     ) -> inspect.Parameter | None:
    """The parameter an attribute's values are typed by: the `__init__` parameter it is assigned
    from (or of its name), else one whose default is the literal it starts as; None for neither."""
    source = value.id if isinstance(value, ast.Name) else name
    if source in signature and source != "self":
        return signature[source].replace(kind=inspect.Parameter.POSITIONAL_ONLY)
    try:
        start = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if start is None:
        return None  # nothing says what it takes
    # its type is what it takes (as an annotation: a default of `[]` alone says nothing of a parameter)
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_ONLY, default=start, annotation=type(start))


def _signature(function: Any) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return {}
