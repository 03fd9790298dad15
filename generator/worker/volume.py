"""Volume: one operation called many times in a row with distinct inputs, past the sizes at
which caches evict and buffers flush, where the operation keeps state between calls.

A cache that evicts the wrong entry, or a buffer that loses a byte when it flushes, behaves
like its base for the first hundred calls; only the call past its size shows the change. The
worker needs two things for it, both here: which operations keep state (read from their
source, before any call), and the distinct inputs of the n-th call (`varied`), one rule that
the rendered test writes the same way (`varied_source`), so that the test repeats exactly the
calls the worker made.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Any

from .literals import SHARED_NAN
from .purity import MUTATOR_NAMES, is_observer_candidate

SIZES = (128, 256, 1024, 4096)  # the usual cache and buffer sizes: a volume call is made once more
INDEX = "i"  # the loop's variable in a rendered test
VARIED_TAGS = ("int", "float", "str", "bytes")  # literals made distinct per call; the others repeat
MUTABLE_TYPES = (dict, list, set, bytearray)  # module state a function may write


def varied_tag(arg: dict) -> str:
    """The tag of a statement's argument that `varied` changes per call ("" for the others: a
    reference, another literal, the sequence's one shared NaN)."""
    lit = arg.get("lit")
    return lit[0] if isinstance(lit, list) and lit and lit[0] in VARIED_TAGS and lit != SHARED_NAN else ""


def varies(statement: dict) -> bool:
    """Whether a volume call of `statement` makes distinct calls: some argument is varied."""
    return any(varied_tag(arg) for arg in (*statement["args"], *statement["kwargs"].values()))


def varied(tag: str, value: Any, index: int) -> Any:
    """The `index`-th call's value of a literal argument of `tag` (`value` for the others)."""
    if tag in ("int", "float"):
        return value + index
    if tag == "str":
        return value + str(index)
    if tag == "bytes":
        return value + str(index).encode()
    return value


def varied_source(tag: str, source: str) -> str:
    """`varied` in a test's source: `source` is the literal's, the loop's index is `INDEX`
    (`"k" + str(i)`; an empty text or a zero is left out: `str(i)`, `i`)."""
    if tag == "int":
        return INDEX if source == "0" else f"{source} + {INDEX}"
    if tag == "float":
        return f"{source} + {INDEX}"
    if tag == "str":
        return f"str({INDEX})" if source in ('""', "''") else f"{source} + str({INDEX})"
    if tag == "bytes":
        return f"str({INDEX}).encode()" if source in ('b""', "b''") else f"{source} + str({INDEX}).encode()"
    return source


def keeps_state(func: Any, owner: type | None) -> bool:
    """Whether calls of `func` can leave something behind that a later call reads: a function
    cached by a decorator (`functools.lru_cache`'s `cache_info`), or a body that stores into
    its object (a method of `owner`: a store into `self`, or anything an observer does not do) or into
    its module (`global`, an item set or a mutator called on a module's dict, list or set)."""
    try:
        return _keeps_state(func, owner)
    except Exception:  # a project's __getattr__ that raises, a source that cannot be read: no evidence
        return False


def _keeps_state(func: Any, owner: type | None) -> bool:
    candidate: Any = func
    for _ in range(8):  # a decorator's chain of wrappers
        if hasattr(candidate, "cache_info") or hasattr(candidate, "cache_clear"):
            return True
        candidate = getattr(candidate, "__wrapped__", None)
        if candidate is None:
            break
    function = inspect.unwrap(getattr(func, "__func__", func))
    if not isinstance(function, types.FunctionType):
        return False
    if owner is not None and not is_observer_candidate(owner, function):
        return True
    return _writes_module_state(function)


def _writes_module_state(function: types.FunctionType) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    local = {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    local |= {node.id for node in ast.walk(tree)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    module = function.__globals__

    def shared(node: ast.AST) -> bool:  # a name of the module's bound to a mutable container
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return (isinstance(node, ast.Name) and node.id not in local
                and isinstance(module.get(node.id), MUTABLE_TYPES))

    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            return True
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            if any(isinstance(target, ast.Subscript) and shared(target.value) for target in targets):
                return True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATOR_NAMES and shared(node.func.value)):
            return True
    return False
