"""Field-coverage triples of an object graph (the generator's novelty criterion, never an oracle).

Following field coverage criteria (Godio et al., ASE 2019), a state is described by the
set of field edges it contains, `Class.field` from one object to another object or a value.
Three choices make the triples comparable across sequences, processes and hash seeds:

* Objects are named by a breadth-first walk from the roots, numbered *per type* as in the
  paper (`Node#0`, `Node#1`, ...): isomorphic graphs get the same names whatever the
  creation order or the addresses, and an unrelated object of another type earlier in
  the walk does not renumber the nodes. `id()` is only a memo key here, never emitted.
* Primitives are abstracted into buckets (`int:small`, `str:empty`, ...): with exact
  values every random literal would look new and the filter would keep everything.
* Everything is visited in a stable order: attributes sorted by name, list items by index,
  dict items and set elements sorted by a key built from primitive values only.

A triple reads `Class.field|src|dst`: `src` is the source's number among its type's objects,
`dst` is `Type#n` for an object (`Type#+` once `max_objects` are numbered) or a bucket.
Containers have pseudo-fields: `[i]` (index, `[8+]` beyond), `{key bucket}` for dict
values, `{}` for set elements, and `len`. Roots read `name|-|dst`.

The walk reads instance dictionaries and slots directly, never through `getattr`, so no
property, `__getattr__` or overridden container method of the project runs during it.
Standard library only, and no imports from the worker package (tests load it alone).
"""

from __future__ import annotations

import collections
import enum
import functools
import math
import types
import weakref
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

MAX_ITEMS = 64  # container items and object fields looked at per object
MAX_INDEX = 8  # list indexes named exactly; later items share the pseudo-field `[8+]`
MAX_SORTED = 1000  # dicts and sets larger than this are walked in iteration order, unsorted
SHORT = 16  # longest "short" str or bytes

_CALLABLE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                   types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType,
                   types.ClassMethodDescriptorType, types.GetSetDescriptorType,
                   types.MemberDescriptorType, property, staticmethod, classmethod,
                   functools.partial, types.CodeType, weakref.ReferenceType)
_PRIMITIVES = (bool, int, float, complex, str, bytes)  # bool before int: the first base found wins
_SEQUENCES = (list, tuple, collections.deque)
_BUILTIN_CONTAINERS = frozenset({list, tuple, collections.deque, dict, set, frozenset})
_kinds: dict[type, tuple[str, type | None]] = {}
_names: dict[type, str] = {}
_layouts: dict[type, tuple[bool, list[tuple[str, Any]]]] = {}


def field_triples(root: object, max_objects: int = 200, max_depth: int = 4) -> list[str]:
    """The sorted, distinct triples of the graph reachable from `root` (named `$`)."""
    return graph_triples([("$", root)], max_objects, max_depth)


def graph_triples(roots: Sequence[tuple[str, object]], max_objects: int = 200,
                  max_depth: int = 4) -> list[str]:
    """Triples of the graph reachable from several named roots, walked as one graph.

    One walk, not one per root: an object reachable from two roots keeps one name, so
    aliasing (a method returning `self`, an argument stored in the receiver) shows.
    """
    walk = _Walk(max_objects, max_depth)
    for name, value in roots:
        walk.out.add(f"{name}|-|{walk.target(value, 0)}")
    walk.run()
    return sorted(walk.out)


def bucket(value: Any) -> str | None:
    """The abstract value of a primitive, enum member, class, module or callable; None otherwise."""
    kind, base = _kind(type(value))
    if kind == "primitive":
        return _primitive_bucket(value, base)
    if kind == "none":
        return "None"
    if kind == "enum":
        return f"enum:{_name(type(value))}.{_enum_name(value)}"
    if kind == "class":
        return f"class:{_name(value)}"
    if kind in ("callable", "module"):
        return kind
    return None


class _Walk:
    def __init__(self, max_objects: int, max_depth: int) -> None:
        self.max_objects, self.max_depth = max_objects, max_depth
        self.out: set[str] = set()
        self.names: dict[int, str] = {}  # id -> "Type#n"; the objects stay alive in `numbered`
        self.numbered: list[Any] = []
        self.per_type: dict[str, int] = {}
        self.queue: collections.deque[tuple[Any, str, int]] = collections.deque()

    def target(self, value: Any, depth: int) -> str:
        """The name of `value` as the end of an edge, numbering (and queueing) a new object."""
        abstract = bucket(value)
        if abstract is not None:
            return abstract
        known = self.names.get(id(value))
        if known is not None:
            return known
        tname = _name(type(value))
        if len(self.numbered) >= self.max_objects:
            return f"{tname}#+"
        number = self.per_type.get(tname, 0)
        self.per_type[tname] = number + 1
        name = self.names[id(value)] = f"{tname}#{number}"
        self.numbered.append(value)
        if depth < self.max_depth:
            self.queue.append((value, name, depth))
        return name

    def run(self) -> None:
        while self.queue:
            value, name, depth = self.queue.popleft()
            tname, _, number = name.rpartition("#")
            for field, target in self.edges(value):
                # Targets are named in edge order right away: this is what makes the numbering BFS.
                dst = target if isinstance(target, str) else self.target(target[0], depth + 1)
                self.out.add(f"{tname}.{field}|{number}|{dst}")

    def edges(self, value: Any) -> Iterable[tuple[str, str | tuple[Any]]]:
        """(pseudo-)field and target of each edge out of `value`, in a stable order.

        A target is a ready name (str) or a 1-tuple holding the value to name.
        """
        kind, base = _kind(type(value))
        if kind == "sequence":
            yield from _sequence_edges(value, base)
        elif kind == "dict":
            yield from _dict_edges(value)
        elif kind == "set":
            yield from _set_edges(value, base)
        if type(value) not in _BUILTIN_CONTAINERS:  # a subclass may add attributes
            yield from ((name, (attr,)) for name, attr in _fields(value))


def _sequence_edges(value: Any, base: Any) -> Iterable[tuple[str, str | tuple[Any]]]:
    try:
        size = base.__len__(value)
        items = list(islice(base.__iter__(value), MAX_ITEMS))
    except Exception:
        return
    yield "len", _int_bucket(size)
    for index, item in enumerate(items):
        yield (f"[{index}]" if index < MAX_INDEX else f"[{MAX_INDEX}+]"), (item,)


def _dict_edges(value: Any) -> Iterable[tuple[str, str | tuple[Any]]]:
    try:
        size = dict.__len__(value)
        items = list(islice(dict.items(value), MAX_SORTED + 1))
    except Exception:
        return
    yield "len", _int_bucket(size)
    if size <= MAX_SORTED:
        items.sort(key=lambda item: _order_key(item[0]))
    for key, item in items[:MAX_ITEMS]:
        yield f"{{{bucket(key) or _name(type(key))}}}", (item,)


def _set_edges(value: Any, base: Any) -> Iterable[tuple[str, str | tuple[Any]]]:
    try:
        size = base.__len__(value)
        items = list(islice(base.__iter__(value), MAX_SORTED + 1))
    except Exception:
        return
    yield "len", _int_bucket(size)
    if size <= MAX_SORTED:
        items.sort(key=_order_key)
    for item in items[:MAX_ITEMS]:
        yield "{}", (item,)


def _fields(value: Any) -> list[tuple[str, Any]]:
    """Instance dictionary entries and set slots, sorted by name; dunder names left out.

    Private names stay: a cache keeping its items in `self.__data` changes state there.
    """
    found: dict[str, Any] = {}
    has_dict, slots = _layout(type(value))
    try:
        attributes = object.__getattribute__(value, "__dict__") if has_dict else None
    except Exception:
        attributes = None
    if type(attributes) is dict:
        for name, attr in list(attributes.items()):
            if type(name) is str and not (name.startswith("__") and name.endswith("__")):
                found[_clean(name)] = attr
    for name, descriptor in slots:
        if name not in found:
            try:
                found[name] = descriptor.__get__(value, type(value))
            except Exception:  # an unset slot is no edge
                continue
    return sorted(found.items())[:MAX_ITEMS]


def _layout(t: type) -> tuple[bool, list[tuple[str, Any]]]:
    """Whether instances of `t` may have a `__dict__`, and (attribute name, member descriptor)
    of every slot, private names mangled."""
    known = _layouts.get(t)
    if known is not None:
        return known
    found: list[tuple[str, Any]] = []
    for klass in t.__mro__:
        try:
            slots = klass.__dict__.get("__slots__", ())
            names = [slots] if isinstance(slots, str) else list(slots)
        except Exception:
            continue
        for slot in names:
            if not isinstance(slot, str) or slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):
                slot = f"_{klass.__name__.lstrip('_')}{slot}"
            descriptor = klass.__dict__.get(slot)
            if isinstance(descriptor, types.MemberDescriptorType):
                found.append((slot, descriptor))
    try:
        has_dict = type.__getattribute__(t, "__dictoffset__") != 0
    except Exception:
        has_dict = True
    known = _layouts[t] = (has_dict, found)
    return known


def _kind(t: type) -> tuple[str, Any]:
    """How values of type `t` are walked, and the builtin base whose methods read them."""
    known = _kinds.get(t)
    if known is not None:
        return known
    kind: tuple[str, Any] = ("object", None)
    if t is type(None):
        kind = ("none", None)
    elif issubclass(t, enum.Enum):
        kind = ("enum", None)
    elif issubclass(t, type):
        kind = ("class", None)
    elif issubclass(t, types.ModuleType):
        kind = ("module", None)
    elif issubclass(t, _CALLABLE_TYPES):
        kind = ("callable", None)
    elif issubclass(t, _PRIMITIVES):
        kind = ("primitive", next(b for b in _PRIMITIVES if issubclass(t, b)))
    elif issubclass(t, _SEQUENCES):
        kind = ("sequence", next(b for b in _SEQUENCES if issubclass(t, b)))
    elif issubclass(t, dict):
        kind = ("dict", dict)
    elif issubclass(t, (set, frozenset)):
        kind = ("set", set if issubclass(t, set) else frozenset)
    _kinds[t] = kind
    return kind


def _name(t: type) -> str:
    known = _names.get(t)
    if known is None:
        try:
            known = f"{t.__module__}.{t.__qualname__}"
        except Exception:
            known = type.__repr__(t)
        known = _names[t] = _clean(known)
    return known


def _enum_name(member: Any) -> str:
    try:
        return _clean(str(object.__getattribute__(member, "_name_")))  # "A|B" for combined flags
    except Exception:
        return "?"


def _clean(name: str) -> str:
    """`name` without the separators of a triple, so that triples split unambiguously."""
    return name.replace("|", "%7C").replace("#", "%23") if "|" in name or "#" in name else name


def _primitive_bucket(value: Any, base: Any) -> str:
    if base is bool:
        return "True" if value else "False"
    if base is int:
        return _int_bucket(int.__index__(value))
    if base is float:
        number = float.__float__(value)
        if math.isnan(number):
            return "float:nan"
        if math.isinf(number):
            return "float:inf" if number > 0 else "float:-inf"
        if number == 0:
            return "float:0"
        return "float:neg" if number < 0 else ("float:frac" if number < 1 else "float:pos")
    if base is complex:
        return "complex:0" if complex.__eq__(value, 0) is True else "complex"
    size = base.__len__(value)
    kind = "str" if base is str else "bytes"
    if size == 0:
        return f"{kind}:empty"
    label = f"{kind}:1" if size == 1 else (f"{kind}:short" if size <= SHORT else f"{kind}:long")
    if base is str and str.isascii(value) and str.isdigit(value):
        label += ":digits"
    return label


def _int_bucket(number: int) -> str:
    if number < 0:
        return "int:neg"
    if number <= 1:
        return f"int:{number}"
    return "int:small" if number < 10 else ("int:medium" if number < 1000 else "int:large")


def _order_key(value: Any, depth: int = 3) -> tuple[str, str]:
    """A sort key for dict keys and set elements built from primitive values only.

    Deterministic across processes and hash seeds, and it never runs project code (no
    `__repr__`, no `__lt__`). Objects are ordered by their type and shallow primitive
    fields; equal keys keep their iteration order (the sort is stable).
    """
    t = type(value)
    kind, base = _kind(t)
    if kind == "primitive":
        return _name(t), _primitive_text(value, base)
    if kind in ("none", "enum", "class", "callable", "module"):
        return _name(t), bucket(value) or ""
    if kind in ("sequence", "set") and depth > 0:
        try:
            texts = [_order_key(item, depth - 1)[1] for item in islice(base.__iter__(value), MAX_INDEX)]
        except Exception:
            texts = []
        return _name(t), ",".join(texts if kind == "sequence" else sorted(texts))
    shallow = [f"{n}={_primitive_text(v, _kind(type(v))[1])}" for n, v in _fields(value)[:MAX_INDEX]
               if _kind(type(v))[0] == "primitive"]
    return _name(t), ",".join(shallow)


def _primitive_text(value: Any, base: Any) -> str:
    if base is int and not -(10**60) < value < 10**60:
        return f"int~{int.bit_length(value)}:{int.__mod__(value, 1_000_003)}"  # repr of huge ints raises
    if base in (str, bytes) and base.__len__(value) > 100:
        return base.__repr__(base.__getitem__(value, slice(0, 100))) + f"~{base.__len__(value)}"
    return base.__repr__(value)
