"""Names in rendered tests: variables after their types or roles, tests after target and flavour.

Variables (`variable_name` proposes, `Names` makes unique):

- a constructor's result after its class: `LRUCache(...)` -> `lru_cache`;
- a static or class method after its class when it is a factory (it is annotated to return
  the class, or not annotated at all): `Version.parse(...)` -> `version`; otherwise as a function;
- a function's or method's result after its name minus a leading verb: `parse_version` ->
  `version`, `get_user` -> `user`, `to_json` -> `json`, `is_valid` -> `valid`; a method whose name
  has no verb keeps it (`rect.area()` -> `area`), `get`/`pop`/`peek` give `value`, and operator
  dunders their role (`a[k]` -> `item`, `len(a)` -> `length`, `k in a` -> `contains`);
- when that gives nothing usable (a bare verb such as `parse`, a function name, which the test
  imports, a builtin such as `list`, a keyword), the return annotation (`-> Duration` ->
  `duration`, `-> int` -> `number`), else `result`.

Names are snake_case identifiers, never keywords or builtins, and `Names.fresh` numbers
repeats (`version`, `version_2`) and avoids every name the test module binds (imports, `pytest`).

Test names (`test_name`): `test_<target>_<kind>_matches_<pin>`, e.g.
`test_parse_duration_return_matches_base`, at most 80 characters.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

from ..runtime.catalog import Operation
from ..worker.protocol import OperationKind
from ..worker.resolve import SUBCLASS_SUFFIX, setter_target, subclass_name, volume_target

MAX_TEST_NAME = 80
BUILTIN_NAMES = frozenset(dir(builtins))
# Leading words that say what a function does, not what it returns.
VERBS = frozenset({
    "get", "make", "create", "build", "new", "parse", "load", "read", "fetch", "compute", "calculate",
    "calc", "to", "as", "find", "generate", "gen", "render", "format", "convert", "construct", "open",
    "init", "extract", "decode", "encode", "serialize", "deserialize", "dump", "dumps", "loads",
    "compile", "resolve", "lookup", "normalize", "split", "join", "merge", "run", "do", "apply",
    "process", "add", "update", "remove", "insert", "append", "extend", "clear", "set", "put", "push",
    "send", "write", "reset", "discard", "delete", "register", "close", "flush", "start", "stop",
    "copy", "clone", "select", "filter", "sort", "check", "validate", "evaluate", "eval", "call",
    "handle", "wrap", "unwrap", "pop", "peek", "fill",
})
VALUE_METHODS = frozenset({"get", "pop", "peek", "setdefault", "popitem", "lookup"})
DUNDER_NAMES = {
    "__getitem__": "item", "__len__": "length", "__contains__": "contains", "__iter__": "items",
    "__reversed__": "reversed_items",
    "__str__": "text", "__repr__": "text", "__hash__": "hash_value", "__bool__": "truth",
    "__int__": "number", "__float__": "number", "__abs__": "magnitude", "__neg__": "negated",
    "__eq__": "equal", "__ne__": "not_equal", "__lt__": "less", "__le__": "at_most",
    "__gt__": "greater", "__ge__": "at_least", "__add__": "total", "__sub__": "difference",
    "__mul__": "product", "__truediv__": "quotient", "__floordiv__": "quotient",
    "__mod__": "remainder", "__and__": "intersection", "__or__": "union", "__xor__": "symmetric",
}
RETURN_NAMES = {
    "builtins.int": "number", "builtins.float": "number", "builtins.complex": "number",
    "builtins.str": "text", "builtins.bytes": "data", "builtins.bytearray": "data",
    "builtins.bool": "flag", "builtins.list": "items", "builtins.tuple": "values",
    "builtins.dict": "mapping", "builtins.set": "members", "builtins.frozenset": "members",
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """`LRUCache` -> `lru_cache`, `parseHTTPDate` -> `parse_http_date`, `__len__` -> `len`."""
    text = _CAMEL.sub("_", name).lower()
    return re.sub(r"_+", "_", re.sub(r"[^0-9a-z_]", "_", text)).strip("_")


def usable(name: str) -> bool:
    """A plain variable name: an identifier, neither a keyword, a soft keyword nor a builtin."""
    return (name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
            and name not in BUILTIN_NAMES)


def variable_name(op_id: str, op: Operation | None = None) -> str:
    """The preferred (not yet unique) name for the result of calling operation `op_id`."""
    if setter_target(op_id) is not None:  # an assignment has no result of its own
        return "result"
    if volume_target(op_id) is not None:  # a volume call's value is its last call's
        return "last"
    qualname = op_id.partition(":")[2]
    parts = qualname.split(".")
    if parts[-1].endswith(SUBCLASS_SUFFIX):  # `MyVersion(...)`, the test's subclass: my_version
        parts[-1] = subclass_name(parts[-1][: -len(SUBCLASS_SUFFIX)])
    name = parts[-1]
    kind = op.kind if op else (OperationKind.METHOD if len(parts) > 1 else OperationKind.FUNCTION)
    returns = op.returns if op else ()
    if kind == OperationKind.COMMAND:  # what a command line did: its output, exit code and return value
        return "run"
    if kind == OperationKind.CONSTRUCTOR:
        return _first_usable(snake(name), snake(name) + "_obj") or "instance"
    if kind == OperationKind.STATIC and op and len(parts) > 1 and _is_factory(op, parts[-2]):
        return _first_usable(snake(parts[-2]), snake(parts[-2]) + "_obj") or "instance"
    if kind == OperationKind.METHOD:
        if name.startswith("__") and name.endswith("__"):
            return DUNDER_NAMES.get(name, "result")
        if name in VALUE_METHODS:
            return "value"
    stem = _strip_verb(snake(name))
    if kind == OperationKind.FUNCTION and stem == name:
        stem = ""  # the function's own name: the test imports it
    return _first_usable(stem, _from_returns(returns)) or "result"


def _strip_verb(name: str) -> str:
    """`parse_version` -> `version`, `is_valid` -> `valid`, `parse` -> "" (nothing left)."""
    if name.startswith("is_"):
        return name[3:]
    head, _, rest = name.partition("_")
    if head in VERBS:
        return rest
    return name


def _is_factory(op: Operation, owner: str) -> bool:
    """A static/class method that returns its own class (or is not annotated) builds one."""
    if not op.returns:
        return not op.name.startswith(("is_", "has_", "can_", "should_"))
    return any(r == op.owner or r.lstrip("?") in (owner, "Self") or r.endswith(".Self") for r in op.returns)


def _from_returns(returns: Iterable[str]) -> str:
    """A name from a return annotation: the class it names, or a role for builtin types."""
    types = [r for r in returns if r != "builtins.NoneType"]
    if len(types) != 1:
        return ""
    (type_name,) = types
    if type_name in RETURN_NAMES:
        return RETURN_NAMES[type_name]
    if type_name.startswith(("builtins.", "typing.", "collections.abc.")):
        return ""
    return snake(type_name.lstrip("?").rsplit(".", 1)[-1])


def _first_usable(*names: str) -> str:
    return next((n for n in names if n and usable(n)), "")


class Names:
    """Unique variable names for one test module: `version`, `version_2`, ..."""

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.used: set[str] = set(reserved)

    def fresh(self, base: str) -> str:
        base = base if usable(base) else "value"
        name, n = base, 2
        while name in self.used or not usable(name):
            name, n = f"{base}_{n}", n + 1
        self.used.add(name)
        return name


def test_name(target: str, kind: str, pin: str = "base") -> str:
    """`pkg.mod:Duration.parse`, `return`, `base` -> `test_duration_parse_return_matches_base`.

    The target is `module:qualname` (the qualname's parts in snake case, the module's last
    part when there is no qualname or it is `<module>`); the kind one of the report's kinds;
    the pin which commit's behaviour the test asserts. At most 80 characters.
    """
    module, _, qualname = target.partition(":")
    parts = [snake(p) for p in qualname.split(".")] if qualname and not qualname.startswith("<") else []
    subject = "_".join(p for p in parts if p) or snake(module.rsplit(".", 1)[-1]) or "target"
    suffix = f"_{snake(kind) or 'difference'}_matches_{snake(pin) or 'base'}"
    room = MAX_TEST_NAME - len("test_") - len(suffix)
    return f"test_{subject[:room].rstrip('_')}{suffix}"


test_name.__test__ = False  # type: ignore[attr-defined]  # not a test, though named like one
