"""Turning an operation id (`pkg.mod:Qual.name`) into something callable, on this commit.

Resolution happens in each worker against its own commit, so an operation generated on
base that no longer exists on head surfaces here as `Missing` (an API change) and a call
its signature no longer accepts as `Unbindable`. Standard library only.
"""

from __future__ import annotations

import importlib
import inspect
import operator
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .command_line import check_arguments, command_target, run_command_line
from .compat import is_standard_module
from .protocol import OperationKind
from .tracer import unwrap_hits

# Dunder methods called through their operator so that reflection and NotImplemented
# behave as in user code; the renderer uses the same table for the source form.
OPERATORS: dict[str, Callable[..., Any]] = {
    "__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
    "__gt__": operator.gt, "__ge__": operator.ge, "__getitem__": operator.getitem,
    "__setitem__": operator.setitem, "__delitem__": operator.delitem,
    "__contains__": lambda a, b: b in a, "__len__": len, "__iter__": lambda a: list(iter(a)),
    "__str__": str, "__repr__": repr, "__bool__": bool, "__add__": operator.add,
    "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
    "__floordiv__": operator.floordiv, "__mod__": operator.mod, "__and__": operator.and_,
    "__or__": operator.or_, "__xor__": operator.xor, "__neg__": operator.neg, "__abs__": abs,
    "__int__": int, "__float__": float, "__hash__": hash,
    "__reversed__": lambda a: list(reversed(a)),  # drained: the items are the behaviour
}


# Protocol operations: standard functions that dispatch to a class's dunders (the catalog adds
# them for the project's classes that define those dunders; see introspect). Each names the
# dunders that may run, looked up on the first operand, then (reflected) on the second. The
# `operator.__mul__` aliases are the reflected forms: a standard value first (`2 * Duration`).
ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%"}
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_REFLECTED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
PROTOCOLS: dict[str, tuple[str, ...]] = {
    **{f"operator:{name}": (f"__{name}__", f"__r{name}__") for name in ARITHMETIC},
    **{f"operator:__{name}__": (f"__{name}__", f"__r{name}__") for name in ARITHMETIC},
    **{f"operator:{name}": (f"__{name}__", f"__{_REFLECTED[name]}__") for name in COMPARISONS},
    **{f"operator:__{name}__": (f"__{name}__", f"__{_REFLECTED[name]}__") for name in COMPARISONS},
    "operator:contains": ("__contains__",), "builtins:hash": ("__hash__",), "builtins:len": ("__len__",),
    "builtins:bool": ("__bool__", "__len__"), "builtins:list": ("__iter__",),
    "builtins:format": ("__format__",),
    # copying looks its dunders up on the object: a class's `__getattr__` answers when it has none
    "copy:copy": ("__copy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__", "__getattr__"),
    "copy:deepcopy": ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__",
                      "__getattr__"),
}

# Dunders worth calling as operations (comparisons, containers, arithmetic, text); the catalog
# lists these, and the host's static view of a module (the planning's `impact`) does the same.
OPERATION_DUNDERS = frozenset(OPERATORS) - {"__hash__", "__str__", "__repr__", "__iter__", "__len__",
                                            "__bool__"}

# Calls the callable an earlier statement returned (a decorator's product, a closure, a bound
# method): its first argument, given the others. No catalog lists it; the host's generator makes
# these statements for the callables it saw returned (`returned_callable` in introspect).
CALL = "operator:call"

# `pkg:Name<export>`: a name a public module exports (listed in `__all__`, or imported into a
# package's `__init__`) that the catalog lists no operation under; reading it only says it is
# there, so a name head stops exporting is an API change, whatever the object is and wherever
# it moved.
_PACKAGE = __name__.rpartition(".")[0]  # the worker package, under whatever name it was loaded
EXPORT_SUFFIX = "<export>"
# kinds whose statements call nothing whose signature is known in advance: a value is read, an export
# looked up, a command line given an argv, a returned callable's signature is its own
UNCALLED_KINDS = frozenset({OperationKind.VALUE, OperationKind.EXPORT, OperationKind.COMMAND,
                            OperationKind.CALL})


# `pkg.mod:Version<subclass>`: a subclass with nothing of its own (`class MyVersion(Version)`), built
# as the class is. A method that names its own class where it should build `type(self)` (or the
# other way round) behaves the same on the class and differs only on a subclass, as a user's.
SUBCLASS_SUFFIX = "<subclass>"
SUBCLASS_PREFIX = "My"  # the subclass's name: `MyVersion`, in the worker and in the rendered test


def subclass_id(class_id: str) -> str:
    return f"{class_id}{SUBCLASS_SUFFIX}"


def subclass_name(class_name: str) -> str:
    """The subclass's name, in the worker and in the rendered test: `Version` -> `MyVersion`."""
    return SUBCLASS_PREFIX + class_name.lstrip("_")


def subclass_target(op_id: str) -> str | None:
    """`pkg:Version` for `pkg:Version<subclass>`; None for any other operation."""
    return op_id[: -len(SUBCLASS_SUFFIX)] if op_id.endswith(SUBCLASS_SUFFIX) else None


_SUBCLASSES: dict[type, type] = {}


def subclass_of(klass: type) -> type:
    """The one subclass with nothing of its own of `klass` in this process (made on first use;
    raises whatever the class raises against being subclassed: `final`, an enum with members)."""
    made = _SUBCLASSES.get(klass)
    if made is None:
        name = subclass_name(klass.__name__)
        made = _SUBCLASSES[klass] = types.new_class(
            name, (klass,), {},
            lambda namespace: namespace.update(__module__=klass.__module__, __qualname__=name))
    return made


SETTER_SUFFIX = "<set>"


def setter_id(class_id: str, attribute: str) -> str:
    """The operation assigning `attribute` of a `class_id` object: `pkg:Renderer.width<set>`."""
    return f"{class_id}.{attribute}{SETTER_SUFFIX}"


def setter_target(op_id: str) -> tuple[str, str] | None:
    """(`pkg:Renderer`, `width`) for `pkg:Renderer.width<set>`; None for any other operation."""
    if not op_id.endswith(SETTER_SUFFIX):
        return None
    class_id, _, attribute = op_id[: -len(SETTER_SUFFIX)].rpartition(".")
    return class_id, attribute


VOLUME_MARK = "<x"  # `pkg:Cache.__setitem__<x257>`: the operation called 257 times (`volume`)


def volume_id(op_id: str, count: int) -> str:
    """The operation `op_id` called `count` times in a row, its literals distinct in each call."""
    return f"{op_id}{VOLUME_MARK}{count}>"


def volume_target(op_id: str) -> tuple[str, int] | None:
    """(`pkg:Cache.__setitem__`, 257) for `pkg:Cache.__setitem__<x257>`; None for any other operation."""
    inner, mark, count = op_id.rpartition(VOLUME_MARK)
    if not mark or not count.endswith(">") or not count[:-1].isdigit():
        return None
    return inner, int(count[:-1])


def export_id(module: str, name: str) -> str:
    return f"{module}:{name}{EXPORT_SUFFIX}"


def export_target(op_id: str) -> str | None:
    """`pkg:Name` for `pkg:Name<export>`; None for any other operation."""
    return op_id[: -len(EXPORT_SUFFIX)] if op_id.endswith(EXPORT_SUFFIX) else None


class Missing(Exception):
    """The operation's name does not exist on this commit."""


class Unbindable(Exception):
    """The operation exists but its signature rejects the arguments."""


@dataclass(frozen=True)
class Operation:
    """A resolved operation: how to call it and which unit it belongs to."""

    op_id: str
    # an OperationKind
    kind: str
    obj: Any  # the function, the class, or the class owning the method; a command's entry point
    name: str  # attribute name for methods

    def call(self, args: list, kwargs: dict) -> Any:
        if self.kind == OperationKind.METHOD:
            receiver, rest = args[0], args[1:]
            if self.name in OPERATORS and not kwargs:
                return OPERATORS[self.name](receiver, *rest)
            return getattr(receiver, self.name)(*rest, **kwargs)
        if self.kind == OperationKind.STATIC:
            return getattr(self.obj, self.name)(*args, **kwargs)
        if self.kind == OperationKind.VALUE:
            return self.obj
        if self.kind == OperationKind.EXPORT:
            return None  # its presence is the behaviour; the object is another operation's business
        if self.kind == OperationKind.COMMAND:
            return run_command_line(self.obj, *args)
        if self.kind == OperationKind.CALL:
            return args[0](*args[1:], **kwargs)
        if self.kind == OperationKind.SETTER:
            setattr(args[0], self.name, args[1])
            return None
        if self.kind == OperationKind.VOLUME:  # `execute` makes each call's arguments distinct
            return self.obj.call(args, kwargs)
        return self.obj(*args, **kwargs)

    def callee(self, args: list) -> str:
        """The `mod:Qual` of the code that runs, following dynamic dispatch on the receiver (and,
        for a protocol operation, on its operands: `2 * d` runs `Duration.__rmul__`)."""
        if self.kind == OperationKind.COMMAND:
            return command_target(self.op_id) or self.op_id
        if self.kind == OperationKind.CALL and args:
            return code_name(args[0]) or self.op_id
        if self.kind == OperationKind.VOLUME:
            return self.obj.callee(args)
        if self.kind == OperationKind.SETTER and args:  # a property's setter runs: it is the callee
            for klass in type(args[0]).__mro__:
                if isinstance(klass.__dict__.get(self.name), property):
                    return f"{klass.__module__}:{klass.__qualname__}.{self.name}"
        if self.kind == OperationKind.METHOD and args:
            for klass in type(args[0]).__mro__:
                if self.name in klass.__dict__:
                    return f"{klass.__module__}:{klass.__qualname__}.{self.name}"
        dunders = PROTOCOLS.get(self.op_id, ())
        if self.op_id.startswith("operator:"):
            tried = list(zip(args, dunders))  # left operand's dunder, then the right's
        else:
            tried = [(args[0], dunder) for dunder in dunders] if args else []
        for operand, dunder in tried:
            for klass in type(operand).__mro__:
                if dunder in klass.__dict__ and not _standard(klass):
                    return f"{klass.__module__}:{klass.__qualname__}.{dunder}"
        return self.op_id


def code_name(func: Any) -> str | None:
    """`mod:Qual` of the code a call of `func` runs, named by its code object, so that a wrapper
    that `functools.wraps` renamed after the function it wraps is still named after itself; a
    local function (a closure, a decorator's wrapper) is named after the function it is defined
    in: the unit that holds its lines. None for a callable without Python code."""
    try:
        if isinstance(func, type):
            module, qualname = func.__module__, func.__qualname__
        else:
            function = _python_function(func)
            if function is None:
                return None
            module = function.__globals__.get("__name__")
            qualname = getattr(function.__code__, "co_qualname", None) or function.__qualname__
    except Exception:  # a __getattr__ of the project's that raises: no name
        return None
    if not isinstance(module, str) or not isinstance(qualname, str) or _ours(module):
        return None
    return f"{module}:{qualname.split('.<locals>', 1)[0]}"


def _ours(module: str) -> bool:
    """A module of this package's (the worker's tracing or boot code): never the code a target names."""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _python_function(func: Any) -> Any:
    """The Python function a call of `func` runs: itself, a bound method's, an object's `__call__`,
    or the function that a wrapper written in C (`functools.lru_cache`'s) wraps; None if none."""
    for candidate in (func, getattr(func, "__wrapped__", None)):
        if candidate is None:
            continue
        function = unwrap_hits(getattr(candidate, "__func__", candidate))  # a bound method: its function
        if not isinstance(function, types.FunctionType):
            function = unwrap_hits(type(candidate).__call__)  # an object with a __call__ of its own
        if isinstance(function, types.FunctionType):
            return function
    return None


def _standard(klass: type) -> bool:
    """A class of the interpreter or the standard library (`int`, `datetime.timedelta`): a
    protocol's callee is the project's dunder that the operation dispatches to, not theirs."""
    module = klass.__module__ if isinstance(klass.__module__, str) else ""
    return module == "builtins" or is_standard_module(module.split(".")[0].lstrip("_"))


class Resolver:
    def __init__(self) -> None:
        self._ops: dict[str, Operation] = {}
        self._signatures: dict[Any, inspect.Signature | None] = {}

    def resolve(self, op_id: str) -> Operation:
        op = self._ops.get(op_id)
        if op is None:
            op = self._ops[op_id] = _resolve(op_id)
        return op

    def check_binding(self, op: Operation, args: list, kwargs: dict) -> None:
        """Raise Unbindable if the signature on this commit rejects the call."""
        if op.kind == OperationKind.VOLUME:
            self.check_binding(op.obj, args, kwargs)
            return
        if op.kind in (OperationKind.VALUE, OperationKind.EXPORT):
            if args or kwargs:
                raise Unbindable(f"{op.op_id} is a value, not a function")
            return
        if op.kind == OperationKind.COMMAND:
            problem = check_arguments(args, kwargs)
            if problem:
                raise Unbindable(problem)
            return
        if op.kind == OperationKind.SETTER:
            if len(args) != 2 or kwargs:
                raise Unbindable(f"{op.op_id} takes an object and its new value")
            return
        if op.kind == OperationKind.CALL:  # a returned callable: each sequence makes new ones, never cached
            if not args or not callable(args[0]):
                raise Unbindable(f"{type(args[0]).__qualname__ if args else 'nothing'} is not callable")
            signature = _uncached_signature(args[0])
            args = args[1:]
        elif op.kind == OperationKind.METHOD and not args:
            raise Missing(f"? has no attribute {op.name!r}")
        else:
            owner = type(args[0]) if op.kind == OperationKind.METHOD else None
            signature = self._signature(_called(op, owner))
        if signature is None:
            return
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise Unbindable(str(exc)) from None

    def prepare(self, op_id: str) -> Operation:
        """Resolve `op_id` and the signature its calls are checked against, ahead of the calls: the
        worker does this before forking, so that no forked child has to (what a child looks up
        dies with it). Raises Missing as `resolve` does."""
        op = self.resolve(op_id)
        if op.kind == OperationKind.VOLUME:
            self.prepare(op.obj.op_id)
            return op
        # a command's arguments are checked by shape; a call's signature is its callable's, made later
        if op.kind not in UNCALLED_KINDS:
            self._signature(_called(op, op.obj))  # a method as its own class has it
        return op

    def _signature(self, func: Any) -> inspect.Signature | None:
        try:
            return self._signatures[func]
        except KeyError:
            pass
        except TypeError:  # unhashable callable
            return None
        signature = self._signatures[func] = _uncached_signature(func)
        return signature


def _called(op: Operation, receiver_type: type | None) -> Any:
    """The function a call of `op` runs (a method's as `receiver_type` has it; a module's click
    command is a value, called as such)."""
    if op.kind == OperationKind.METHOD:
        func = getattr(receiver_type, op.name, None)
        if func is None:
            raise Missing(f"{getattr(receiver_type, '__qualname__', '?')} has no attribute {op.name!r}")
        return func
    if op.kind == OperationKind.STATIC:
        return getattr(op.obj, op.name)
    return op.obj


def _uncached_signature(func: Any) -> inspect.Signature | None:
    """The signature of `func`, or None when it has none (a builtin): its calls are not checked."""
    try:
        return inspect.signature(func)
    except Exception:  # TypeError, ValueError; a returned object's __signature__ may raise anything
        return None


def _resolve(op_id: str) -> Operation:
    if op_id == CALL:
        return Operation(op_id, OperationKind.CALL, None, "call")
    target_id = command_target(op_id)
    if target_id is not None:  # `pkg.cli:main<argv>`: whatever `pkg.cli:main` is, as a command line
        entry = _resolve(target_id)
        return Operation(op_id, OperationKind.COMMAND, _called(entry, entry.obj), entry.name)
    subclassed = subclass_target(op_id)
    if subclassed is not None:
        klass = _resolve(subclassed)
        if klass.kind != OperationKind.CONSTRUCTOR:
            raise Missing(f"{subclassed} is not a class")
        try:
            return Operation(op_id, OperationKind.CONSTRUCTOR, subclass_of(klass.obj), klass.name)
        except Exception as exc:  # a class that refuses subclasses on this commit
            raise Missing(f"{subclassed} cannot be subclassed: {type(exc).__name__}: {exc}") from None
    repeated = volume_target(op_id)
    if repeated is not None:  # `pkg:Cache.put<x257>`: `pkg:Cache.put`, called again and again
        inner = _resolve(repeated[0])
        if inner.kind in UNCALLED_KINDS or inner.kind == OperationKind.CONSTRUCTOR:
            raise Missing(f"{repeated[0]} is not called again and again")
        return Operation(op_id, OperationKind.VOLUME, inner, inner.name)
    settable = setter_target(op_id)
    if settable is not None:  # `pkg:Renderer.width<set>`: the attribute assigned on a Renderer
        class_id, attribute = settable
        klass = _resolve(class_id)
        if klass.kind != OperationKind.CONSTRUCTOR:
            raise Missing(f"{class_id} is not a class")
        return Operation(op_id, OperationKind.SETTER, klass.obj, attribute)
    exported = export_target(op_id)
    if exported is not None:
        module_name, _, name = exported.partition(":")
        try:  # getattr, not getattr_static: a module `__getattr__` still serving an old name serves it
            exported_value = getattr(importlib.import_module(module_name), name)
            return Operation(op_id, OperationKind.EXPORT, exported_value, name)
        except ImportError as exc:
            raise Missing(f"module {module_name} cannot be imported: {exc}") from None
        except Exception:  # AttributeError, or a module `__getattr__` refusing the name another way
            raise Missing(f"{module_name} has no {name}") from None
    module_name, _, qualname = op_id.partition(":")
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise Missing(f"module {module_name} cannot be imported: {exc}") from None
    parts = qualname.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            raise Missing(f"{module_name} has no {qualname}")
    name = parts[-1]
    try:
        static = inspect.getattr_static(owner, name)
    except AttributeError:
        raise Missing(f"{module_name} has no {qualname}") from None
    target = getattr(owner, name)
    if isinstance(owner, type):
        if isinstance(static, (staticmethod, classmethod)):
            return Operation(op_id, OperationKind.STATIC, owner, name)
        if isinstance(target, type):
            return Operation(op_id, OperationKind.CONSTRUCTOR, target, name)
        if not callable(static) and not hasattr(type(static), "__get__"):
            return Operation(op_id, OperationKind.VALUE, target, name)  # a class's constant or table
        return Operation(op_id, OperationKind.METHOD, owner, name)
    if isinstance(target, type):
        return Operation(op_id, OperationKind.CONSTRUCTOR, target, name)
    if not callable(target):
        return Operation(op_id, OperationKind.VALUE, target, name)  # a module's constant, table or object
    return Operation(op_id, OperationKind.FUNCTION, target, name)

