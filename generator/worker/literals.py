"""Tagged JSON form of literal arguments, shared by the host (generation, rendering) and the worker.

A literal is a list whose first item is a tag: ["int", 3], ["float", "nan"], ["str", "a"],
["bytes", "6162"], ["bool", true], ["none"], ["list", [lit, ...]], ["tuple", [...]],
["set", [...]], ["frozenset", [...]], ["dict", [[klit, vlit], ...]], and ["fn", lit]: a
function that accepts any arguments and returns the literal, the same object on every call
(for callback parameters such as `timer`, or a decorator's `lambda self: self.cache`), and
["counter", n]: a function returning n, n+1, n+2, ... on successive calls (a clock that
moves), and ["raises", name, message]: a function raising the built-in exception `name` (one of
FAILURES) with `message` on every call (a user's function that fails, for the code that calls
it). Floats travel as `repr` text so that NaN, infinities and -0.0 survive JSON.

Values of common standard-library types that parameters ask for (GRT's detective builds a
needed type on demand; these it cannot build from the package): ["datetime", iso],
["date", iso], ["timedelta", seconds-repr], ["fraction", "n/d"], ["decimal", text],
["textio", text] (an `io.StringIO`), ["bytesio", hex] (an `io.BytesIO`), ["element", xml]
(an `xml.etree.ElementTree.Element`, parsed from its XML text), a container's items in a subclass
of its type (`SUBCLASS_TAGS`: OrderedDict, defaultdict, Counter, a user's dict or list) and
["path", text]: a relative `pathlib.Path` to a file in
the current directory holding `text`, named after a digest of it (`input-1a2b3c4d.txt`), so
the name is the same in every process and in the rendered test, which writes the file first.
Standard library only: this module runs in the worker.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import fractions
import hashlib
import io
import math
import pathlib
from collections.abc import Iterator
from typing import Any

PRIMITIVE_TAGS = ("int", "float", "str", "bytes", "bool", "none")
CONTAINER_TAGS = ("list", "tuple", "set", "frozenset", "dict")
# A container's items in a subclass of its type, as users pass them: ["ordereddict", pairs],
# ["defaultdict", pairs] (no default factory: it differs from a dict only in its type),
# ["tally", pairs] (a `collections.Counter`), ["subdict", pairs] and ["sublist", items] (a user's
# subclass with nothing of its own). Tag -> (the container's tag, the subclass's name)
SUBCLASS_TAGS = {"ordereddict": ("dict", "OrderedDict"), "defaultdict": ("dict", "defaultdict"),
                 "tally": ("dict", "Counter"), "subdict": ("dict", "MyDict"), "sublist": ("list", "MyList")}
# the name of the type of value each tag makes (its functions, `fn`, `counter` and `raises`, have none
# a reader would name; "None" in prose names the value, often one returned, not a type)
TYPE_NAMES = {**{tag: tag for tag in (*PRIMITIVE_TAGS[:-1], *CONTAINER_TAGS)}, "none": "NoneType",
              "datetime": "datetime", "date": "date", "timedelta": "timedelta", "fraction": "Fraction",
              "decimal": "Decimal", "textio": "StringIO", "bytesio": "BytesIO", "element": "Element",
              "path": "Path", **{tag: name for tag, (_, name) in SUBCLASS_TAGS.items()}}
INPUT_FILE_PREFIX = "input-"
# A NaN given directly as an argument is one object per sequence: `b[nan] = 1; b[nan] = 2` passes
# the same key twice, as user code passing one variable does, and containers, `in` and tuple
# comparison take an object as equal to itself even when it is NaN (the renderer names it `nan`).
SHARED_NAN = ["float", "nan"]


def decode(lit: list) -> Any:
    """Build the Python value a literal stands for (a fresh object on every call)."""
    tag = lit[0]
    if tag == "int":
        return int(lit[1])
    if tag == "float":
        return float(lit[1])
    if tag == "str":
        return lit[1]
    if tag == "bytes":
        return bytes.fromhex(lit[1])
    if tag == "bool":
        return bool(lit[1])
    if tag == "none":
        return None
    if tag == "list":
        return [decode(item) for item in lit[1]]
    if tag == "tuple":
        return tuple(decode(item) for item in lit[1])
    if tag == "set":
        return {decode(item) for item in lit[1]}
    if tag == "frozenset":
        return frozenset(decode(item) for item in lit[1])
    if tag == "dict":
        return {decode(k): decode(v) for k, v in lit[1]}
    if tag in SUBCLASS_TAGS:
        return _subclassed(tag, decode([container_tag(tag), lit[1]]))
    if tag == "fn":
        return _constant_function(decode(lit[1]))
    if tag == "counter":
        return _counter_function(int(lit[1]))
    if tag == "raises":
        return _failing_function(FAILURES[lit[1]], lit[2])
    if tag == "datetime":
        return datetime.datetime.fromisoformat(lit[1])
    if tag == "date":
        return datetime.date.fromisoformat(lit[1])
    if tag == "timedelta":
        return datetime.timedelta(seconds=float(lit[1]))
    if tag == "fraction":
        return fractions.Fraction(lit[1])
    if tag == "decimal":
        return decimal.Decimal(lit[1])
    if tag == "textio":
        return io.StringIO(lit[1])
    if tag == "bytesio":
        return io.BytesIO(bytes.fromhex(lit[1]))
    if tag == "path":
        return _input_file(lit[1])
    if tag == "element":
        from xml.etree import ElementTree  # imported on first use: few projects build trees

        return ElementTree.fromstring(lit[1])
    raise ValueError(f"unknown literal tag {tag!r}")


def container_tag(tag: str) -> str:
    """The container tag whose items a subclass tag holds (`ordereddict` -> `dict`); any other tag
    itself."""
    return SUBCLASS_TAGS[tag][0] if tag in SUBCLASS_TAGS else tag


def _subclassed(tag: str, items: Any) -> Any:
    """The plain container `items` as the subclass `tag` names (see SUBCLASS_TAGS)."""
    import collections  # imported on first use, as few runs pass one

    if tag == "ordereddict":
        return collections.OrderedDict(items)
    if tag == "defaultdict":
        return collections.defaultdict(None, items)
    if tag == "tally":
        return collections.Counter(items)
    return type(SUBCLASS_TAGS[tag][1], (type(items),), {})(items)


def input_file_name(text: str) -> str:
    """The name of the file a ["path", text] literal stands for: the same on every run."""
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{INPUT_FILE_PREFIX}{digest}.txt"


# Whether this sequence has cleared the input files earlier sequences left in the current
# directory (each worker process has a directory of its own); see `forget_clocks`.
_INPUTS_CLEARED = [False]


def _input_file(text: str) -> pathlib.Path:
    if not _INPUTS_CLEARED[0]:
        _INPUTS_CLEARED[0] = True
        for leftover in pathlib.Path().glob(f"{INPUT_FILE_PREFIX}*.txt"):
            with contextlib.suppress(OSError):
                leftover.unlink()
    path = pathlib.Path(input_file_name(text))
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


# The state (next value) of every counting clock made in this process. Observations rewind
# them: a rendered test observes once, at the end, so each observer the worker runs must see
# the clocks where the statement left them, however often it reads them itself.
_CLOCKS: list[list[int]] = []


class clocks_rewound:  # used as `with clocks_rewound():`, like a function
    """Run the block, then put every counting clock back where it was. A class, not a
    generator-based context manager: observation enters one per observer call (hundreds of
    thousands a run), and most sequences have no clock at all."""

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        self._saved = [(clock, clock[0]) for clock in _CLOCKS] if _CLOCKS else ()

    def __exit__(self, *exc: object) -> None:
        for clock, value in self._saved:
            clock[0] = value


def forget_clocks() -> None:
    """Called before each sequence: clocks of earlier sequences are garbage, and the input
    files they wrote go when this sequence writes its first (a directory listing sees only
    this sequence's files)."""
    _CLOCKS.clear()
    _INPUTS_CLEARED[0] = False


def _counter_function(start: int) -> Any:
    upcoming = [start]
    _CLOCKS.append(upcoming)

    def counter(*args: Any, **kwargs: Any) -> int:
        value = upcoming[0]
        upcoming[0] += 1
        return value

    return counter


# The exceptions a failing callback raises: those a caller of user code most often handles.
FAILURES: dict[str, type[Exception]] = {"ValueError": ValueError, "TypeError": TypeError,
                                        "KeyError": KeyError}


def _failing_function(exception: type[Exception], message: str) -> Any:
    def failing(*args: Any, **kwargs: Any) -> Any:
        raise exception(message)

    return failing


def _constant_function(value: Any) -> Any:
    def constant(*args: Any, **kwargs: Any) -> Any:
        return value

    return constant


def encode(value: Any, depth: int = 3) -> list | None:
    """The literal for `value` if it is a (small, nested) primitive, else None."""
    if value is None:
        return ["none"]
    if isinstance(value, bool):
        return ["bool", value]
    if type(value) is int:
        return ["int", value]
    if type(value) is float:
        return ["float", repr(value)]
    if type(value) is str:
        return ["str", value]
    if type(value) is bytes:
        return ["bytes", value.hex()]
    if depth <= 0:
        return None
    if type(value) in (list, tuple, set, frozenset):
        items = [encode(item, depth - 1) for item in value]
        if any(item is None for item in items):
            return None
        tag = {list: "list", tuple: "tuple", set: "set"}.get(type(value), "frozenset")
        return [tag, items]
    if type(value) is dict:
        pairs = [[encode(k, depth - 1), encode(v, depth - 1)] for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return ["dict", pairs]
    return None


def source(lit: list) -> str:
    """Python source text for a literal (used by the pytest renderer)."""
    tag = lit[0]
    if tag == "float":
        value = float(lit[1])
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    if tag in ("int", "str", "bool", "none", "bytes"):
        return repr(decode(lit))
    if tag == "list":
        return "[" + ", ".join(source(item) for item in lit[1]) + "]"
    if tag == "tuple":
        items = [source(item) for item in lit[1]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if tag == "set":
        if not lit[1]:
            return "set()"
        return "{" + ", ".join(source(item) for item in lit[1]) + "}"
    if tag == "frozenset":
        return "frozenset(" + (source(["set", lit[1]]) if lit[1] else "") + ")"
    if tag == "dict":
        return "{" + ", ".join(f"{source(k)}: {source(v)}" for k, v in lit[1]) + "}"
    if tag in SUBCLASS_TAGS:
        base, name = SUBCLASS_TAGS[tag]
        items = source([base, lit[1]])
        if tag == "ordereddict":  # a dict display keeps its pairs' order
            return f"collections.OrderedDict({items})"
        if tag == "defaultdict":
            return f"collections.defaultdict(None, {items})"
        if tag == "tally":
            return f"collections.Counter({items})"
        return f"type({name!r}, ({base},), {{}})({items})"
    if tag == "fn":
        if lit[1][0] in CONTAINER_TAGS:  # a default is made once: every call hands out the same object
            return f"lambda *args, _value={source(lit[1])}, **kwargs: _value"
        return f"lambda *args, **kwargs: {source(lit[1])}"
    if tag == "counter":
        return f"lambda *args, _ticks=itertools.count({int(lit[1])}), **kwargs: next(_ticks)"
    if tag == "raises":  # a lambda cannot `raise`; a generator's `throw` can
        if lit[1] not in FAILURES:
            raise ValueError(f"not an exception a callback raises: {lit[1]!r}")
        return f"lambda *args, **kwargs: (_ for _ in ()).throw({lit[1]}({lit[2]!r}))"
    if tag in ("datetime", "date", "timedelta"):
        return repr(decode(lit))  # datetime.datetime(2024, 2, 29, 12, 30)
    if tag == "fraction":
        return f"fractions.Fraction({lit[1]!r})"
    if tag == "decimal":
        return f"decimal.Decimal({lit[1]!r})"
    if tag == "textio":
        return f"io.StringIO({lit[1]!r})"
    if tag == "bytesio":
        return f"io.BytesIO({bytes.fromhex(lit[1])!r})"
    if tag == "path":
        return f"pathlib.Path({input_file_name(lit[1])!r})"
    if tag == "element":
        return f"xml.etree.ElementTree.fromstring({lit[1]!r})"
    raise ValueError(f"unknown literal tag {tag!r}")


def parts(lit: list) -> Iterator[list]:
    """The literal and every literal nested in it: a container's items (a dict's keys and values)
    and the value an ["fn", lit] returns."""
    yield lit
    tag = lit[0]
    base = container_tag(tag)
    if base in CONTAINER_TAGS:
        for item in lit[1]:
            yield from (part for x in item for part in parts(x)) if base == "dict" else parts(item)
    elif tag == "fn":
        yield from parts(lit[1])


def modules_used(lit: list) -> set[str]:
    """The modules a literal's `source` refers to (the renderer imports them)."""
    return {module for part in parts(lit) for module in _MODULES.get(part[0], ())}


_MODULES = {"counter": ("itertools",), "datetime": ("datetime",), "date": ("datetime",),
            "timedelta": ("datetime",), "textio": ("io",), "bytesio": ("io",), "path": ("pathlib",),
            "fraction": ("fractions",), "decimal": ("decimal",), "element": ("xml.etree.ElementTree",),
            "ordereddict": ("collections",), "defaultdict": ("collections",), "tally": ("collections",)}


def input_files(lit: list) -> dict[str, str]:
    """File name -> text of the input files a literal needs (its ["path", text] parts)."""
    return {input_file_name(part[1]): part[1] for part in parts(lit) if part[0] == "path"}
