"""Parameter types beyond plain annotations: flattened annotations, docstrings, isinstance checks.

The host chooses argument values by type name, and a parameter it knows nothing about gets
values of any type, most of which the function rejects before reaching the changed code.
So the worker reads every source of type information at hand, most trusted first: the
annotation (flattened to concrete type names the host can make: `Sequence[str]` is a list),
the docstring (Google, NumPy and reST styles: most untyped code documents its types), and
the `isinstance` checks in the body. Standard library only.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc as abc
import contextlib
import enum
import inspect
import io
import numbers
import os
import pathlib
import re
import sys
import textwrap
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from . import literals
from .compat import UNION_ORIGINS, is_new_type, is_typeddict, typing_forms
from .observe import type_name

NONE = "builtins.NoneType"
CALLBACK = "collections.abc.Callable"
FORMAT_SPEC = "difforacle.FormatSpec"  # a `format(obj, spec)` spec: the host builds mini-language specs
MAX_DEPTH = 6  # nesting of annotations followed (list[dict[str, list[...]]])
MAX_CHOICES = 64

# Abstract types the host cannot make, and the builtins that satisfy them; () is "anything".
CONCRETE: dict[Any, tuple[type, ...]] = {
    abc.Iterable: (list,), abc.Collection: (list,), abc.Sequence: (list,), abc.MutableSequence: (list,),
    abc.Reversible: (list,), abc.Container: (list,), abc.Sized: (list,),
    abc.Mapping: (dict,), abc.MutableMapping: (dict,), abc.Set: (set,), abc.MutableSet: (set,),
    abc.Hashable: (int, str), numbers.Number: (int, float), numbers.Complex: (int, float),
    numbers.Real: (int, float), numbers.Rational: (int,), numbers.Integral: (int,),
    typing.SupportsInt: (int,), typing.SupportsFloat: (float, int), typing.SupportsIndex: (int,),
    typing.SupportsAbs: (int, float), object: (),
    # Protocols of the standard library, and the concrete types the host can make for them.
    typing.IO: (io.StringIO,), typing.TextIO: (io.StringIO,), io.IOBase: (io.StringIO,),
    io.TextIOBase: (io.StringIO,), io.TextIOWrapper: (io.StringIO,), typing.BinaryIO: (io.BytesIO,),
    io.BufferedIOBase: (io.BytesIO,), io.RawIOBase: (io.BytesIO,), io.BufferedReader: (io.BytesIO,),
    os.PathLike: (pathlib.Path,), pathlib.PurePath: (pathlib.Path,), pathlib.PurePosixPath: (pathlib.Path,),
}
# The standard ABCs and protocols an annotation may name that a class satisfies without naming
# them among its bases: what `declared_classes` checks through the class's `protocols_of`.
PROTOCOL_CLASSES: tuple[type, ...] = (
    *(k for k in CONCRETE if k is not object),
    abc.Callable, abc.Iterator, abc.Generator, abc.Awaitable, abc.AsyncIterable, abc.AsyncIterator,
    abc.KeysView, abc.ItemsView, abc.ValuesView,
)
_ABC_META = type(abc.Iterable)  # abc.ABCMeta
FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)
_UNKNOWN_FORMS = typing_forms("Any", "NoReturn", "Never", "Self", "LiteralString")
_WRAPPERS = typing_forms("Annotated", "ClassVar", "Final", "Required", "NotRequired")
_SAMPLES = {"builtins.int": ["int", 1], "builtins.str": ["str", "a"], "builtins.float": ["float", "1.0"],
            "builtins.bool": ["bool", True], "builtins.bytes": ["bytes", "61"], NONE: ["none"],
            "builtins.list": ["list", []], "builtins.tuple": ["tuple", []], "builtins.dict": ["dict", []],
            "builtins.set": ["set", []], "builtins.frozenset": ["frozenset", []]}
_MISSING = object()

# Type words of docstrings ("list of str", "integer", "array_like"); () is "anything".
_INT, _FLOAT, _STR = ("builtins.int",), ("builtins.float",), ("builtins.str",)
WORDS: dict[str, tuple[str, ...]] = {
    "int": _INT, "integer": _INT, "long": _INT, "float": _FLOAT, "double": _FLOAT, "real": _FLOAT,
    "number": ("builtins.int", "builtins.float"), "numeric": ("builtins.int", "builtins.float"),
    "scalar": ("builtins.int", "builtins.float"), "str": _STR, "string": _STR, "unicode": _STR,
    "text": _STR, "path": _STR, "path-like": _STR, "pathlike": _STR, "bytes": ("builtins.bytes",),
    "bool": ("builtins.bool",), "boolean": ("builtins.bool",), "list": ("builtins.list",),
    "array": ("builtins.list",), "array-like": ("builtins.list",), "array_like": ("builtins.list",),
    "sequence": ("builtins.list",), "iterable": ("builtins.list",), "collection": ("builtins.list",),
    "tuple": ("builtins.tuple",), "dict": ("builtins.dict",), "dictionary": ("builtins.dict",),
    "mapping": ("builtins.dict",), "set": ("builtins.set",), "frozenset": ("builtins.frozenset",),
    "none": (NONE,), "nonetype": (NONE,), "callable": (CALLBACK,), "function": (CALLBACK,),
    "func": (CALLBACK,), "callback": (CALLBACK,), "object": (), "any": (), "anything": (),
    "file-like": ("_io.StringIO",), "file-like object": ("_io.StringIO",), "file object": ("_io.StringIO",),
    "file": ("_io.StringIO",), "stream": ("_io.StringIO",),
    "datetime": ("datetime.datetime",), "date": ("datetime.date",), "timedelta": ("datetime.timedelta",),
}
_SEQUENCE_HINTS = ("builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset")


@dataclass
class TypeInfo:
    """What is known of a parameter's type, in the catalog's terms.

    `hints`: type names in order of appearance; `choices`: literals, set only when they are
    every value the type admits (`Literal[...]`, an `{'a', 'b'}` docstring set); `elements`:
    container hint -> hints per type argument (`dict[str, int]` -> {"builtins.dict":
    [["builtins.str"], ["builtins.int"]]}), extra information the host may use.
    """

    hints: list[str] = field(default_factory=list)
    choices: list[list] = field(default_factory=list)
    elements: dict[str, list[list[str]]] = field(default_factory=dict)

    def add_hints(self, names: typing.Iterable[str]) -> None:
        for name in names:
            if name not in self.hints:
                self.hints.append(name)

    def __bool__(self) -> bool:
        return bool(self.hints or self.choices)


def union(infos: list[TypeInfo]) -> TypeInfo:
    """The alternatives together; choices survive only if every alternative but None has some."""
    result = TypeInfo()
    for info in infos:
        result.add_hints(info.hints)
        for container, args in info.elements.items():
            result.elements.setdefault(container, args)
    if all(info.choices or info.hints == [NONE] for info in infos):
        seen: set[str] = set()
        for choice in (c for info in infos for c in info.choices):
            if repr(choice) not in seen and len(seen) < MAX_CHOICES:
                seen.add(repr(choice))
                result.choices.append(choice)
    return result


@dataclass
class NameScope:
    """Where the names in a function's annotations, docstring and body are looked up."""

    globalns: dict[str, Any]
    localns: dict[str, Any]

    @staticmethod
    def of(func: Any, owner: type | None = None) -> NameScope:
        with contextlib.suppress(ValueError):  # a wrapper cycle
            func = inspect.unwrap(func)
        globalns = getattr(func, "__globals__", None)
        if not isinstance(globalns, dict):  # a class, a builtin, an inherited object.__init__
            module = sys.modules.get(getattr(func, "__module__", None) or getattr(owner, "__module__", ""))
            globalns = vars(module) if module is not None else {}
        localns = dict(vars(owner)) if owner is not None else {}
        if owner is not None:
            localns.setdefault(owner.__name__, owner)
        return NameScope(globalns, localns)

    def lookup(self, dotted: str) -> Any:
        """The object a (dotted) name stands for, or _MISSING; never runs project code but getattr."""
        first, *rest = dotted.split(".")
        for namespace in (self.localns, self.globalns, vars(builtins), vars(typing)):
            if first in namespace:
                obj = namespace[first]
                break
        else:
            return self._module_attribute(dotted)
        for part in rest:
            try:
                obj = getattr(obj, part)
            except Exception:
                return _MISSING
        return obj

    @staticmethod
    def _module_attribute(dotted: str) -> Any:
        """`pkg.mod.Class` through an already imported module."""
        module_name, _, attribute = dotted.rpartition(".")
        while module_name:
            module = sys.modules.get(module_name)
            if module is not None:
                obj: Any = module
                for part in attribute.split("."):
                    obj = getattr(obj, part, _MISSING)
                    if obj is _MISSING:
                        break
                return obj
            module_name, _, head = module_name.rpartition(".")
            attribute = f"{head}.{attribute}"
        return _MISSING


# ---------------------------------------------------------------- annotations


def from_annotation(annotation: Any, scope: NameScope, wanted: set[type], depth: int = 0) -> TypeInfo:
    """Flatten an annotation (object or PEP 563 string) to concrete type names and choices.

    Project classes it names are added to `wanted` (their constructors build arguments).
    """
    info = TypeInfo()
    if depth > MAX_DEPTH or annotation is inspect.Parameter.empty or _one_of(annotation, _UNKNOWN_FORMS):
        return info
    if annotation is None or annotation is type(None):
        return TypeInfo([NONE])
    if isinstance(annotation, str):
        return _from_string(annotation, scope, wanted, depth)
    if isinstance(annotation, typing.ForwardRef):
        return _from_string(annotation.__forward_arg__, scope, wanted, depth)
    if isinstance(annotation, typing.TypeVar):
        bounds = annotation.__constraints__ or ((annotation.__bound__,) if annotation.__bound__ else ())
        return union([from_annotation(b, scope, wanted, depth + 1) for b in bounds]) if bounds else info
    if is_new_type(annotation):
        return from_annotation(annotation.__supertype__, scope, wanted, depth + 1)
    if isinstance(annotation, tuple):  # isinstance targets: (int, float)
        return union([from_annotation(a, scope, wanted, depth + 1) for a in annotation])
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in UNION_ORIGINS:
        return union([from_annotation(a, scope, wanted, depth + 1) for a in args])
    if origin is typing.Literal:
        return _literal(args, wanted)
    if _one_of(origin, _WRAPPERS):
        return from_annotation(args[0], scope, wanted, depth + 1) if args else info
    if origin is not None:
        arg_infos = [] if origin is abc.Callable else \
            [from_annotation(a, scope, wanted, depth + 1) for a in args if a is not Ellipsis]
        return _container(origin, arg_infos, wanted)
    if is_typeddict(annotation):
        return _typed_dict(annotation, scope, wanted, depth)
    if isinstance(annotation, type):
        return TypeInfo(_type_hints(annotation, wanted))
    return info  # a ParamSpec, a module, a value: nothing a generator can use


def declared_classes(annotation: Any, depth: int = 0) -> list[str] | None:
    """The classes an evaluated annotation names, one of which an argument must be an instance of
    (`Collection[str]`: collections.abc.Collection, where the hints say list, what the host builds);
    None when the annotation admits what no such class check decides: Any, a type variable without
    bounds, a string left unevaluated, a `typing.Protocol` or an ABC other than the standard
    library's (a class may satisfy those without naming them among its bases)."""
    if depth > MAX_DEPTH or annotation is inspect.Parameter.empty or _one_of(annotation, _UNKNOWN_FORMS):
        return None
    if annotation is None or annotation is type(None):
        return [NONE]
    if is_new_type(annotation):
        return declared_classes(annotation.__supertype__, depth + 1)
    if isinstance(annotation, typing.TypeVar):
        bounds = annotation.__constraints__ or ((annotation.__bound__,) if annotation.__bound__ else ())
        return _all_declared(bounds, depth) if bounds else None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in UNION_ORIGINS:
        return _all_declared(args, depth)
    if origin is typing.Literal:
        return list(dict.fromkeys(type_name(type(value)) for value in args))
    if _one_of(origin, _WRAPPERS):
        return declared_classes(args[0], depth + 1) if args else None
    klass = origin if origin is not None else annotation
    if not isinstance(klass, type) or getattr(klass, "_is_protocol", False):
        return None
    if isinstance(klass, _ABC_META) and klass not in PROTOCOL_CLASSES:
        return None  # a project ABC: a class may be registered with it
    return [type_name(klass)]


def _all_declared(annotations: typing.Iterable[Any], depth: int) -> list[str] | None:
    found = [declared_classes(a, depth + 1) for a in annotations]
    if any(names is None for names in found):
        return None
    return list(dict.fromkeys(name for names in found for name in names or ()))


def protocols_of(klass: type) -> list[str]:
    """The standard library's ABCs and protocols of PROTOCOL_CLASSES that `klass` satisfies, by
    its bases, its registration or its methods (`__iter__` makes it an Iterable)."""
    found = []
    for protocol in PROTOCOL_CLASSES:
        with contextlib.suppress(Exception):  # a protocol with data members refuses issubclass
            if issubclass(klass, protocol):
                found.append(type_name(protocol))
    return found


def _one_of(obj: Any, forms: tuple) -> bool:
    """Membership by identity: annotations may be any object, with any __eq__."""
    return any(obj is form for form in forms)


def _type_hints(klass: type, wanted: set[type]) -> list[str]:
    try:
        concrete = CONCRETE.get(klass)
    except TypeError:  # a metaclass without __hash__
        concrete = None
    if concrete is not None:
        return [type_name(t) for t in concrete]
    if issubclass(klass, FUNCTION_TYPES):
        return [CALLBACK]
    wanted.add(klass)
    return [type_name(klass)]


def _container(origin: Any, arg_infos: list[TypeInfo], wanted: set[type]) -> TypeInfo:
    info = TypeInfo(_type_hints(origin, wanted) if isinstance(origin, type) else [])
    if any(arg_infos):
        for hint in info.hints:
            if hint != CALLBACK:
                info.elements[hint] = [a.hints for a in arg_infos]
    return info


def _literal(values: tuple, wanted: set[type]) -> TypeInfo:
    info = TypeInfo()
    for value in values:
        if isinstance(value, enum.Enum):
            wanted.add(type(value))
        info.add_hints([type_name(type(value))])
        literal = literals.encode(value)
        if literal is not None and literal not in info.choices:
            info.choices.append(literal)
    if len(info.choices) < len(values):
        info.choices = []  # enum members are not literals: a partial list would exclude them
    return info


def _typed_dict(klass: type, scope: NameScope, wanted: set[type], depth: int) -> TypeInfo:
    """A dict; choices: one with the required keys filled, one with every key (if they can be)."""
    info = TypeInfo(["builtins.dict"])
    try:
        fields = typing.get_type_hints(klass)
    except Exception:
        fields = dict(getattr(klass, "__annotations__", {}))
    required = _required_keys(klass, fields)
    values = {}
    for key, annotation in fields.items():
        sample = _sample(from_annotation(annotation, NameScope.of(klass, klass), wanted, depth + 1))
        if sample is not None:
            values[key] = sample
        elif key in required:
            return info
    for keys in ([k for k in fields if k in required], list(values)):
        choice = ["dict", [[["str", k], values[k]] for k in keys]]
        if choice not in info.choices:
            info.choices.append(choice)
    return info


def _required_keys(klass: type, fields: dict[str, Any]) -> set[str]:
    """`__required_keys__`, except that under PEP 563 CPython cannot see `NotRequired["..."]` or
    `Required["..."]`. Totality is CPython's to apply, class body by class body: a `total=False`
    class's keys are optional, those it inherits from a total one are not."""
    required = set(getattr(klass, "__required_keys__", fields))
    for key, raw in getattr(klass, "__annotations__", {}).items():
        raw = raw.__forward_arg__ if isinstance(raw, typing.ForwardRef) else raw
        if isinstance(raw, str) and "[" in raw:
            qualifier = raw.split("[", 1)[0].strip().rsplit(".", 1)[-1]
            if qualifier == "NotRequired":
                required.discard(key)
            elif qualifier == "Required":
                required.add(key)
    return required


def _sample(info: TypeInfo) -> list | None:
    if info.choices:
        return info.choices[0]
    return next((_SAMPLES[h] for h in info.hints if h in _SAMPLES), None)


# ---------------------------------------------------------------- annotation text


def _from_string(text: str, scope: NameScope, wanted: set[type], depth: int) -> TypeInfo:
    """A string annotation: evaluated like typing.get_type_hints does, else read name by name.

    Reading it from the syntax tree keeps what is known when one name is not (a class
    imported under TYPE_CHECKING): `Optional[Node]` -> ["?Node", "builtins.NoneType"].
    """
    try:
        obj = eval(text, dict(scope.globalns), dict(scope.localns))  # what get_type_hints does
    except Exception:
        obj = _MISSING
    if obj is not _MISSING and not isinstance(obj, str):
        return from_annotation(obj, scope, wanted, depth + 1)
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return TypeInfo(["?" + text.split("[")[0].split(".")[-1].strip("'\" ")])
    return from_node(node, scope, wanted, strict=False, depth=depth)


def from_node(node: ast.expr, scope: NameScope, wanted: set[type], strict: bool, depth: int = 0) -> TypeInfo:
    """Flatten the syntax of a type expression. Names are looked up in `scope`; one that is not
    found becomes "?Name", or (`strict`, for docstrings: prose is no promise) is left out."""
    info = TypeInfo()
    if depth > MAX_DEPTH:
        return info
    if isinstance(node, ast.Constant):
        if node.value is None:
            return TypeInfo([NONE])
        return _from_string(node.value, scope, wanted, depth + 1) \
            if isinstance(node.value, str) and not strict else info
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([from_node(side, scope, wanted, strict, depth + 1) for side in (node.left, node.right)])
    if isinstance(node, ast.Tuple):
        return union([from_node(item, scope, wanted, strict, depth + 1) for item in node.elts])
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _from_name(node, scope, wanted, strict, depth)
    if not isinstance(node, ast.Subscript):
        return info
    base = scope.lookup(dotted) if (dotted := _dotted(node.value)) else _MISSING
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if base is typing.Optional:
        return union([from_node(items[0], scope, wanted, strict, depth + 1), TypeInfo([NONE])])
    if base is typing.Union:
        return union([from_node(item, scope, wanted, strict, depth + 1) for item in items])
    if base is typing.Literal:
        values = [_literal_value(item, scope) for item in items]
        return _literal(tuple(v for v in values if v is not _MISSING), wanted)
    if _one_of(base, _WRAPPERS):
        return from_node(items[0], scope, wanted, strict, depth + 1)
    if base is _MISSING:
        return info if strict or not dotted else TypeInfo(["?" + dotted.rsplit(".", 1)[-1]])
    origin = typing.get_origin(base) or base  # typing.List -> list
    arg_infos = [] if origin is abc.Callable else \
        [from_node(item, scope, wanted, strict, depth + 1) for item in items
         if not (isinstance(item, ast.Constant) and item.value is Ellipsis)]
    return _container(origin, arg_infos, wanted)


def _from_name(node: ast.Name | ast.Attribute, scope: NameScope, wanted: set[type], strict: bool,
               depth: int) -> TypeInfo:
    dotted = _dotted(node) or ""
    if strict and (dotted.islower() or dotted in ("None", "NoneType")) and dotted.lower() in WORDS:
        return TypeInfo(list(WORDS[dotted.lower()]))  # `callable` is a function, not a type
    obj = scope.lookup(dotted) if dotted else _MISSING
    if obj is _MISSING and strict and "." in dotted:  # `shapes.Point` in prose, Point imported
        obj = scope.lookup(dotted.rsplit(".", 1)[-1])
    if obj is not _MISSING and _is_type_like(obj):
        return from_annotation(obj, scope, wanted, depth + 1)
    if strict:
        return TypeInfo(list(WORDS.get(dotted.lower(), ())))
    return TypeInfo(["?" + dotted.rsplit(".", 1)[-1]]) if dotted else TypeInfo()


def _is_type_like(obj: Any) -> bool:
    """A class or a typing form: not a function or constant that happens to share the name."""
    return isinstance(obj, (type, typing.TypeVar)) or is_new_type(obj) or obj is None \
        or typing.get_origin(obj) is not None or _one_of(obj, _UNKNOWN_FORMS)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _literal_value(node: ast.expr, scope: NameScope) -> Any:
    """A Literal[...] item: a constant, or an enum member (`Color.RED`)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        dotted = _dotted(node)
        return scope.lookup(dotted) if dotted else _MISSING


# ---------------------------------------------------------------- docstrings

_GOOGLE_HEADER = re.compile(r"(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Kwargs"
                            r"|Other Parameters)\s*:", re.IGNORECASE)
_NUMPY_HEADERS = frozenset({"parameters", "other parameters", "keyword arguments", "params", "arguments"})
_NUMPY_ENTRY = re.compile(r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*:\s*(.*\S)")
_REST_PARAM = re.compile(r"^\s*:(?:param|parameter|arg|argument|key|keyword)\s+([^:\n]+?)\s+(\*{0,2}\w+)\s*:",
                         re.MULTILINE)
_REST_TYPE = re.compile(r"^\s*[:@]type\s+(\*{0,2}\w+)\s*:\s*(.+?)\s*$", re.MULTILINE)
_ROLE = re.compile(r":(?:[\w-]+:)*[\w-]+:`~?([^`]*)`")  # :class:`~pkg.Foo` -> pkg.Foo
_DROPPED = re.compile(r"\((?:optional|default[^)]*)\)|\boptional\b\.?$", re.IGNORECASE)
_ALTERNATIVES = re.compile(r"[,|;]| or ")
_NOT_TYPES = ("default", "by default", "keyword")  # "default 'C'", "keyword-only"
_CONTAINER_OF = re.compile(r"([\w.\-]+)\s+(?:of|containing)\s+(.+)", re.IGNORECASE | re.DOTALL)


def docstring_types(doc: str | None) -> dict[str, str]:
    """Parameter name -> the type text its docstring gives (reST, Google and NumPy styles)."""
    if not doc or ":" not in doc:  # every style puts a colon after the name or the header
        return {}
    found: dict[str, str] = {}
    for match in _REST_TYPE.finditer(doc):
        found.setdefault(match[1].lstrip("*"), match[2])
    for match in _REST_PARAM.finditer(doc):
        found.setdefault(match[2].lstrip("*"), match[1])
    lines = doc.expandtabs().splitlines()
    _google(lines, found)
    _numpy(lines, found)
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str], found: dict[str, str]) -> None:
    """`Args:` then `name (type): text` entries, indented, with deeper continuation lines."""
    for number, line in enumerate(lines):
        if not _GOOGLE_HEADER.fullmatch(line.strip()):
            continue
        base, entry = _indent(line), None
        for text in lines[number + 1:]:
            if not text.strip():
                continue
            if _indent(text) <= base:
                break
            entry = _indent(text) if entry is None else entry
            if _indent(text) == entry and (parsed := _google_entry(text.strip())):
                found.setdefault(*parsed)


def _google_entry(text: str) -> tuple[str, str] | None:
    match = re.match(r"(\*{0,2}\w+)\s*\(", text)
    if match is None:
        return None
    depth, start = 1, match.end()
    for position in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return (match[1].lstrip("*"), text[start:position]) \
                if text[position + 1:].lstrip().startswith(":") else None
    return None


def _numpy(lines: list[str], found: dict[str, str]) -> None:
    """`Parameters` underlined with dashes, then `name : type` entries at the header's indent."""
    underline = [bool(re.fullmatch(r"-{3,}", line.strip())) for line in lines] + [False, False]
    for number, line in enumerate(lines):
        if line.strip().lower() not in _NUMPY_HEADERS or not underline[number + 1]:
            continue
        base = _indent(line)
        for offset, text in enumerate(lines[number + 2:], number + 2):
            if not text.strip() or _indent(text) > base:
                continue
            if _indent(text) < base or underline[offset + 1]:
                break  # dedented, or the next section's header
            if match := _NUMPY_ENTRY.fullmatch(text.strip()):
                for name in match[1].split(","):
                    found.setdefault(name.strip().lstrip("*"), match[2])


def from_doc_text(text: str, scope: NameScope, wanted: set[type], depth: int = 0) -> TypeInfo:
    """Type prose to hints: `int`, `list of str`, `int or None`, `str, optional`,
    `{'a', 'b'}` (choices), `Optional[Node]`, class names of the module."""
    text = re.sub(r"~(?=\w)", "", _ROLE.sub(r"\1", text)).replace("`", "")
    text = _DROPPED.sub("", text)
    if depth > MAX_DEPTH:
        return TypeInfo()
    infos = []
    for alternative in _split(text):
        alternative = alternative.strip().rstrip(".").strip()
        lowered = alternative.lower()
        if not alternative or lowered == "optional" or lowered.startswith(_NOT_TYPES):
            continue
        infos.append(_doc_alternative(alternative, scope, wanted, depth))
    return union(infos) if infos else TypeInfo()


def _split(text: str) -> list[str]:
    """Alternatives at the top level of brackets: split on `,`, `|`, `;` and ` or `."""
    if not any(bracket in text for bracket in "([{"):
        return _ALTERNATIVES.split(text)  # the common case, without walking characters
    parts, current, depth, position = [], [], 0, 0
    while position < len(text):
        char = text[position]
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        if depth == 0 and (char in ",|;" or text.startswith(" or ", position)):
            parts.append("".join(current))
            current = []
            position += 4 if char == " " else 1
            continue
        current.append(char)
        position += 1
    parts.append("".join(current))
    return parts


def _doc_alternative(text: str, scope: NameScope, wanted: set[type], depth: int) -> TypeInfo:
    if text.startswith("{") and text.endswith("}"):
        try:
            values = ast.literal_eval(f"[{text[1:-1]}]")
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return TypeInfo(["builtins.dict"])  # {str: int}
        return _literal(tuple(values), wanted)
    if match := _CONTAINER_OF.fullmatch(text):
        element = from_doc_text(match[2].strip().strip("()[]"), scope, wanted, depth + 1)
        if match[1].lower() in ("instance", "subclass", "object"):
            return element  # "instance of Point"
        container = _doc_alternative(match[1], scope, wanted, depth + 1)
        for hint in container.hints:
            if hint in _SEQUENCE_HINTS and element.hints:
                container.elements[hint] = [element.hints]
        return container
    words = text.lower().split()
    if len(words) > 2 and " ".join(words[-2:]) in WORDS:  # "a file-like object"
        return TypeInfo(list(WORDS[" ".join(words[-2:])]))
    if len(words) > 1 and words[-1] in WORDS:  # "positive int", "non-negative integer"
        return TypeInfo(list(WORDS[words[-1]]))
    if text.lower() in WORDS or (text.lower().endswith("s") and text.lower()[:-1] in WORDS):
        return TypeInfo(list(WORDS.get(text.lower(), WORDS.get(text.lower()[:-1], ()))))
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return TypeInfo()
    return from_node(node, scope, wanted, strict=True, depth=depth + 1)


# ---------------------------------------------------------------- isinstance checks

_TYPE_TESTS = (ast.Is, ast.Eq, ast.In)


@dataclass
class TypeTest:
    """A type test of a parameter in a function's body.

    `closed`: values of other types are turned away (`if not isinstance(p, T): raise ...`,
    `assert isinstance(p, T)`, an isinstance if/elif chain whose else raises); otherwise the
    body merely dispatches on the type and other types go on to the code after it.
    """

    target: ast.expr
    closed: bool


def isinstance_targets(lines: list[str], names: typing.Collection[str]) -> dict[str, list[TypeTest]]:
    """Parameter name -> the type tests a function's body applies to it, in source order.

    `lines`: the function's source (inspect.getsourcelines). `isinstance(p, (int, float))`,
    `isinstance(p, str | bytes)`, `type(p) is int`, `type(p) in (list, tuple)`. Read, never
    run; see `checked_types`.
    """
    source = "".join(lines)
    if "isinstance(" not in source and "type(" not in source:
        return {}  # most functions: no parse needed
    tree = _parse(lines)
    if tree is None:
        return {}
    checks: list[tuple[int, int, str, ast.expr, ast.AST]] = []
    for child in ast.walk(tree):
        if isinstance(child, ast.Call) and _called(child, "isinstance", 2) \
                and isinstance(child.args[0], ast.Name) and child.args[0].id in names:
            checks.append((child.lineno, child.col_offset, child.args[0].id, child.args[1], child))
        elif isinstance(child, ast.Compare) and len(child.ops) == 1 \
                and isinstance(child.ops[0], _TYPE_TESTS) and (name := _type_of(child.left, names)):
            checks.append((child.lineno, child.col_offset, name, child.comparators[0], child))
    if not checks:
        return {}
    closed = _closed_tests(tree)
    found: dict[str, list[TypeTest]] = {}
    for _, _, name, target, test in sorted(checks, key=lambda c: c[:2]):
        found.setdefault(name, []).append(TypeTest(target, id(test) in closed))
    return found


def checked_types(checks: list[TypeTest], scope: NameScope, wanted: set[type]) -> tuple[TypeInfo, bool]:
    """The types `isinstance_targets` found for one parameter, and whether they are all it takes.

    A closed test anywhere makes them all it takes: every other type was turned away.
    """
    infos = [info for check in checks if (info := _target(check.target, scope, wanted))]
    closed = any(check.closed for check in checks)
    return (union(infos) if infos else TypeInfo()), closed


def _closed_tests(tree: ast.AST) -> set[int]:
    """ids of the nodes inside tests that turn other types away (see `TypeTest`)."""
    closed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            closed.update(id(n) for n in ast.walk(node.test))
        elif isinstance(node, ast.If):
            if _rejects(node.body):  # if not isinstance(p, T): raise
                closed.update(id(n) for negated in ast.walk(node.test)
                              if isinstance(negated, ast.UnaryOp) and isinstance(negated.op, ast.Not)
                              for n in ast.walk(negated.operand))
            chain, tail = [node], node
            while len(tail.orelse) == 1 and isinstance(tail.orelse[0], ast.If):
                tail = tail.orelse[0]
                chain.append(tail)
            if tail.orelse and _rejects(tail.orelse):  # if isinstance(...): ... elif ...: ... else: raise
                closed.update(id(n) for link in chain for n in ast.walk(link.test))
    return closed


def _rejects(body: list[ast.stmt]) -> bool:
    """The block raises, or returns NotImplemented (a binary dunder declining the operand)."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return True
        value = stmt.value if isinstance(stmt, ast.Return) else None
        if isinstance(value, ast.Name) and value.id == "NotImplemented":
            return True
    return False


def _called(node: ast.Call, function: str, arguments: int) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == function and len(node.args) == arguments


def _type_of(node: ast.expr, names: typing.Collection[str]) -> str | None:
    """`p` if node is `type(p)` for a parameter p."""
    if isinstance(node, ast.Call) and _called(node, "type", 1) and isinstance(node.args[0], ast.Name) \
            and node.args[0].id in names:
        return node.args[0].id
    return None


def _target(node: ast.expr, scope: NameScope, wanted: set[type]) -> TypeInfo:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return union([_target(item, scope, wanted) for item in node.elts])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return union([_target(node.left, scope, wanted), _target(node.right, scope, wanted)])
    if isinstance(node, ast.Constant) and node.value is None:
        return TypeInfo([NONE])
    dotted = _dotted(node)
    obj = scope.lookup(dotted) if dotted else _MISSING
    if isinstance(obj, tuple):  # NUMBERS = (int, float) at module level
        obj = tuple(item for item in obj if isinstance(item, type))
    if isinstance(obj, (type, tuple)) or (obj is not _MISSING and typing.get_origin(obj) is not None):
        return from_annotation(obj, scope, wanted)
    return TypeInfo()


def called_parameters(lines: typing.Sequence[str], names: typing.Collection[str],
                      class_lines: typing.Sequence[str] = ()) -> set[str]:
    """The parameters a function calls: `p(...)` in its body, or, when it stores one on the
    instance (`self.attr = p`, as a constructor does with a time-to-use function), a call of
    `self.attr(...)` anywhere in the class (`class_lines`). Such a parameter takes a callable:
    without annotations or docstrings, its use is the only evidence of its type.
    """
    function = _parse(lines)
    if function is None:
        return set()
    called = {node.func.id for node in ast.walk(function)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names}
    stored: dict[str, str] = {}  # attribute -> the parameter assigned to it
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    stored[target.attr] = node.value.id
    if stored and class_lines and (owner := _parse(class_lines)) is not None:
        called.update(stored[node.func.attr] for node in ast.walk(owner)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                      and node.func.attr in stored)
    return called


def _parse(lines: typing.Sequence[str]) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent("".join(lines)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a body less indented than its def
        return None


def attributes_used(lines: typing.Sequence[str], names: typing.Collection[str]) -> dict[str, set[str]]:
    """Parameter name -> the attributes the function's body reads or calls on it (`command.script`,
    `command.output.lower()`): what an object passed there must provide. Read, never run."""
    function = _parse(lines)
    if function is None:
        return {}
    used: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            used.setdefault(node.value.id, set()).add(node.attr)
    return used
