"""Primitive argument values: constants mined from the source, and a seeded generator.

Randoop seeds its pools with a handful of primitives; GRT showed that literals taken from
the code under test reach branches random values never do (`if unit == "h"`). Literals in
the PR's changed lines get a pool of their own, drawn more often. All values are literals
in the tagged form of `generator.worker.literals`.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_CONSTANT_LENGTH = 80
SMALL_INTS = (0, 1, 2, 3, -1, 5, 10, 4, 7, 100, -2)
BOUNDARY_INTS = (255, 256, 1024, 65535, 2**31 - 1, -(2**31), 10**9, 2**63 - 1)
FLOATS = ("0.0", "1.0", "0.5", "-1.5", "2.25", "100.0", "1e-09", "3.14159")
STRINGS = ("", "a", "abc", "x y", "A_b", "1", "0.5", "foo.bar", " ", "ünï")


@dataclass
class Constants:
    """Literals found in the project: from the changed hunks, the target modules, and the tests."""

    hunk: list[list] = field(default_factory=list)
    module: list[list] = field(default_factory=list)
    tests: list[list] = field(default_factory=list)

    def by_tag(self, tag: str) -> tuple[list[list], list[list], list[list]]:
        return tuple([c for c in pool if c[0] == tag] for pool in (self.hunk, self.module, self.tests))


def literal_constants(source: str, lines: Iterable[int] | None = None) -> list[list]:
    """Distinct literals in `source` (optionally only on `lines`), in order of appearance."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    wanted = set(lines) if lines is not None else None
    docstrings = _docstrings(tree)
    negated = {id(n.operand) for n in ast.walk(tree)
               if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
               and isinstance(n.operand, ast.Constant)}
    constants = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in docstrings),
                       key=lambda n: (n.lineno, n.col_offset))
    found: dict[str, list] = {}
    for node in constants:
        if wanted is not None and node.lineno not in wanted:
            continue
        value = node.value
        if id(node) in negated and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = -value  # `-5` is a UnaryOp around 5 in the tree
        literal = _constant_literal(value)
        if literal is not None:
            found.setdefault(repr(literal), literal)
    return list(found.values())


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the docstring constants: prose, not values the code compares against."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


# Parameter-name conventions for parameters without annotations or informative defaults.
_NAME_TYPES = (
    ("builtins.int", ("size", "count", "num", "index", "idx", "limit", "length", "width", "height",
                      "depth", "level", "port", "retries", "capacity", "offset", "start", "stop",
                      "step", "maxsize", "ttl", "n", "i", "j", "k", "age", "year", "month", "day",
                      "major", "minor", "patch", "precision", "digits", "number", "times")),
    ("builtins.str", ("name", "text", "string", "word", "prefix", "suffix", "label", "title", "path",
                      "url", "key", "sep", "separator", "delimiter", "pattern", "message", "msg", "s",
                      "version", "token", "char", "value_str", "encoding", "format", "fmt")),
    ("builtins.bool", ("flag", "enabled", "verbose", "strict", "force", "recursive", "reverse")),
    ("builtins.float", ("ratio", "rate", "factor", "scale", "probability", "weight", "alpha", "timeout")),
    ("collections.abc.Callable", ("timer", "callback", "func", "function", "fn", "hook", "factory",
                                  "getsizeof", "getter", "predicate", "default_factory")),
)


def type_from_name(name: str) -> str | None:
    """A primitive type guessed from a parameter name (`maxsize` -> int), or None."""
    lowered = name.lower()
    parts = lowered.split("_")
    for type_name, words in _NAME_TYPES:
        if lowered in words or parts[-1] in words:
            return type_name
    if parts[0] in ("is", "has", "use", "allow"):
        return "builtins.bool"
    return None


def _constant_literal(value: object) -> list | None:
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return None
    if isinstance(value, int):
        return ["int", value] if abs(value) < 2**63 else None
    if isinstance(value, float):
        return ["float", repr(value)]
    if isinstance(value, str) and len(value) <= MAX_CONSTANT_LENGTH and "\n" not in value:
        return ["str", value]
    if isinstance(value, bytes) and len(value) <= MAX_CONSTANT_LENGTH:
        return ["bytes", value.hex()]
    return None


def mine_constants(module_files: Iterable[Path], changed: dict[Path, set[int]],
                   test_files: Iterable[Path] = ()) -> Constants:
    """Constants of the target modules, of their changed lines, and of the project's tests."""
    constants = Constants()
    seen: set[str] = set()
    for path in module_files:
        source = _read(path)
        for literal in literal_constants(source, changed.get(path, set())):
            _add_unique(constants.hunk, literal, seen)
        for literal in literal_constants(source):
            _add_unique(constants.module, literal, seen)
    for path in test_files:
        for literal in literal_constants(_read(path))[:400]:
            _add_unique(constants.tests, literal, seen)
    return constants


def _add_unique(pool: list[list], literal: list, seen: set[str]) -> None:
    key = repr(literal)
    if key not in seen:
        seen.add(key)
        pool.append(literal)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


class ValueGenerator:
    """Seeded primitives by type name (`builtins.int`, ...), preferring mined constants."""

    def __init__(self, rng: random.Random, constants: Constants) -> None:
        self.rng = rng
        self.constants = constants
        self._by_tag = {tag: constants.by_tag(tag) for tag in ("int", "float", "str", "bytes")}
        self._makers = {
            "builtins.int": self.integer, "builtins.str": self.string, "builtins.float": self.real,
            "builtins.bool": lambda: ["bool", self.rng.random() < 0.5], "builtins.bytes": self.raw,
            "builtins.NoneType": lambda: ["none"], "builtins.list": lambda: self.container("list"),
            "builtins.tuple": lambda: self.container("tuple"), "builtins.dict": self.mapping,
            "builtins.set": lambda: self.container("set"),
            "builtins.frozenset": lambda: self.container("set"),
            "collections.abc.Callable": self.callback,
            "typing.Callable": lambda: ["fn", self.integer()],
        }

    def can_make(self, type_name: str) -> bool:
        return _plain(type_name) in self._makers

    def tag_of(self, type_name: str) -> str:
        """The literal tag a primitive type name is made with (`builtins.int` -> `int`)."""
        return _plain(type_name).rsplit(".", 1)[-1].replace("NoneType", "none")

    def make(self, type_name: str) -> list:
        return self._makers[_plain(type_name)]()

    def any(self) -> list:
        """A primitive of any type, for parameters we know nothing about."""
        roll = self.rng.random()
        if roll < 0.38:
            return self.integer()
        if roll < 0.78:
            return self.string()
        if roll < 0.86:
            return self.real()
        if roll < 0.90:
            return ["bool", self.rng.random() < 0.5]
        if roll < 0.94:
            return self.container("list")
        if roll < 0.97:
            return self.mapping()
        return self.callback()  # untyped callback parameters (a cache's `ttu`) need one

    def _mined(self, tag: str) -> list | None:
        hunk, module, tests = self._by_tag[tag]
        roll = self.rng.random()
        if hunk and roll < 0.35:
            return self.rng.choice(hunk)
        if module and roll < 0.6:
            return self.rng.choice(module)
        if tests and roll < 0.8:
            return self.rng.choice(tests)
        return None

    def integer(self) -> list:
        mined = self._mined("int")
        if mined is not None:
            return mined
        roll = self.rng.random()
        if roll < 0.8:
            return ["int", self.rng.choice(SMALL_INTS)]
        if roll < 0.92:
            return ["int", self.rng.randint(-1000, 1000)]
        return ["int", self.rng.choice(BOUNDARY_INTS)]

    def real(self) -> list:
        mined = self._mined("float")
        if mined is not None:
            return mined
        if self.rng.random() < 0.7:
            return ["float", self.rng.choice(FLOATS)]
        return ["float", repr(round(self.rng.uniform(-100, 100), 3))]

    def string(self) -> list:
        mined = self._mined("str")
        if mined is not None:
            if self.rng.random() < 0.1:  # a constant glued to a number reaches "1h", "v2", ...
                return ["str", f"{self.rng.choice(SMALL_INTS[:6])}{mined[1]}"]
            return mined
        return ["str", self.rng.choice(STRINGS)]

    def callback(self) -> list:
        """A function returning a constant, or counting up (a clock that moves), for callbacks
        such as a cache's timer or time-to-use function."""
        if self.rng.random() < 0.4:
            return ["counter", self.rng.choice(SMALL_INTS[:6])]
        return ["fn", self.integer() if self.rng.random() < 0.7 else self.real()]

    def raw(self) -> list:
        mined = self._mined("bytes")
        return mined if mined is not None else ["bytes", self.rng.choice(("", "61", "00ff", "68656c6c6f"))]

    def container(self, tag: str) -> list:
        element = self.integer if self.rng.random() < 0.5 else self.string
        items = [element() for _ in range(self.rng.randint(0, 3))]
        if tag == "set":
            unique = {repr(i): i for i in items}
            items = list(unique.values())
        return [tag, items]

    def mapping(self) -> list:
        keys = {repr(k): k for k in (self.string() for _ in range(self.rng.randint(0, 2)))}
        return ["dict", [[k, self.integer()] for k in keys.values()]]


def _plain(type_name: str) -> str:
    """`?int` (an unresolved annotation) -> `builtins.int`."""
    if type_name.startswith("?"):
        return "builtins." + type_name[1:].lower().replace("optional", "").strip()
    return type_name
