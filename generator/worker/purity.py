"""Static hints that a zero-argument method does not change its object (an observer candidate).

Randoop trusted method names; Python gives us the source, so a method is a candidate only
if its body never stores into `self`, never hands `self` to another call, never calls a
mutator on `self` or on its attributes, and every `self.method()` it calls is itself a
candidate. Run-time confirmation (same result twice) happens in `observe`.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

MUTATOR_NAMES = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "add", "discard",
    "setdefault", "sort", "reverse", "write", "writelines", "send", "close", "put", "push",
    "move_to_end", "seek", "truncate", "set", "reset", "flush", "next", "acquire", "release",
    "expire", "__setitem__", "__delitem__", "__next__", "__enter__", "__exit__", "__del__",
})
MUTATOR_PREFIXES = ("set_", "add_", "remove_", "pop", "clear", "reset", "update", "delete", "del_",
                    "push", "insert", "append", "write", "load", "save", "close", "open", "start",
                    "stop", "run", "send", "apply", "increment", "decrement", "bump", "inc")
PURE_BUILTINS = frozenset({"len", "str", "repr", "type", "isinstance", "hash", "bool", "int", "float",
                           "format", "getattr", "hasattr", "id", "sorted", "tuple", "list", "iter",
                           "frozenset", "dict", "set", "min", "max", "sum", "any", "all", "abs"})

_cache: dict[Any, bool] = {}  # top-level verdicts only: they never depend on the caller's depth


def name_suggests_mutation(name: str) -> bool:
    return name in MUTATOR_NAMES or name.lower().startswith(MUTATOR_PREFIXES)


def is_observer_candidate(cls: type, func: Any, depth: int = 2, generator_ok: bool = False) -> bool:
    """True if `func` (a method of `cls`) looks side-effect free; C functions are trusted.

    Calls to other methods of `self` are followed `depth` levels deep; a method already
    being checked higher up the chain counts as pure (a cycle is no evidence either way).
    """
    key = (cls, func, depth, generator_ok)
    if key not in _cache:
        _cache[key] = _check(cls, func, depth, generator_ok, frozenset({func}))
    return _cache[key]


def _check(cls: type, func: Any, depth: int, generator_ok: bool, visiting: frozenset) -> bool:
    """`generator_ok`: an `__iter__` written as a generator is fine, its body is what matters."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    if code is None:
        return True
    lazy = inspect.CO_GENERATOR if generator_ok else 0
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR) & ~lazy:
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.args.args:
        return False
    self_name = node.args.args[0].arg
    return all(_node_is_pure(cls, child, self_name, depth, visiting) for child in ast.walk(node))


def _rooted_at(node: ast.AST, name: str) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _node_is_pure(cls: type, node: ast.AST, self_name: str, depth: int, visiting: frozenset) -> bool:
    if isinstance(node, (ast.Global, ast.Nonlocal, ast.Await)):
        return False
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return not any(isinstance(t, (ast.Attribute, ast.Subscript)) and _rooted_at(t, self_name)
                       for t in targets)
    if isinstance(node, ast.Call):
        return _call_is_pure(cls, node, self_name, depth, visiting)
    return True


def _call_is_pure(cls: type, call: ast.Call, self_name: str, depth: int, visiting: frozenset) -> bool:
    func = call.func
    passes_self = any(isinstance(a, ast.Name) and a.id == self_name
                      for a in [*call.args, *(k.value for k in call.keywords)])
    if isinstance(func, ast.Name):
        return not passes_self or func.id in PURE_BUILTINS
    if isinstance(func, ast.Attribute) and _rooted_at(func, self_name):
        if name_suggests_mutation(func.attr):
            return False
        if isinstance(func.value, ast.Name):  # self.method(...)
            if passes_self:
                return False
            target = inspect.getattr_static(cls, func.attr, None)
            if isinstance(target, (staticmethod, classmethod)):
                return True
            if target in visiting:
                return True
            if callable(target) and depth > 0:
                return _check(cls, target, depth - 1, False, visiting | {target})
            return depth > 0
        return True
    return not passes_self
