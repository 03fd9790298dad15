"""The catalog: what can be called in the target modules, found by importing them here.

Import executes project code, so discovery happens in the worker, never in the host. The
catalog is plain JSON: operations (functions, constructors, methods, static/class
methods) with parameters, type hints, defaults and source spans, and the classes' MROs.
Standard library only.
"""

from __future__ import annotations

import importlib
import inspect
import types
import typing
from typing import Any

from . import literals
from .observe import clean_text, type_name
from .resolve import OPERATORS

# Dunders worth calling as operations (comparisons, containers, arithmetic, text).
OPERATION_DUNDERS = frozenset(OPERATORS) - {"__hash__", "__str__", "__repr__", "__iter__", "__len__",
                                            "__bool__"}
SKIPPED_BASES = (BaseException,)
CALLBACK = "collections.abc.Callable"
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def build_catalog(modules: list[str]) -> dict:
    """Import `modules`; return {"operations", "classes", "import_errors"}."""
    operations: dict[str, dict] = {}
    classes: dict[str, dict] = {}
    errors: dict[str, str] = {}
    wanted: set[type] = set()
    for name in modules:
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # SyntaxError, ImportError, SystemExit at import time
            errors[name] = clean_text(f"{type(exc).__name__}: {exc}")
            continue
        for obj in _public_members(module):
            if isinstance(obj, type):
                _add_class(obj, operations, classes, wanted)
            elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
                _add_operation(operations, f"{name}:{obj.__qualname__}", "function", obj, None, wanted)
    _add_builders(wanted, operations, classes, _project_roots(modules))
    return {"operations": list(operations.values()), "classes": classes, "import_errors": errors}


def _project_roots(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def _public_members(module: types.ModuleType) -> list[Any]:
    names = getattr(module, "__all__", None)
    if not isinstance(names, (list, tuple)):
        names = [n for n in dir(module) if not n.startswith("_")]
    members = []
    for name in names:
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) == module.__name__:
            members.append(obj)
    return members


def _in_project(klass: type, roots: set[str]) -> bool:
    return klass.__module__.split(".")[0] in roots


def _add_class(klass: type, operations: dict, classes: dict, wanted: set[type],
               constructor_only: bool = False) -> None:
    if issubclass(klass, SKIPPED_BASES) or type_name(klass) in classes:
        return
    classes[type_name(klass)] = {"mro": [type_name(k) for k in klass.__mro__ if k is not object],
                                 "abstract": inspect.isabstract(klass)}
    prefix = f"{klass.__module__}:{klass.__qualname__}"
    if not inspect.isabstract(klass):
        _add_operation(operations, prefix, "constructor", klass, klass, wanted)
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
            _add_operation(operations, f"{prefix}.{name}", "static", getattr(klass, name), klass, wanted)
        elif inspect.isfunction(static) or inspect.ismethoddescriptor(static):
            _add_operation(operations, f"{prefix}.{name}", "method", static, klass, wanted)


def _add_builders(wanted: set[type], operations: dict, classes: dict, roots: set[str]) -> None:
    """Constructors of project classes that parameters ask for, from modules not yet in the catalog."""
    for klass in sorted(wanted, key=type_name):
        if _in_project(klass, roots) and type_name(klass) not in classes:
            _add_class(klass, operations, classes, set(), constructor_only=True)


def _add_operation(operations: dict, op_id: str, kind: str, func: Any, owner: type | None,
                   wanted: set[type]) -> None:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return
    params = list(signature.parameters.values())
    if kind == "method":
        params = params[1:]
        if op_id.rsplit(".", 1)[-1] in OPERATORS:  # called as an operator: only the operands
            params = [p for p in params if p.default is p.empty and p.kind in _POSITIONAL]
    hints = _hints(func.__init__ if kind == "constructor" else func)
    entry = {
        "id": op_id,
        "kind": kind,
        "owner": type_name(owner) if owner is not None else None,
        "params": [_parameter(p, hints, wanted) for p in params],
        "returns": _hint_names(hints.get("return"), wanted),
    }
    entry.update(_source_span(func if kind != "constructor" else getattr(func, "__init__", func)))
    operations[op_id] = entry


def _parameter(param: inspect.Parameter, hints: dict, wanted: set[type]) -> dict:
    entry: dict[str, Any] = {"name": param.name, "kind": param.kind.name,
                             "has_default": param.default is not param.empty}
    if entry["has_default"]:
        entry["default"] = literals.encode(param.default)
    annotation = hints.get(param.name, param.annotation)
    entry["hints"] = _hint_names(annotation, wanted)
    if not entry["hints"] and entry.get("default") and entry["default"][0] not in ("none", "list", "dict"):
        entry["hints"] = [type_name(type(param.default))]  # `retries=3`: an int
    if callable(param.default) and not isinstance(param.default, type) and not entry["hints"]:
        entry["hints"] = [CALLBACK]  # e.g. timer=time.monotonic: a callback we can supply
    choices = _literal_choices(annotation)
    if choices:
        entry["choices"] = choices
    return entry


def _hints(func: Any) -> dict:
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        return dict(getattr(func, "__annotations__", {}) or {})


def _hint_names(annotation: Any, wanted: set[type]) -> list[str]:
    """Type names an annotation admits ("builtins.int", "pkg.mod.Class", "?Name" if unresolved)."""
    if annotation is None or annotation is inspect.Parameter.empty or annotation is typing.Any:
        return [] if annotation is not None else ["builtins.NoneType"]
    if annotation is type(None):
        return ["builtins.NoneType"]
    if isinstance(annotation, str):
        return ["?" + annotation.split("[")[0].split(".")[-1].strip("'\" ")]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [name for arg in typing.get_args(annotation) for name in _hint_names(arg, wanted)]
    if origin is typing.Literal:
        return sorted({type_name(type(v)) for v in typing.get_args(annotation)})
    if origin is not None:
        annotation = origin
    if isinstance(annotation, type):
        wanted.add(annotation)
        return [type_name(annotation)]
    return []


def _literal_choices(annotation: Any) -> list:
    if typing.get_origin(annotation) is typing.Literal:
        return [lit for v in typing.get_args(annotation) if (lit := literals.encode(v)) is not None]
    return []


def _source_span(func: Any) -> dict:
    try:
        func = inspect.unwrap(func)
        path = inspect.getsourcefile(func)
        lines, start = inspect.getsourcelines(func)
    except (TypeError, OSError, ValueError):
        return {"file": None, "line": None, "end": None}
    return {"file": path, "line": start, "end": start + len(lines) - 1}
