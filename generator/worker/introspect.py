"""The catalog: what can be called in the target modules, found by importing them here.

Import executes project code, so discovery happens in the worker, never in the host. The
catalog is plain JSON: operations (functions, constructors, methods, static/class
methods) with parameters, type hints, defaults and source spans, the classes' MROs, and the
project's compiled modules that the imports loaded (so the report can say whether compiled code
or a pure-Python fallback was tested). Standard library only.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import functools
import importlib
import inspect
import os
import sys
import textwrap
import types
import typing
from collections.abc import Iterable
from importlib.machinery import EXTENSION_SUFFIXES
from typing import Any

from . import literals, typeinfo
from .command_line import commands_of
from .compat import ALIAS_TYPES
from .keywords import arities, keyword_options
from .observe import clean_text, type_name
from .protocol import OperationKind
from .resolve import (
    ARITHMETIC,
    COMPARISONS,
    OPERATION_DUNDERS,
    OPERATORS,
    PROTOCOLS,
    Resolver,
    code_name,
    export_id,
    setter_id,
    subclass_id,
    subclass_of,
)
from .settable import settable_attributes
from .tracer import unwrap_hits
from .volume import keeps_state

# Exception classes are listed only where a changed module defines them (their messages and
# attributes are behaviour), never built as arguments or given protocol operations.
SKIPPED_BASES = (BaseException,)
EXCEPTION_SIGNATURE = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])
# Standard values a project's class meets in arithmetic and comparisons (`timedelta - Duration`).
STANDARD_OPERANDS = ("builtins.int", "builtins.float", "fractions.Fraction", "decimal.Decimal",
                     "datetime.date", "datetime.datetime", "datetime.timedelta")
# The dunders through which copying (and pickling) runs a class's own code.
PICKLING = ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
            "__getnewargs_ex__")
# Built-in value types whose format specs a subclass inherits (an `int` subclass formats with `,d`).
VALUE_TYPES = (int, float, complex, str, bytes, tuple, frozenset)
CALLBACK = typeinfo.CALLBACK
MAX_PROVIDERS = 3  # classes having every attribute a parameter's uses name: more, and they say nothing
DUCK_TYPING = [True]  # the catalog being built types parameters by the attributes they use (`build_catalog`)
CONFIGURED = [False]  # the catalog being built lists settable attributes (`build_catalog`)
VOLUME = [False]  # the catalog being built marks the operations that keep state (`build_catalog`)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def build_catalog(modules: list[str], direct: Iterable[str] = (), asynchronous: bool = True,
                  duck: bool = True, subclassed: Iterable[str] = (),
                  class_values: Iterable[str] = (), configured: bool = False, volume: bool = False) -> dict:
    """Import `modules`; return {"operations", "classes", "import_errors"}. Listing runs the
    project's code too (`dir`, `__getattr__`, signatures): a member whose listing raises is left
    out, never the module or the run. `direct`: private functions and methods (`pkg.mod:_helper`,
    `pkg.mod:_Cls._method`) listed as operations of their own, marked `"direct": true`.
    `asynchronous`: coroutine functions and asynchronous generators say so (`"awaits"`). `duck`: a
    parameter with no other evidence of its type is typed by the attributes its body uses.
    `subclassed`: classes (`pkg.mod:Version`) whose subclass with nothing of its own is built too
    (`pkg.mod:Version<subclass>`, a constructor of the class's type). `class_values`: class-level
    values (`pkg.mod:Locale.timeframes`) listed as values read, like a module's. `configured`: the
    public settable attributes of the project's classes listed as operations that assign them
    (`pkg.mod:Renderer.width<set>`; see `settable`). `volume`: functions and methods whose calls can
    leave state behind for later calls say so (`"state": true`; see `volume`)."""
    DUCK_TYPING[0], CONFIGURED[0], VOLUME[0] = duck, configured, volume
    errors: dict[str, str] = {}
    imported: dict[str, types.ModuleType] = {}
    for name in modules:  # all of them first: duck typing looks for classes in every loaded module
        try:
            imported[name] = importlib.import_module(name)
        except BaseException as exc:  # SyntaxError, ImportError, SystemExit at import time
            errors[name] = clean_text(f"{type(exc).__name__}: {exc}")
    _PROJECT_CLASSES.clear()
    operations: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    wanted: set[type] = set()
    listed: list[type] = []
    for name, module in imported.items():
        for obj in _public_members(module):
            try:
                if isinstance(obj, type):
                    _add_class(obj, operations, classes, wanted, home=name)
                    listed.append(obj)
                elif inspect.isfunction(obj) or inspect.isbuiltin(obj) or _decorated(obj):
                    op_id = f"{name}:{obj.__qualname__}"
                    _add_operation(operations, op_id, OperationKind.FUNCTION, obj, None, wanted)
            except BaseException:  # a metaclass's __dir__, a signature that raises: that member only
                continue
        with contextlib.suppress(BaseException):  # a module whose source cannot be read: no values
            if not any(part.startswith("_") for part in name.split(".")):  # a private one has no API
                tree = ast.parse(inspect.getsource(module))  # read once, for its values and exports
                _add_values(module, tree, operations)
                _add_exports(module, tree, operations)
            listed.extend(_value_classes(module, operations, classes))
        with contextlib.suppress(BaseException):
            listed.extend(_private_classes(module, classes))
        with contextlib.suppress(BaseException):  # nor command lines
            operations.update((op["id"], op) for op in commands_of(module))
    for op_id in direct:
        with contextlib.suppress(BaseException):  # one that cannot be listed is left out
            _add_direct(op_id, operations, classes, wanted)
    for class_id in subclassed:
        with contextlib.suppress(BaseException):  # a class that refuses subclasses is left out
            _add_subclass(class_id, operations, wanted)
    for value_id in class_values:
        with contextlib.suppress(BaseException):  # one that is not there, or whose source cannot be read
            _add_class_value(value_id, operations)
    _add_builders(wanted, operations, classes, _project_roots(modules))
    _add_protocols([k for k in listed if type_name(k) in classes], operations, _project_roots(modules))
    if not asynchronous:
        for op in operations.values():
            op.pop("awaits", None)
    return {"operations": list(operations.values()), "classes": classes, "import_errors": errors,
            "compiled": compiled_modules(_project_roots(modules))}


def returned_callable(value: Any) -> list[dict] | None:
    """The parameters of a callable that a call returned (a decorator's product, a closure, a bound
    method, an object with a `__call__`, a class defined in a function), typed as an operation's are,
    so that the host can call it in later statements; None for anything else: no callable, a class
    the catalog builds through its constructor (one defined at the top of a module), a callable
    that runs no Python code (a builtin, `str.upper`), a callback literal handed back, a callable
    without a signature. Never raises."""
    try:
        name = code_name(value) if callable(value) else None
        if name is None or name.startswith(_LITERALS) or (
                isinstance(value, type) and "<locals>" not in value.__qualname__):
            return None  # no Python code, a callback the generator made (passed back), or a known class
        key = _callable_key(value)
        if key in _RETURNED:
            return _RETURNED[key]
        params = _callable_parameters(value)
    except Exception:  # a signature, a hint or a source the project's objects make raise: not called
        return None
    if len(_RETURNED) < MAX_RETURNED:
        _RETURNED[key] = params
    return params


MAX_RETURNED = 1024  # signatures of returned callables remembered per process
_RETURNED: dict[tuple, list[dict] | None] = {}
_LITERALS = literals.__name__ + ":"


def _callable_key(value: Any) -> tuple:
    """What a returned callable's parameters depend on: its code and that of the function it wraps
    (`functools.wraps`: each wrapper a decorator returns has the wrapped function's signature), or
    its class's."""
    if isinstance(value, type):
        return (value,)
    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    if code is None:
        return (type(value),)  # an object whose class defines __call__: the class's signature
    wrapped = getattr(inspect.unwrap(function), "__code__", None)
    return type(value), code, wrapped


def _callable_parameters(value: Any) -> list[dict] | None:
    """The signature of a returned callable (a bound method's without `self`), with its parameters'
    hints read as an operation's: annotations, docstring, the calls of its body. A wrapper's
    signature is that of the function it wraps (`functools.wraps`), unless that one takes anything
    (a callback such as the generator's own): then the wrapper's own says more (`self, *args`)."""
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return None
    try:
        own = inspect.signature(value, follow_wrapped=False)
    except (TypeError, ValueError):  # a wrapper written in C (`functools.lru_cache`'s)
        own = signature
    follow = signature == own or not all(p.kind in _VARIADIC for p in signature.parameters.values())
    if isinstance(value, type):
        target, owner = value.__init__, value
    elif isinstance(value, types.MethodType):
        target = value.__func__
        owner = value.__self__ if isinstance(value.__self__, type) else type(value.__self__)
    elif inspect.isfunction(value):
        target, owner = value, None
    else:
        target, owner = type(value).__call__, type(value)
    with contextlib.suppress(ValueError):  # a wrapper cycle
        target = inspect.unwrap(target) if follow else unwrap_hits(target)
    params = list((signature if follow else own).parameters.values())
    lines = _source(target, follow)[1]
    evidence = _Evidence(value, target, owner, OperationKind.FUNCTION, {p.name for p in params}, lines)
    hints = _hints(target)
    return [_parameter(p, hints, evidence, set()) for p in params]


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _add_values(module: types.ModuleType, tree: ast.Module, operations: dict) -> None:
    """The public module's public values (constants, tables, objects built at import; `tree` is
    its source) as operations that read them: compared like any result, and a name head removes
    is an API change. Type annotations' helpers (a `TypeVar`, an alias such as `dict[str, int]`)
    describe types, not behaviour."""
    listed = getattr(module, "__all__", None)
    for name, line, end in _assigned_names(tree):
        public = name in listed if isinstance(listed, (list, tuple)) else not name.startswith("_")
        if not public or f"{module.__name__}:{name}" in operations:
            continue
        value = module.__dict__.get(name, _MISSING)
        if value is _MISSING or callable(value) or isinstance(value, types.ModuleType) or _typing(value):
            continue  # functions and classes are operations already; a module is no value
        operations[f"{module.__name__}:{name}"] = {
            "id": f"{module.__name__}:{name}", "kind": OperationKind.VALUE, "owner": None, "params": [],
            "returns": [type_name(type(value))], "file": getattr(module, "__file__", None), "line": line,
            "end": end}
        if type(value) in (dict, list, tuple, set, frozenset):  # a table: how many entries it holds
            operations[f"{module.__name__}:{name}"]["size"] = len(value)


_MISSING = object()


def _add_exports(module: types.ModuleType, tree: ast.Module, operations: dict) -> None:
    """The names a public module (`tree`: its source) exports that no operation of the catalog
    reads under it (a class re-exported from a private module, a `TypedDict` without a signature,
    a constant imported from elsewhere) as operations that only find them: a name head stops
    exporting is an API change. Exported means listed in a literal `__all__`, or, in a package's
    `__init__` without one, imported from the package's own modules under a public name."""
    listed = getattr(module, "__all__", None)
    if isinstance(listed, (list, tuple)):
        names = {name: line for name, line in _all_entries(tree).items() if name in listed}
        names.update((name, None) for name in listed if isinstance(name, str) and name not in names)
    elif hasattr(module, "__path__"):
        names = _package_imports(tree)
    else:
        return
    for name, line in names.items():
        if f"{module.__name__}:{name}" in operations:
            continue  # read by its own operation
        if isinstance(getattr(module, name, None), types.ModuleType):
            continue  # a submodule is no name of the API
        operations[export_id(module.__name__, name)] = {
            "id": export_id(module.__name__, name), "kind": OperationKind.EXPORT, "owner": None, "params": [],
            "returns": [], "file": getattr(module, "__file__", None), "line": line, "end": line}


def _all_entries(tree: ast.Module) -> dict[str, int]:
    """The strings of the module's `__all__ = [...]` (or `+=`) statements, with their lines."""
    found: dict[str, int] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            for leaf in ast.walk(node.value):
                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                    found.setdefault(leaf.value, leaf.lineno)
    return found


def _package_imports(tree: ast.Module) -> dict[str, int]:
    """Public names a package's `__init__` imports from its own modules (`from ._hooks import X`)."""
    found: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            for alias in node.names:
                name = alias.asname or alias.name
                if name != "*" and not name.startswith("_"):
                    found.setdefault(name, alias.lineno)
    return found


def _value_classes(module: types.ModuleType, operations: dict, classes: dict) -> list[type]:
    """The project's classes of the module's public values that the catalog does not list (a
    private `_TokenType` whose instances are the public `Keyword`, `Name`, ...), registered so
    that they get their protocol operations: a change to `_TokenType.__deepcopy__` or
    `__getattr__` is reached through `copy.deepcopy(tokens.Keyword)`."""
    roots = {module.__name__.split(".")[0]}
    found = []
    for op in operations.values():
        if op["kind"] != OperationKind.VALUE or not op["id"].startswith(module.__name__ + ":"):
            continue
        klass = type(getattr(module, op["id"].split(":", 1)[1], None))
        listed = type_name(klass) in classes or issubclass(klass, SKIPPED_BASES)
        if _in_project(klass, roots) and not listed:
            classes[type_name(klass)] = _class_entry(klass)
            found.append(klass)
    return found


def _private_classes(module: types.ModuleType, classes: dict) -> list[type]:
    """The module's own private classes (`_OrderedBidictKeysView`), registered so that they get
    their protocol operations: their instances come from public calls (`keys()`), and what their
    dunders do (`keys() < other.items()`) is behaviour of the module. No constructor or method
    operations: those are the public classes' business."""
    found = []
    for name, klass in list(vars(module).items()):
        if (name.startswith("_") and not name.startswith("__") and isinstance(klass, type)
                and _defined_in(klass, module) and type_name(klass) not in classes):
            classes[type_name(klass)] = _class_entry(klass)
            found.append(klass)
    return found


def _class_entry(klass: type) -> dict:
    """The catalog's entry of a class: its MRO by type name (the pools' subtype index), and the
    standard protocols it satisfies (what a declared `Iterable` admits)."""
    return {"mro": [type_name(k) for k in klass.__mro__ if k is not object],
            "abstract": inspect.isabstract(klass), "protocols": typeinfo.protocols_of(klass)}


def _typing(value: object) -> bool:
    """A helper of type annotations: a TypeVar, a ParamSpec, a generic alias, a union."""
    kind = type(value)
    return (kind.__module__ in ("typing", "typing_extensions")
            or isinstance(value, ALIAS_TYPES))


def _assigned_names(tree: ast.Module) -> list[tuple[str, int, int]]:
    """Names the statements of `tree`'s body assign (not imports, defs or classes: a module's
    top level, or a class's body), with the statement's first and last lines."""
    found: list[tuple[str, int, int]] = []
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else [node.target]
                   if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        for target in targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name):
                    found.append((leaf.id, node.lineno, node.end_lineno or node.lineno))
    return list(dict.fromkeys(found))


def _add_protocols(listed: list[type], operations: dict, roots: set[str]) -> None:
    """Protocol operations for the project's classes: `copy.copy`, `copy.deepcopy`, `hash`,
    `format`, `bool`, `len`, iteration, `in`, and arithmetic and comparisons (plain, and
    reflected with a standard value first) where a class defines them. Each lists the dunders
    it may run (`dispatches`), so that a change to `Duration.__rsub__` focuses `operator.__sub__`."""
    usable = [k for k in listed if not inspect.isabstract(k) and not issubclass(k, SKIPPED_BASES)]

    def having(*dunders: str) -> list[type]:
        return [k for k in usable if any(_defines(k, dunder, roots) for dunder in dunders)]

    by_name = {type_name(k): k for k in usable}

    def add(op_id: str, *operands: list[str], extra: tuple[dict, ...] = ()) -> None:
        if not all(operands) or op_id in operations:
            return
        classes = [by_name[hint] for hints in operands for hint in hints if hint in by_name]
        owners = {owner for k in classes for owner in k.__mro__ if owner.__module__.split(".")[0] in roots}
        dispatches = sorted({f"{owner.__module__}:{owner.__qualname__}.{dunder}"  # defined there or not (yet)
                             for owner in owners for dunder in PROTOCOLS[op_id]})
        params = [{"name": name, "kind": "POSITIONAL_ONLY", "has_default": False, "hints": hints}
                  for name, hints in zip("ab", operands)]
        operations[op_id] = {"id": op_id, "kind": OperationKind.FUNCTION, "owner": None,
                             "params": [*params, *extra],
                             "returns": [], "file": None, "line": None, "end": None, "dispatches": dispatches}

    # copying an object whose class customizes nothing runs no project code: only those that do,
    # or that answer attribute lookups themselves (copying looks `__deepcopy__` up on the object)
    add("copy:copy", [type_name(k) for k in having("__copy__", "__getattr__", *PICKLING)])
    add("copy:deepcopy", [type_name(k) for k in having("__deepcopy__", "__getattr__", *PICKLING)])
    add("builtins:hash", [type_name(k) for k in having("__eq__", "__hash__")])
    spec = {"name": "format_spec", "kind": "POSITIONAL_ONLY", "has_default": False,
            "hints": [typeinfo.FORMAT_SPEC]}
    add("builtins:format", [type_name(k) for k in having("__format__")], extra=(spec,))
    add("builtins:bool", [type_name(k) for k in having("__bool__", "__len__")])
    add("builtins:len", [type_name(k) for k in having("__len__")])
    add("builtins:list", [type_name(k) for k in having("__iter__")])
    add("operator:contains", [type_name(k) for k in having("__contains__")], ["builtins.int", "builtins.str"])
    for name in [*ARITHMETIC, *COMPARISONS]:
        plain, reflected = PROTOCOLS[f"operator:{name}"]
        left = [type_name(k) for k in having(plain)]
        right = [type_name(k) for k in having(reflected)]
        add(f"operator:{name}", left, [*left, *STANDARD_OPERANDS])
        add(f"operator:__{name}__", list(STANDARD_OPERANDS), right)


def _defines(klass: type, dunder: str, roots: set[str]) -> bool:
    """A class of the project in `klass`'s MRO defines `dunder` (None included: `__hash__ = None`
    is a definition), or `klass` inherits `__format__` from a built-in value type (an `int`
    subclass takes `{:,d}`; its inherited arithmetic runs no project code)."""
    for owner in klass.__mro__:
        if owner is object:
            return False
        if dunder in owner.__dict__:
            inherited = dunder == "__format__" and owner in VALUE_TYPES
            return owner.__module__.split(".")[0] in roots or inherited
    return False


def compiled_modules(roots: set[str]) -> list[str]:
    """The loaded extension modules of the project: inside its top-level packages, or beside them
    at an import root (a top-level `_speedups`)."""
    folders = set()
    for root in roots:
        file = getattr(sys.modules.get(root), "__file__", None)
        if isinstance(file, str):
            package = os.path.dirname(os.path.abspath(file))
            folders.add(os.path.dirname(package) if file.endswith("__init__.py") else package)
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.endswith(tuple(EXTENSION_SUFFIXES)):
            continue
        if name.split(".")[0] in roots or os.path.dirname(os.path.abspath(file)) in folders:
            found.append(name)
    return sorted(found)


def _project_roots(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def _public_members(module: types.ModuleType) -> list[Any]:
    """The module's own public objects: those its `__all__` lists, and its functions and classes
    without a leading underscore (`__all__` says what `import *` binds; sqlparse's lists only
    submodules, and `sqlparse.format` is its API all the same). A name that is no str or whose
    lookup raises (a module `__getattr__`, a lazy attribute) is left out, not the module."""
    names = getattr(module, "__all__", None)
    names = list(names) if isinstance(names, (list, tuple)) else []
    with contextlib.suppress(BaseException):  # a module-level __dir__ that raises
        names += [n for n in dir(module) if not n.startswith("_") and n not in names]
    members = []
    for name in names:
        if type(name) is not str:
            continue
        try:
            obj = getattr(module, name, None)
            if _defined_in(obj, module):
                members.append(obj)
        except BaseException:
            continue
    return members


def _decorated(obj: Any) -> bool:
    """A function that a decorator replaced by a callable object wrapping it (`functools.lru_cache`,
    `functools.cache`, a decorator class of the project's that sets `__wrapped__`): called as the
    function it wraps."""
    if isinstance(obj, type) or inspect.isfunction(obj) or not callable(obj):
        return False
    return inspect.isfunction(inspect.unwrap(obj)) and isinstance(getattr(obj, "__qualname__", None), str)


def _defined_in(obj: Any, module: types.ModuleType) -> bool:
    """`obj` is the module's own, not an import: by its `__module__`, or, for a function or class
    whose `__module__` the package rewrote to its public home (`BidictBase.__module__ = "bidict"`,
    for nicer reprs), by the file its code is in."""
    if getattr(obj, "__module__", None) == module.__name__:
        return True
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return False
    if isinstance(obj, types.FunctionType):
        return obj.__code__.co_filename == path
    if isinstance(obj, type):
        return any(isinstance(member, types.FunctionType) and member.__code__.co_filename == path
                   for member in vars(obj).values())
    return False


def _in_project(klass: type, roots: set[str]) -> bool:
    return klass.__module__.split(".")[0] in roots


def _add_class(klass: type, operations: dict, classes: dict, wanted: set[type],
               constructor_only: bool = False, home: str | None = None) -> None:
    """`home`: the module the class was found in, which its operations are named after (its
    `__module__` may be the package that re-exports it); an exception class is listed only there."""
    if (issubclass(klass, SKIPPED_BASES) and home is None) or type_name(klass) in classes:
        return
    classes[type_name(klass)] = _class_entry(klass)
    prefix = f"{home or klass.__module__}:{klass.__qualname__}"
    if not inspect.isabstract(klass):
        _add_operation(operations, prefix, OperationKind.CONSTRUCTOR, klass, klass, wanted)
    if constructor_only:
        return
    roots = {klass.__module__.split(".")[0]}
    for name in sorted(dir(klass)):
        if name.startswith("_") and name not in OPERATION_DUNDERS:
            continue
        owner = next((k for k in klass.__mro__ if name in k.__dict__), None)
        if owner is None or owner is object or owner.__module__ == "builtins":
            continue
        if owner is not klass and any(_in_project(k, roots) and name in dir(k)
                                      for k in klass.__mro__[1:]):
            continue  # enumerated on the project base class; the receiver pool covers subclasses
        static = owner.__dict__[name]
        if isinstance(static, (property, type)) or not callable(getattr(klass, name, None)):
            continue
        if isinstance(static, (staticmethod, classmethod)):
            _add_operation(operations, f"{prefix}.{name}", OperationKind.STATIC, getattr(klass, name), klass,
                           wanted)
        elif inspect.isfunction(static) or inspect.ismethoddescriptor(static):
            _add_operation(operations, f"{prefix}.{name}", OperationKind.METHOD, static, klass, wanted)
    if CONFIGURED[0] and not issubclass(klass, BaseException):
        _add_setters(klass, prefix, operations, wanted, roots)


def _add_setters(klass: type, prefix: str, operations: dict, wanted: set[type], roots: set[str]) -> None:
    """The class's settable attributes as operations of one parameter, its value, typed by the
    setter's or `__init__`'s evidence (the catalog's kind is a method: a receiver, then the value)."""
    def ours(function: Any) -> bool:
        return str(getattr(function, "__module__", "") or "").split(".")[0] in roots

    for settable in settable_attributes(klass, ours):
        function = settable.function
        path, lines, start = _source(function)
        names = {settable.parameter.name}
        evidence = _Evidence(function, function, klass, OperationKind.METHOD, names, lines)
        op_id = setter_id(prefix, settable.name)
        value = _parameter(settable.parameter, _hints(function), evidence, wanted)
        value["has_default"] = False  # the value is what the call is: it is always given
        operations[op_id] = {
            "id": op_id, "kind": OperationKind.METHOD, "owner": type_name(klass), "params": [value],
            "returns": [], "file": path, "line": start,
            "end": start + len(lines) - 1 if start is not None else None}


def _add_direct(op_id: str, operations: dict, classes: dict, wanted: set[type]) -> None:
    """A private function, or a method (of any class of the module), as an operation called directly;
    a method's class gets its constructor, so that a receiver can be built."""
    module_name, _, qualname = op_id.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    if not path:
        function = owner.__dict__[name]
        if inspect.isfunction(function):
            _add_operation(operations, op_id, OperationKind.FUNCTION, function, None, wanted)
    elif isinstance(owner, type):
        static = owner.__dict__[name]
        if isinstance(static, (staticmethod, classmethod)):
            _add_operation(operations, op_id, OperationKind.STATIC, getattr(owner, name), owner, wanted)
        elif inspect.isfunction(static):
            _add_operation(operations, op_id, OperationKind.METHOD, static, owner, wanted)
        if op_id in operations:
            wanted.add(owner)  # its constructor, among the builders
    if op_id in operations:
        operations[op_id]["direct"] = True


def _add_class_value(op_id: str, operations: dict) -> None:
    """A class-level value (`pkg.mod:Locale.timeframes`: a table, a constant, a compiled pattern in
    the class's own body) as an operation that reads it, as `_add_values` lists a module's. What
    the resolver reads as no value (a method, a descriptor such as a property, a nested class) is
    an operation or behaviour already, and an inherited name is its own class's data."""
    module_name, _, qualname = op_id.partition(":")
    resolver = Resolver()
    read, owner = resolver.resolve(op_id), resolver.resolve(f"{module_name}:{qualname.rpartition('.')[0]}")
    if (op_id in operations or read.kind != OperationKind.VALUE or owner.kind != OperationKind.CONSTRUCTOR
            or read.name not in owner.obj.__dict__ or isinstance(read.obj, types.ModuleType)
            or _typing(read.obj)):
        return
    klass = owner.obj
    lines, first = inspect.getsourcelines(klass)
    body = ast.Module(body=getattr(ast.parse(textwrap.dedent("".join(lines))).body[0], "body", []),
                      type_ignores=[])
    spans = [(line + first - 1, end + first - 1)
             for bound, line, end in _assigned_names(body) if bound == read.name]
    line, end = spans[0] if spans else (None, None)
    operations[op_id] = {
        "id": op_id, "kind": OperationKind.VALUE, "owner": None, "params": [],
        "returns": [type_name(type(read.obj))],
        "file": getattr(sys.modules[klass.__module__], "__file__", None), "line": line, "end": end}


def _add_subclass(class_id: str, operations: dict, wanted: set[type]) -> None:
    """The constructor of `class_id`'s subclass with nothing of its own, listed under the class's
    type: its objects go where the class's do, receivers of the class's methods."""
    resolved = Resolver().resolve(class_id)
    klass = resolved.obj
    if (resolved.kind != OperationKind.CONSTRUCTOR or inspect.isabstract(klass)
            or isinstance(klass, enum.EnumMeta)):
        return
    op_id = subclass_id(class_id)
    _add_operation(operations, op_id, OperationKind.CONSTRUCTOR, subclass_of(klass), klass, wanted)


def _add_builders(wanted: set[type], operations: dict, classes: dict, roots: set[str]) -> None:
    """Constructors of the classes parameters ask for, from modules not yet in the catalog.

    Project classes, and enums from anywhere: an enum's constructor offers its members'
    values as choices, so building a member needs no more than a literal.
    """
    for klass in sorted(wanted, key=type_name):
        try:
            buildable = _in_project(klass, roots) or isinstance(klass, enum.EnumMeta)
            if buildable and type_name(klass) not in classes:
                _add_class(klass, operations, classes, set(), constructor_only=True)
        except BaseException:  # as in build_catalog: that class only
            continue


def _add_operation(operations: dict, op_id: str, kind: str, func: Any, owner: type | None,
                   wanted: set[type]) -> None:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        if not (kind == OperationKind.CONSTRUCTOR and issubclass(func, BaseException)):
            return
        signature = EXCEPTION_SIGNATURE  # an exception class that keeps BaseException's C constructor
    params = list(signature.parameters.values())
    if kind == OperationKind.METHOD:
        params = params[1:]
        if op_id.rsplit(".", 1)[-1] in OPERATORS:  # called as an operator: only the operands
            params = [p for p in params if p.default is p.empty and p.kind in _POSITIONAL]
    target = func.__init__ if kind == OperationKind.CONSTRUCTOR else func
    hints = _hints(target)
    path, lines, start = _source(target)
    evidence = _Evidence(func, target, owner, kind, {p.name for p in params}, lines)
    enum_type = kind == OperationKind.CONSTRUCTOR and isinstance(func, enum.EnumMeta)
    members = _enum_value(func) if enum_type else None
    entry = {
        "id": op_id,
        "kind": kind,
        "owner": type_name(owner) if owner is not None else None,
        "params": [members] if members else [_parameter(p, hints, evidence, wanted) for p in params],
        "returns": typeinfo.from_annotation(hints["return"], evidence.scope, wanted).hints
        if "return" in hints else [],
    }
    entry.update({"file": path, "line": start, "end": start + len(lines) - 1 if start is not None else None})
    if kind != OperationKind.CONSTRUCTOR and (awaits := _awaits(func)):
        entry["awaits"] = awaits
    if VOLUME[0] and kind in (OperationKind.FUNCTION, OperationKind.METHOD) and keeps_state(func, owner):
        entry["state"] = True
    operations[op_id] = entry


def _awaits(func: Any) -> str | None:
    """"coroutine" for an `async def`, "asyncgen" for an asynchronous generator (their calls are run
    to their end: `asynchronous.settled`), else None."""
    function = inspect.unwrap(getattr(func, "__func__", func))
    if inspect.iscoroutinefunction(function):
        return "coroutine"
    return "asyncgen" if inspect.isasyncgenfunction(function) else None


class _Evidence:
    """An operation's docstring types and isinstance checks, read only if an annotation is missing."""

    def __init__(self, func: Any, target: Any, owner: type | None, kind: str, names: set[str],
                 lines: list[str]) -> None:
        self.scope = typeinfo.NameScope.of(target, owner)
        self.target = target  # the code that runs: its `**kwargs` options are read from it
        self._owner = func if kind == OperationKind.CONSTRUCTOR else owner
        # __init__'s docstring, then the class's
        self._docs = (target, func) if kind == OperationKind.CONSTRUCTOR else (func,)
        self._lines = lines
        self._names = names
        self._documented: dict[str, str] | None = None
        self._checked: dict[str, list] | None = None
        self._called: set[str] | None = None

    def documented(self, name: str, wanted: set[type]) -> typeinfo.TypeInfo:
        if self._documented is None:
            self._documented = {}
            for source in self._docs:
                for key, text in typeinfo.docstring_types(_docstring(source)).items():
                    self._documented.setdefault(key, text)
        text = self._documented.get(name)
        return typeinfo.from_doc_text(text, self.scope, wanted) if text else typeinfo.TypeInfo()

    def checked(self, name: str, wanted: set[type]) -> tuple[typeinfo.TypeInfo, bool]:
        if self._checked is None:
            self._checked = typeinfo.isinstance_targets(self._lines, self._names)
        return typeinfo.checked_types(self._checked.get(name, []), self.scope, wanted)

    def providers(self, name: str, wanted: set[type]) -> list[str]:
        """The project's classes whose objects have every attribute the body uses on the parameter
        (duck typing: `command.script` and `command.output` ask for the one class with both)."""
        used = typeinfo.attributes_used(self._lines, [name]).get(name, set())
        used = {attribute for attribute in used if not attribute.startswith("__")}
        if not used:
            return []
        module = getattr(self.target, "__module__", None) or getattr(self._owner, "__module__", None) or ""
        roots = frozenset({module.split(".")[0]} - {""})
        found = [klass for klass in project_classes(roots) if used <= _attributes(klass)]
        if not found or len(found) > MAX_PROVIDERS:
            return []  # none, or so many that the attributes say nothing of the type
        wanted.update(found)  # their constructors, among the builders
        return [type_name(klass) for klass in found]

    def called(self, name: str) -> bool:
        """The body calls the parameter, or the class calls the attribute it is stored in."""
        if self._called is None:
            class_lines = _class_lines(self._owner) if isinstance(self._owner, type) else []
            self._called = typeinfo.called_parameters(self._lines, self._names, class_lines)
        return name in self._called


def project_classes(roots: frozenset[str]) -> list[type]:
    """The classes the project's loaded modules define (read once per set of roots)."""
    found = _PROJECT_CLASSES.get(roots)
    if found is None:
        found = _PROJECT_CLASSES[roots] = [
            value for name, module in sorted(sys.modules.items()) if module is not None
            and name.split(".")[0] in roots for value in list(getattr(module, "__dict__", {}).values())
            if isinstance(value, type) and getattr(value, "__module__", None) == name]
    return found


_PROJECT_CLASSES: dict[frozenset[str], list[type]] = {}
_ATTRIBUTES: dict[type, frozenset[str]] = {}


def _attributes(klass: type) -> frozenset[str]:
    """What an object of `klass` has: its class's attributes (methods, properties, slots, fields of a
    named tuple) and those its `__init__`s assign to `self`."""
    found = _ATTRIBUTES.get(klass)
    if found is None:
        names = set(dir(klass))
        for base in klass.__mro__:
            init = base.__dict__.get("__init__")
            if inspect.isfunction(init):
                with contextlib.suppress(Exception):  # source that cannot be read: its class's names only
                    lines = inspect.getsourcelines(init)[0]
                    names |= typeinfo.attributes_used(lines, ["self"]).get("self", set())
        found = _ATTRIBUTES[klass] = frozenset(names)
    return found


def _docstring(obj: Any) -> str | None:
    try:
        return inspect.getdoc(obj)
    except Exception:  # a __doc__ property that raises
        return None


def _enum_value(klass: enum.EnumMeta) -> dict | None:
    """The constructor of an enum takes a member's value: the values are its choices."""
    try:
        values = [member.value for member in klass]
    except Exception:
        return None
    if not values:
        return None  # the functional API (Enum("Name", "A B")), not a lookup
    choices = []
    for value in values:
        literal = literals.encode(value)
        if literal is not None and literal not in choices:
            choices.append(literal)
    hints = list(dict.fromkeys(type_name(type(value)) for value in values))
    entry = {"name": "value", "kind": "POSITIONAL_OR_KEYWORD", "has_default": False, "hints": hints}
    if choices:
        entry["choices"] = choices
    return entry


def _parameter(param: inspect.Parameter, hints: dict, evidence: _Evidence, wanted: set[type]) -> dict:
    """Type hints, most trusted first: the annotation, the docstring, the default's type, the
    type tests in the body; a callable default is a callback.

    Hints not from the annotation say where they came from (`hints_from`): "docstring",
    "default", "isinstance" (the body turns other types away) or "dispatch" (the body only
    branches on these types: others may well be accepted too).
    """
    entry: dict[str, Any] = {"name": param.name, "kind": param.kind.name,
                             "has_default": param.default is not param.empty}
    if entry["has_default"]:
        entry["default"] = literals.encode(param.default)
    annotation = hints.get(param.name, param.annotation)
    info = typeinfo.from_annotation(annotation, evidence.scope, wanted)
    source = None  # the annotation
    declared = typeinfo.declared_classes(annotation) if info else None
    if declared:
        entry["declared"] = declared
    if not info:
        info, source = evidence.documented(param.name, wanted), "docstring"
    if not info and entry.get("default") and entry["default"][0] not in ("none", "list", "dict"):
        info.hints, source = [type_name(type(param.default))], "default"  # `retries=3`: an int
    if not info:
        info, closed = evidence.checked(param.name, wanted)
        source = "isinstance" if closed else "dispatch"
        if not closed and entry["has_default"] and entry["default"] is None:  # `isinstance(value, _Unset)`:
            sentinel = type_name(type(param.default))  # testing for the default, which omitting it gives
            info.hints = [h for h in info.hints if h != sentinel]
    if callable(param.default) and not isinstance(param.default, type) and not info.hints:
        info.hints, source = [CALLBACK], "default"  # e.g. timer=time.monotonic: a callback we can supply
    if not info.hints and evidence.called(param.name):
        info.hints, source = [CALLBACK], "called"  # e.g. TLRUCache(maxsize, ttu): self.__ttu(key, value, now)
    if not info.hints and param.annotation is param.empty and DUCK_TYPING[0]:
        providers = evidence.providers(param.name, wanted)  # e.g. match(command): command.script
        if providers:
            info.hints, source = providers, "attributes"
    entry["hints"] = info.hints
    if info.choices:
        entry["choices"] = info.choices
    if info.elements:
        entry["elements"] = info.elements
    if source and info:
        entry["hints_from"] = source
    if param.kind == param.VAR_KEYWORD:
        with contextlib.suppress(Exception):  # source that cannot be read or parsed: no options
            options = keyword_options(evidence.target, param.name)
            if options:
                entry["keywords"] = [[key, choices] for key, choices in options.items()]
    if param.kind == param.VAR_POSITIONAL:
        with contextlib.suppress(Exception):
            counts = arities(evidence.target, param.name)
            if counts:
                entry["arities"] = counts
    return entry


def _hints(func: Any) -> dict:
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: the raw annotations, resolved one by one
        annotations = getattr(func, "__annotations__", None)
        return dict(annotations) if isinstance(annotations, dict) else {}


@functools.lru_cache(maxsize=256)
def _class_lines(klass: type) -> list[str]:
    """A class's source, read once for all of its operations."""
    return _source(klass)[1]


def _source(func: Any, follow_wrapped: bool = True) -> tuple[str | None, list[str], int | None]:
    """(file, source lines, first line) of a function (`follow_wrapped`: of the function a wrapper
    wraps); (None, [], None) if it has none."""
    try:
        func = inspect.unwrap(func) if follow_wrapped else func
        path = inspect.getsourcefile(func)
        lines, start = inspect.getsourcelines(func)
    except (TypeError, OSError, ValueError):
        return None, [], None
    return path, lines, start
