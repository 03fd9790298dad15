"""Stable, comparable snapshots of values and object states (the regression oracles).

A snapshot is flat: a dict from an *observation key* to a *leaf*. Keys read as Python
access paths so the renderer can turn one back into an assertion (their grammar is in
`protocol`):

    "<stmt>/<var>"     the value made by statement <var>, observed after statement <stmt>
    ".name"            public attribute            ":name"   property observer
    ".name()"          zero-argument observer      "[k]"     item (k is a repr of int/str)
    "@len" "@list" "@str" "@repr"                  len(x), list(x), str(x), repr(x)
    "<stmt>/!"         the exception statement <stmt> raised

(a name that is not an identifier is quoted: `.' .encoding'`). Leaves are JSON lists led by a
tag (see `leaf`): no memory addresses, no id(), set elements sorted, floats as repr text
(compared with a tolerance by the host, see the oracle's `leaves`).

Observing runs the project's code (`__len__`, `__iter__`, `__getitem__`, properties, a
metaclass's `__dir__`), and any of it may raise. What raises is recorded where it happened,
and the rest of the snapshot goes on: an attribute or observer that raises is an exception
leaf (a test can assert it), a value whose contents cannot be walked is an `unobservable`
leaf (`["unobservable", exception type, message]`, which no test asserts). Only the
per-statement alarm (`StatementTimeout`) passes through. Standard library only.
"""

from __future__ import annotations

import dis
import enum
import hashlib
import inspect
import operator
import os
import re
import sys
import traceback
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, NamedTuple

from .compat import is_standard_module
from .literals import clocks_rewound, encode
from .protocol import Tag, attribute_step, call_step, item_step, property_step, wrap_step
from .purity import is_observer_candidate, name_suggests_mutation

MAX_ITEMS = 20
MAX_STR = 400  # characters of a str, bytes or standard value's repr kept whole (else digested)
MESSAGE_LIMIT = 300  # characters of an exception's message kept (cut with "...")
MAX_DEPTH = 3
ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
CALLABLE_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                  types.ModuleType, types.MethodWrapperType, types.WrapperDescriptorType,
                  types.MethodDescriptorType, types.ClassMethodDescriptorType, types.LambdaType)
ROUTINE_TYPE_NAMES = frozenset({"functools.partial", "partial", "staticmethod", "classmethod"})
# where code sits, as the interpreter reports it (a stack a library keeps to say where an object was
# made): line numbers and files that any edit above them moves, so only their type is observed
SOURCE_LOCATION_TYPES = (traceback.FrameSummary, traceback.StackSummary, types.FrameType,
                         types.TracebackType, types.CodeType, inspect.FrameInfo, inspect.Traceback)


class StatementTimeout(BaseException):
    """Raised by the per-statement alarm; a BaseException so `except Exception` in the SUT misses it."""


def type_name(t: type) -> str:
    module = t.__module__  # any object a class body assigned: never formatted unless a str
    if type(module) is not str:
        return f"?.{t.__qualname__}"
    if "._" in module:
        module = _public_module(t, module)
    return f"{module}.{t.__qualname__}"


def _public_module(t: type, module: str) -> str:
    """The standard library's name for a class its private submodule defines and its package
    exports under the same name (`pathlib._local.Path` of 3.13 is `pathlib.Path`), so that a class
    is named alike under every interpreter; any other module's name as it is."""
    parts = module.split(".")
    if not is_standard_module(parts[0]):
        return module
    while len(parts) > 1 and parts[-1].startswith("_"):
        parent = sys.modules.get(".".join(parts[:-1]))
        if parent is None or getattr(parent, t.__qualname__, None) is not t:
            break
        parts.pop()
    return ".".join(parts)


_FOLDERS: list[tuple[str, str]] = []  # the run's own folders, longest first, and their placeholders


def mask_folders(placeholders: Iterable[Sequence[str]]) -> None:
    """From now on, write `placeholder` in place of `folder` in every observed string (at init)."""
    _FOLDERS[:] = sorted(((folder, placeholder) for folder, placeholder in placeholders if folder),
                         key=lambda pair: -len(pair[0]))


def masked(text: str) -> str:
    """`text` with the run's own folders (the checkout, the temporary folder) as their placeholders:
    a path under the package reads the same on base and on head."""
    if not _FOLDERS or os.sep not in text:
        return text
    for folder, placeholder in _FOLDERS:
        if folder in text:
            text = text.replace(folder, placeholder)
    return text


def clean_text(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """Text with memory addresses and the run's folders masked, and a bounded length."""
    text = ADDRESS.sub("0x?", masked(text))
    return text if len(text) <= limit else text[:limit] + "..."


PROJECT_ROOTS: list[str] = []  # the project's import roots (set at init): whose code a `raise` is
_RAISES = frozenset({dis.opmap["RAISE_VARARGS"], dis.opmap["RERAISE"]})
_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def raised_by(exc: BaseException) -> str:
    """"raise" when the project's own code raised `exc`: a `raise` statement of its files (in any
    form: an `assert`, a `raise` in a one-line `if`) ran last, or the project exits (`SystemExit`
    carries the project's code, a value, whatever function raised it); "outside" when the
    interpreter did (`len(None)` in the project's code: CPython's wording), or the standard
    library's or a dependency's frames did: then its message is their wording, not the project's.
    Metadata, never compared."""
    if isinstance(exc, SystemExit):
        return "raise"
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    if frame is None:
        return "outside"
    code = frame.tb_frame.f_code
    filename = code.co_filename
    if (not any(filename.startswith(root + os.sep) for root in PROJECT_ROOTS)
            or any(folder in filename for folder in _INSTALLED)):
        return "outside"
    instruction = code.co_code[frame.tb_lasti] if 0 <= frame.tb_lasti < len(code.co_code) else None
    return "raise" if instruction in _RAISES else "outside"


def exception_leaf(exc: BaseException) -> list:
    try:
        message = str(exc)
    except Exception:  # a broken __str__ is still an observation
        message = "<unprintable>"
    if isinstance(exc, RecursionError):
        # The suffix (" in comparison", " while calling a Python object") names the frame
        # where the limit struck, which any change in stack depth moves: not behaviour.
        message = message.split(" in comparison")[0].split(" while ")[0]
    module = type(exc).__module__
    return [Tag.RAISED, type(exc).__qualname__, clean_text(message), module if type(module) is str else "?"]


def unobservable_leaf(exc: BaseException) -> list:
    """A value whose snapshot raised part way (its `__len__`, `__iter__`, ... failed): the
    exception's type and message, which tell the two commits apart but make no assertion."""
    _, name, message = exception_leaf(exc)[:3]
    return [Tag.UNOBSERVABLE, name, message]


# Standard value types whose state lives in C (no `__dict__` to walk): observed by their repr,
# which is exact and spells the value (`datetime.timedelta(days=1)`, `Decimal('1.50')`).
VALUE_TYPES = frozenset({"datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta",
                         "datetime.timezone", "decimal.Decimal", "fractions.Fraction", "uuid.UUID",
                         "re.Pattern"})


def primitive_leaf(value: Any) -> list | None:
    """The leaf of a primitive value (or of a standard value type), or None for anything else."""
    t = type(value)
    if value is None:
        return [Tag.NONE]
    if t is bool:
        return [Tag.BOOL, value]
    if t is int:
        if -(2**62) < value < 2**62:
            return [Tag.INT, value]
        return [Tag.BIG_INT, value.bit_length(), hash(value)]  # int hashing is not randomized
    if t is float:
        return [Tag.FLOAT, repr(value)]
    if t is str:
        value = masked(value)
        if len(value) <= MAX_STR:
            return [Tag.STR, value]
        return [Tag.LONG_STR, len(value), _digest(value.encode("utf-8", "surrogatepass")), value[:60]]
    if t is bytes:
        if len(value) <= MAX_STR:
            return [Tag.BYTES, value.hex()]
        return [Tag.LONG_BYTES, len(value), _digest(value)]
    if t is complex:
        return [Tag.COMPLEX, repr(value)]
    name = type_name(t)
    if name in VALUE_TYPES:
        text = clean_text(repr(value), sys.maxsize)  # memory addresses masked (a tzinfo's repr)
        if len(text) <= MAX_STR:
            return [Tag.STANDARD, name, text]
        return [Tag.LONG_STANDARD, name, len(text), _digest(text.encode("utf-8", "surrogatepass")), text[:60]]
    return None


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:16]


class Observer:
    """Snapshots values into a flat dict; caches the observers of each type."""

    def __init__(self) -> None:
        self._observers: dict[type, list[tuple[str, str]]] = {}
        self._kinds: dict[type, str] = {}
        self._layouts: dict[type, Layout] = {}
        self._observed: dict[int, tuple[tuple, list[tuple[str, list]]]] = {}  # id -> state, observer leaves
        self._confirmed: set[tuple[type, str]] = set()
        self._unstable: set[tuple[type, str]] = set()
        self.disabled: set[str] = set()  # type names whose observers must not run
        self.items = MAX_ITEMS  # items of a container walked (a module's table gets more)
        self.also: tuple[Any, ...] = ()  # keys or indices of the outermost container walked besides

    def snapshot(self, out: dict, key: str, value: Any, depth: int = MAX_DEPTH,
                 with_observers: bool = True, items: int = MAX_ITEMS, also: Sequence[Any] = ()) -> str:
        """Record `value` under `key` in `out`; return a digest of its state. `also`: the keys (of a
        dict) or indices (of a list or tuple) walked besides its first `items` (a table's entries
        that the change is in), when it has them.

        The digest (the generator's redundancy filter, never an oracle) also covers the
        shape of private attributes: a cache whose items live in `self.__data` must not look
        unchanged after an insertion just because no public observer shows its size.
        """
        recorded: dict = {}
        self.items, self.also = items, tuple(also)
        try:
            self._snap(recorded, key, value, depth, with_observers, set())
        finally:
            self.items, self.also = MAX_ITEMS, ()
        out.update(recorded)
        size = len(key)
        state = [[(k[size:], v) for k, v in recorded.items()], _private_shape(value)]
        return _digest(repr(state).encode("utf-8", "surrogatepass"))

    def _snap(self, out: dict, key: str, value: Any, depth: int, with_observers: bool, seen: set) -> None:
        leaf = primitive_leaf(value)
        if leaf is not None:
            out[key] = leaf
            return
        if id(value) in seen:
            out[key] = [Tag.CYCLE]
            return
        mark = len(out)
        seen.add(id(value))
        try:
            self._snap_object(out, key, value, depth, with_observers, seen)
        except StatementTimeout:
            raise
        except BaseException as exc:  # the project's code raised while we looked: this value only
            for recorded in list(islice(out, mark, None)):  # what its walk wrote before it failed
                del out[recorded]
            out[key] = unobservable_leaf(exc)
        finally:
            seen.discard(id(value))

    def _snap_object(self, out: dict, key: str, value: Any, depth: int, with_observers: bool,
                     seen: set) -> None:
        t = type(value)
        kind = self._kinds.get(t)
        if kind is None:
            kind = self._kinds[t] = _kind_of(t)
        if kind == "enum":
            out[key] = [Tag.ENUM, f"{t.__qualname__}.{_text(value.name)}"]
        elif kind == "callable":
            name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
            out[key] = [Tag.FUNCTION, f"{_text(getattr(value, '__module__', ''))}.{_text(name)}"]
        elif depth <= 0 or kind == "location":
            out[key] = [Tag.OBJECT, type_name(t)]
        else:
            self._snap_composite(out, key, value, kind, depth, with_observers, seen)

    def _snap_composite(self, out: dict, key: str, value: Any, kind: str, depth: int,
                        with_observers: bool, seen: set) -> None:
        t = type(value)
        also, self.also = self.also, ()  # the outermost container's only
        if kind == "sequence":
            out[key] = [t.__name__ if t in (list, tuple) else type_name(t), len(value)]
            for i, item in enumerate(value[:self.items]):
                self._snap(out, key + item_step(i), item, depth - 1, False, seen)
            for i in (i for i in also if type(i) is int and self.items <= i < len(value)):
                self._snap(out, key + item_step(i), value[i], depth - 1, False, seen)
        elif kind == "dict":
            keys = list(islice(value.keys(), self.items))
            out[key] = [Tag.DICT if t is dict else type_name(t), len(value), [_key_item(k) for k in keys]]
            listed = set(keys) if also else set()
            for k in [*keys, *(k for k in also if _usable_in_key(k) and k not in listed and k in value)]:
                if _usable_in_key(k):
                    self._snap(out, key + item_step(k), value[k], depth - 1, False, seen)
        elif kind == "set":
            out[key] = _set_leaf(value)
        elif kind == "generator":
            items = list(islice(value, MAX_ITEMS))
            out[key] = [Tag.GENERATOR, len(items)]
            for i, item in enumerate(items):
                self._snap(out, key + item_step(i), item, depth - 1, False, seen)
        elif kind == "exception":  # an exception held as a value (returned, stored), not raised
            out[key] = [Tag.EXCEPTION_VALUE, *exception_leaf(value)[1:]]
        else:
            tname = type_name(t)
            out[key] = [Tag.OBJECT, tname]
            self._snap_attributes(out, key, value, depth, seen)
            if with_observers and tname not in self.disabled:
                self._snap_observers(out, key, value, depth, seen)

    def _snap_attributes(self, out: dict, key: str, value: Any, depth: int, seen: set) -> None:
        attributes = getattr(value, "__dict__", None)
        names = _public_names(attributes) if isinstance(attributes, dict) else []
        for name in sorted({*names, *self.layout(type(value)).public_slots})[:MAX_ITEMS]:
            step = key + attribute_step(name)
            try:
                attr = getattr(value, name)
            except AttributeError:
                continue
            except StatementTimeout:
                raise
            except BaseException as exc:  # a descriptor or __getattribute__ that raises: assertable
                out[step] = exception_leaf(exc)
                continue
            self._snap(out, step, attr, depth - 1, False, seen)

    def layout(self, t: type) -> Layout:
        layout = self._layouts.get(t)
        if layout is None:
            layout = self._layouts[t] = _layout(t)
        return layout

    def forget_objects(self) -> None:
        """Called before each sequence: the objects of the last one are gone (their ids reused)."""
        self._observed.clear()

    def _snap_observers(self, out: dict, key: str, value: Any, depth: int, seen: set) -> None:
        t = type(value)
        observers = self.observers_of(t)
        if not observers:
            return
        try:
            state = self._primitive_state(value)
        except Exception:  # an odd `__dict__` or slot: observed afresh, as any other value
            state = None
        if state is not None:
            earlier = self._observed.get(id(value))
            if earlier is not None and earlier[0] == state:  # observed before, in the same state
                for step, leaf in earlier[1]:
                    out[key + step] = leaf
                return
        mark = len(out)
        self._run_observers(out, key, value, observers, depth, seen)
        if state is not None:
            observed = [(k[len(key):], leaf) for k, leaf in islice(out.items(), mark, None)]
            self._observed[id(value)] = (state, observed)

    def _primitive_state(self, value: Any) -> tuple | None:
        """The instance's whole state when it is made of primitive values only (a version, a
        duration, a money amount), else None. Observers are pure functions of the state (checked
        statically, and by a second call): an object observed again in the same state gives the
        same leaves, which are reused. A receiver is observed after every call made on it, and
        most calls on such values leave them as they were."""
        layout = self.layout(type(value))
        if not layout.in_python:
            return None
        state: list = []
        attributes = vars(value) if layout.has_dict else {}
        for name, attr in attributes.items():
            if type(attr) not in PRIMITIVE_TYPES or type(name) is not str:
                return None
            state.append((name, attr))
        for name in layout.slots:
            attr = getattr(value, name, _UNSET)
            if type(attr) not in PRIMITIVE_TYPES and attr is not _UNSET:
                return None
            state.append((name, attr))
        return tuple(state)

    def _run_observers(self, out: dict, key: str, value: Any, observers: list, depth: int, seen: set) -> None:
        t = type(value)
        for suffix, read in observers:
            first = self._observe_once(value, read, depth, seen)
            if (t, suffix) not in self._confirmed:
                # Run-time purity check, once per type and observer in this process: the same
                # result twice. Values that vary across processes are masked by the host.
                if first != self._observe_once(value, read, depth, seen):
                    self._unstable.add((t, suffix))
                self._confirmed.add((t, suffix))
            if (t, suffix) in self._unstable:
                out[key + suffix] = [Tag.UNSTABLE]
            elif type(first) is list:  # a leaf: most observers return a primitive
                out[key + suffix] = first
            else:
                for sub, leaf in first.items():
                    out[key + suffix + sub] = leaf

    def _observe_once(self, value: Any, read: Callable[[Any], Any], depth: int, seen: set) -> list | dict:
        """What the observer `read` returns: its leaf, or its snapshot keyed from its root."""
        with clocks_rewound():  # each observer sees the clocks as a test's final assertion would
            try:
                observed = read(value)
            except StatementTimeout:
                raise
            except BaseException as exc:  # an observer that raises is an observation too
                return exception_leaf(exc)
            leaf = primitive_leaf(observed)
            if leaf is not None:
                return leaf
            result: dict = {}
            self._snap(result, "", observed, min(depth - 1, 2), False, seen)
        return result

    def observers_of(self, t: type) -> list[tuple[str, Callable[[Any], Any]]]:
        """(key suffix, reader) of each observer of type `t`, decided once per type (none if
        looking raised: a metaclass's `__dir__`, an ABC's subclass hook)."""
        if t not in self._observers:
            try:
                found = [(suffix, _reader(suffix, name)) for suffix, name in _find_observers(t)]
            except StatementTimeout:
                raise
            except BaseException:
                found = []
            self._observers[t] = found
        return self._observers[t]


def _text(value: Any) -> str:
    """A name the project gave (`__qualname__`, `__module__`, an enum member's `name`) as text,
    without running its code: a str or None as such, anything else `?`."""
    return value if type(value) is str else "None" if value is None else "?"


def _public_names(names: Iterable) -> list[str]:
    """The public attribute names among `names` (an instance `__dict__`'s keys or `__slots__`);
    keys that are not plain `str` (`obj.__dict__[1] = ...`) are no attribute a test could read."""
    return [n for n in names if type(n) is str and not n.startswith("_")]


PRIMITIVE_TYPES = frozenset({type(None), bool, int, float, str, bytes})
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not by C code
_UNSET = object()  # a slot never assigned


class Layout(NamedTuple):
    """Where a type's instances keep their state, decided once per type."""

    in_python: bool  # all of it in attributes (see `_layout`)
    has_dict: bool
    slots: tuple[str, ...]  # attribute names, private ones mangled (`_C__x`)
    public_slots: tuple[str, ...]


def _layout(t: type) -> Layout:
    """A class built on a C type (a `dict`, a `datetime`) keeps state that no attribute shows,
    and so does one whose attribute access runs code: not `in_python`."""
    classes = [k for k in t.__mro__ if k is not object]
    in_python = all(k.__flags__ & HEAP_TYPE for k in classes) and not any(
        name in k.__dict__ for k in classes for name in ("__getattr__", "__getattribute__"))
    slots: list[str] = []
    for klass in classes:
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in ("__dict__", "__weakref__"):
                continue
            private = name.startswith("__") and not name.endswith("__")  # stored mangled: `_C__x`
            slots.append(f"_{klass.__name__.lstrip('_')}{name}" if private else name)
    has_dict = any("__dict__" in k.__dict__ for k in classes)
    return Layout(in_python and (has_dict or bool(slots)), has_dict, tuple(slots),
                  tuple(n for n in slots if not n.startswith("_")))


def _private_shape(value: Any) -> list:
    """Private attributes, shallowly: primitives by value, containers by type and length. Only the
    redundancy filter's digest reads it: a shape that raises is the `["?"]` shape."""
    try:
        return _private_attributes(value)
    except StatementTimeout:
        raise
    except BaseException:
        return ["?"]


def _private_attributes(value: Any) -> list:
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict):
        return []
    shape = []
    for name, attr in attributes.items():
        if type(name) is str and name.startswith("_"):
            leaf = primitive_leaf(attr)
            if leaf is None:
                size = len(attr) if isinstance(attr, (list, tuple, dict, set, frozenset)) else None
                leaf = [type(attr).__name__, size]
            shape.append((name, leaf))
    return shape


def _kind_of(t: type) -> str:
    """How a type is snapshotted, decided once per type."""
    if issubclass(t, enum.Enum):
        return "enum"
    if issubclass(t, SOURCE_LOCATION_TYPES):
        return "location"
    if issubclass(t, CALLABLE_TYPES) or inspect.isroutine(t) or t.__name__ in ROUTINE_TYPE_NAMES:
        return "callable"
    if issubclass(t, (list, tuple)):
        return "sequence"
    if issubclass(t, dict):
        return "dict"
    if issubclass(t, (set, frozenset)):
        return "set"
    if issubclass(t, types.GeneratorType):
        return "generator"
    if issubclass(t, BaseException):
        return "exception"
    return "object"


def _key_item(k: Any) -> list | str:
    """A dict key or set element: its literal when it has one (so tests can assert it), else its type."""
    if type(k) is str:
        k = masked(k)
    if _usable_in_key(k) or type(k) in (float, bytes, tuple, frozenset) or k is None:
        literal = encode(k, depth=2)
        if literal is not None and len(repr(literal)) <= MAX_STR:
            return literal
    return type_name(type(k))


def _usable_in_key(k: Any) -> bool:
    """Small ints and short strings may appear inside an observation key (`['name']`)."""
    t = type(k)
    return (t is int and -(2**62) < k < 2**62) or (t is str and len(k) <= 40 and masked(k) == k) or t is bool


def _set_leaf(value: Any) -> list:
    """Sets compare as sets: every element sorted when small, an order-free digest when large."""
    if len(value) > 10_000:
        return [Tag.SET, len(value)]
    items = sorted((_key_item(k) for k in value), key=repr)
    if len(items) <= 200:
        return [Tag.SET, len(value), items]
    return [Tag.SET, len(value), _digest(repr(items).encode("utf-8", "surrogatepass"))]


_WRAPPED = {
    wrap_step("len"): len,
    wrap_step("list"): lambda value: list(islice(iter(value), MAX_ITEMS)),
    wrap_step("str"): lambda value: clean_text(str(value), MAX_STR),
    wrap_step("repr"): lambda value: clean_text(repr(value), MAX_STR),
}


def _reader(suffix: str, name: str) -> Callable[[Any], Any]:
    """The function that reads observer `name` (keyed `suffix`) of a value: a wrapper such as
    `len`, a property, or a method called without arguments. Decided once per type and observer,
    not on each of the hundreds of thousands of calls."""
    wrapped = _WRAPPED.get(suffix)
    if wrapped is not None:
        return wrapped
    if suffix == property_step(name):
        return operator.attrgetter(name)
    return operator.methodcaller(name)


def _defined_in_python(t: type, name: str) -> Any:
    """The function behind `t.name` if some class other than `object` defines it."""
    for klass in t.__mro__:
        if name in klass.__dict__:
            return None if klass is object else klass.__dict__[name]
    return None


def _find_observers(t: type) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name in sorted(dir(t)):
        if name.startswith("_"):
            continue
        try:
            attr = inspect.getattr_static(t, name)
        except AttributeError:
            continue
        if isinstance(attr, property):
            if attr.fget is not None and is_observer_candidate(t, attr.fget):
                found.append((property_step(name), name))
        elif (isinstance(attr, types.FunctionType) and _takes_no_arguments(attr)
              and not name_suggests_mutation(name) and is_observer_candidate(t, attr)):
            found.append((call_step(name), name))
    if issubclass(t, Collection) and not issubclass(t, Iterator):
        for suffix, dunder in ((wrap_step("len"), "__len__"), (wrap_step("list"), "__iter__")):
            func = _defined_in_python(t, dunder)
            if func is not None and is_observer_candidate(t, func, generator_ok=dunder == "__iter__"):
                found.append((suffix, dunder))
    for suffix, dunder in ((wrap_step("str"), "__str__"), (wrap_step("repr"), "__repr__")):
        func = _defined_in_python(t, dunder)
        if (isinstance(func, types.FunctionType) and is_observer_candidate(t, func)
                and (dunder == "__str__" or _defined_in_python(t, "__str__") is not func)):
            found.append((suffix, dunder))
    return found


def _takes_no_arguments(func: types.FunctionType) -> bool:
    try:
        params = list(inspect.signature(func).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
