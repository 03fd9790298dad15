"""Keyword options: the keys a function reads from its `**kwargs`, and the values it accepts.

`format(sql, **options)` hands `options` to `validate_options(options)`, which reads
`options.get("output_format")` and turns away anything but `None`, `"sql"`, `"python"` and
`"php"`. A call built from the signature alone never sets such an option, so the code behind
it stays unreached. The keys are read from the source: `kwargs.get("k")`, `kwargs["k"]`,
`kwargs.pop("k")`, `"k" in kwargs`, in the function and in the functions it hands the mapping
to (`validate(options)`, `build(**options)`), two levels deep; a key's values are the constants
the value read from it is compared with (`if fmt not in [None, "sql", "python"]`). Standard
library only.

A `*args` parameter is read the same way for how many values it takes: `_row(is_header, *args)`
tells `len(args) == 2` from `len(args) == 3` and raises on any other count, so a call that passes
none or one never reaches its rows. The counts are those `len(args)` is compared with (one more
past a `>`, one fewer below a `<`), those an unpacking `a, b, c = args` needs, and one past the
highest constant index `args[2]` read.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from typing import Any

from . import literals

MAX_DEPTH = 2  # the function, and the functions it hands its keyword mapping to
MAX_KEYS = 40
MAX_CHOICES = 12
MAX_ARITY = 8  # positional values a `*args` count may ask for
_READERS = frozenset({"get", "pop", "setdefault"})


def keyword_options(func: Any, name: str) -> dict[str, list[list]]:
    """Key -> the literals its value is compared with (maybe none), for `func`'s `**name`."""
    found: dict[str, list[list]] = {}
    _collect(func, name, found, MAX_DEPTH, set())
    return dict(list(found.items())[:MAX_KEYS])


def arities(func: Any, name: str) -> list[int]:
    """The counts of values `func`'s `*name` is read as taking (see the module's docstring)."""
    body = _function_tree(func)
    found: set[int] = set()
    for node in ast.walk(body) if body is not None else ():
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and _is_len_of(node.left, name):
            found |= _compared(node.ops[0], node.comparators[0])
        elif isinstance(node, ast.Assign) and _is(node.value, name):
            found |= {len(t.elts) for t in node.targets if isinstance(t, (ast.Tuple, ast.List))
                      and not any(isinstance(e, ast.Starred) for e in t.elts)}
        elif isinstance(node, ast.Subscript) and _is(node.value, name) and (index := _index(node.slice)) >= 0:
            found.add(index + 1)
    return sorted(count for count in found if 0 <= count <= MAX_ARITY)


def _index(node: ast.AST) -> int:
    """A constant non-negative index, else -1."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if node.value >= 0 else -1
    return -1


def _is_len_of(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len"
            and len(node.args) == 1 and _is(node.args[0], name))


def _compared(op: ast.cmpop, right: ast.AST) -> set[int]:
    """The counts a `len(args) <op> right` tells apart: the constant, and past a bound, the next."""
    values = [v for v in _constants(right) if isinstance(v, int) and not isinstance(v, bool)]
    step = {ast.Gt: 1, ast.Lt: -1}.get(type(op), 0)
    return set(values) | {v + step for v in values if step}


def _function_tree(func: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The syntax tree of `func`'s definition (unwrapped), or None when its source cannot be read."""
    with contextlib.suppress(ValueError):  # a wrapper cycle
        func = inspect.unwrap(func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return tree.body[0]


def _collect(func: Any, name: str, found: dict[str, list[list]], depth: int, seen: set) -> None:
    with contextlib.suppress(ValueError):  # a wrapper cycle
        func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None or (code, name) in seen:
        return
    seen.add((code, name))
    body = _function_tree(func)
    if body is None:
        return
    variables: dict[str, str] = {}  # a local assigned from a key's value -> that key
    for node in ast.walk(body):
        key = _key_read(node, name)
        if key is not None:
            found.setdefault(key, [])
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and (key := _key_read(node.value, name)) is not None):
            variables[node.targets[0].id] = key
    for node in ast.walk(body):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in variables:
            choices = found[variables[node.left.id]]
            for value in (v for comparator in node.comparators for v in _constants(comparator)):
                literal = literals.encode(value)
                if literal is not None and literal not in choices and len(choices) < MAX_CHOICES:
                    choices.append(literal)
    if depth > 1:
        for node in ast.walk(body):
            if isinstance(node, ast.Call):
                for callee, parameter in _handed_to(node, name, getattr(func, "__globals__", {})):
                    _collect(callee, parameter, found, depth - 1, seen)


def _key_read(node: ast.AST, name: str) -> str | None:
    """The key of `name.get("k")`, `name.pop("k")`, `name["k"]` or `"k" in name`."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _READERS
            and _is(node.func.value, name) and node.args):
        return _text(node.args[0])
    if isinstance(node, ast.Subscript) and _is(node.value, name):
        return _text(node.slice)
    if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and _is(node.comparators[0], name)):
        return _text(node.left)
    return None


def _handed_to(call: ast.Call, name: str, scope: dict) -> list[tuple[Any, str]]:
    """The functions `call` hands the mapping `name` to, with the parameter that receives it."""
    callee = _resolve(call.func, scope)
    if callee is None:
        return []
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return []
    handed = []
    for index, arg in enumerate(call.args):
        if _is(arg, name) and index < len(parameters) and parameters[index].kind in (
                inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            handed.append((callee, parameters[index].name))
    if any(keyword.arg is None and _is(keyword.value, name) for keyword in call.keywords):
        handed.extend((callee, p.name) for p in parameters if p.kind == inspect.Parameter.VAR_KEYWORD)
    return handed


def _resolve(node: ast.AST, scope: dict) -> Any:
    """The function a call's `f` or `module.f` names in the caller's globals, or None."""
    if isinstance(node, ast.Name):
        target = scope.get(node.id)
    elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        try:
            target = inspect.getattr_static(scope.get(node.value.id), node.attr)
        except AttributeError:
            return None
    else:
        return None
    return target if inspect.isfunction(target) else None


def _constants(node: ast.AST) -> list[Any]:
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [item.value for item in node.elts if isinstance(item, ast.Constant)]
    return []


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
