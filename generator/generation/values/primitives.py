"""Primitive argument values: a seeded generator that prefers constants mined from the source.

Randoop seeds its pools with a handful of primitives; GRT showed that literals taken from
the code under test reach branches random values never do (`if unit == "h"`). The mining
lives in `constants` (re-exported here). All values are literals in the tagged
form of the worker's `literals`.
"""

from __future__ import annotations

import bisect
import datetime
import html
import itertools
import random

from ...worker.literals import FAILURES
from ...worker.typeinfo import FORMAT_SPEC
from .constants import (
    MAX_CONSTANT_LENGTH,
    Constants,
    literal_constants,
    mine_constants,
    package_modules,
    tf_idf_weights,
)
from .structured import format_spec, structured

__all__ = [
    "MAX_CONSTANT_LENGTH", "Constants", "ValueGenerator", "literal_constants", "mine_constants",
    "package_modules", "tf_idf_weights", "type_from_name",
]

SMALL_INTS = (0, 1, 2, 3, -1, 5, 10, 4, 7, 100, -2)
BOUNDARY_INTS = (255, 256, 1024, 65535, 2**31 - 1, -(2**31), 10**9, 2**63 - 1)
FLOATS = ("0.0", "1.0", "0.5", "-1.5", "2.25", "100.0", "1e-09", "3.14159", "nan")
STORE_RATIO = 0.15  # of callbacks: one handing out a mapping
FAILING_RATIO = 0.15  # of callbacks: one that raises
NOTHING_RATIO = 0.1  # of constant callbacks: one returning None, as a hook or a procedure does
STRUCTURED_RATIO = 0.08  # of strings: a format spec, a date or time shape, a Unicode variant
STRINGS = ("", "a", "abc", "x y", "A_b", "1", "0.5", "foo.bar", " ", "ünï")
# Instants near the edges calendars and parsers get wrong: epoch, leap day, year ends, DST weeks.
DATETIMES = ("2000-01-01T00:00:00", "1970-01-01T00:00:00", "2024-02-29T12:30:45",
             "1999-12-31T23:59:59", "2021-03-28T01:30:00", "2038-01-19T03:14:07",
             "0001-01-01T00:00:00", "9999-12-31T23:59:59.999999")
CENTURIES = 200 * 365 * 86400  # random instants: a second of 1900-2100
TIMEDELTAS = ("0", "1", "60", "3600", "86400", "-1", "0.5", "604800")
DENOMINATORS = (1, 2, 3, 7, 10)  # for fractions.Fraction operands
MAX_ARGV_WORDS = 4  # options and positional words of a generated command line, beyond a subcommand
OPTION_RATIO = 0.6  # of a command line's words: one of its options (when its source spells any)
MAX_DURATION = 10**12  # seconds; timedelta stops near 8.6e13
CONTAINER_TAGS = {"builtins.list": "list", "builtins.tuple": "tuple", "builtins.set": "set",
                  "builtins.frozenset": "set", "builtins.dict": "dict"}
UNHASHABLE_TAGS = ("list", "dict", "set")
PAIR_RATIO = 0.7  # of tuples inside containers: a (key, value) pair
# HTML's elements, the void ones (no content, no end tag: what serializers special-case) among them
HTML_TAGS = ("p", "div", "span", "a", "em", "code", "pre", "ul", "li", "h1", "table", "td", "br",
             "hr", "img", "input", "meta", "link", "source", "track", "wbr", "embed", "col", "area")
STANDARD_VALUES = ("decimal.Decimal", "fractions.Fraction", "datetime.datetime", "datetime.date",
                   "datetime.timedelta")  # for parameters of no known type, now and then


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
    ("_io.StringIO", ("stream", "fp", "fileobj", "file_obj", "infile", "outfile")),
    ("datetime.datetime", ("dt", "datetime", "when")),
    ("datetime.date", ("date",)),
    ("datetime.timedelta", ("timedelta", "delta")),
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


class ValueGenerator:
    """Seeded primitives by type name (`builtins.int`, ...), preferring mined constants."""

    def __init__(self, rng: random.Random, constants: Constants, structured: bool = True,
                 stores: bool = True, failing: bool = True) -> None:
        """`structured`: mix format specifications, dates, times and Unicode variants into strings;
        `stores`: some callbacks hand out a mapping, `failing`: some raise (see `callback`)."""
        self.rng = rng
        self.constants = constants
        self.structured = structured
        self.stores = stores
        self.failing = failing
        tags = ("int", "float", "str", "bytes")
        self._by_tag = {tag: constants.by_tag(tag) for tag in tags}
        self._package = {tag: _cumulative(*constants.package_by_tag(tag)) for tag in tags}
        # what text edits put in (fuzz): the punctuation and spaces of the changed lines' strings
        self.hunk_punctuation = "".join(sorted({char for literal in self._by_tag["str"][0]
                                                for char in literal[1] if not char.isalnum()}))
        self._makers = {
            "builtins.int": self.integer, "builtins.str": self.string, "builtins.float": self.real,
            "builtins.bool": lambda: ["bool", self.rng.random() < 0.5], "builtins.bytes": self.raw,
            "builtins.NoneType": lambda: ["none"], "builtins.list": lambda: self.container("list"),
            "builtins.tuple": lambda: self.container("tuple"), "builtins.dict": self.mapping,
            "builtins.set": lambda: self.container("set"),
            "builtins.frozenset": lambda: self.container("set"),
            "collections.abc.Callable": self.callback,
            "typing.Callable": lambda: ["fn", self.integer()],
            # Standard-library types the package cannot build (GRT's detective, for protocols).
            "datetime.datetime": lambda: ["datetime", self.instant()],
            "datetime.date": lambda: ["date", self.instant()[:10]],
            "datetime.timedelta": self.duration,
            "fractions.Fraction": self.fraction,
            "decimal.Decimal": lambda: ["decimal", self.real()[1]],
            "_io.StringIO": lambda: ["textio", self.text()],  # io.StringIO's runtime name
            "_io.BytesIO": lambda: ["bytesio", self.raw()[1]],
            "pathlib.Path": lambda: ["path", self.text()],
            "pathlib.PosixPath": lambda: ["path", self.text()],
            "xml.etree.ElementTree.Element": self.element,
            FORMAT_SPEC: self.spec,
        }

    def can_make(self, type_name: str) -> bool:
        return _plain(type_name) in self._makers

    def tag_of(self, type_name: str) -> str:
        """The literal tag a primitive type name is made with (`builtins.int` -> `int`)."""
        return _plain(type_name).rsplit(".", 1)[-1].replace("NoneType", "none")

    def make(self, type_name: str, elements: tuple[tuple[str, ...], ...] = ()) -> list:
        """A value of `type_name`; for a container, of the element types when they are known
        (`elements`: hints per type argument, `list[tuple]` -> `(("builtins.tuple",),)`)."""
        plain = _plain(type_name)
        if elements and plain in CONTAINER_TAGS:
            return self._typed_container(CONTAINER_TAGS[plain], elements)
        return self._makers[plain]()

    def _typed_container(self, tag: str, elements: tuple[tuple[str, ...], ...]) -> list:
        """A container of the given element types: a tuple's items one per argument when it lists
        several, a dict's keys and values by its two; set elements and dict keys kept hashable."""
        if tag == "tuple" and len(elements) > 1:
            return ["tuple", [self._element(hints) for hints in elements]]
        if tag == "dict" and len(elements) == 2:
            keys = {repr(k): k for k in (self._element(elements[0]) for _ in range(self.rng.randint(0, 2)))
                    if k[0] not in UNHASHABLE_TAGS}
            return ["dict", [[k, self._element(elements[1])] for k in keys.values()]]
        items = [self._element(elements[0]) for _ in range(self.rng.randint(0, 3))]
        if tag == "set":
            items = list({repr(i): i for i in items if i[0] not in UNHASHABLE_TAGS}.values())
        return [tag, items]

    def _element(self, hints: tuple[str, ...]) -> list:
        """An item of a container: of one of `hints` when it can be made. A tuple of unknown arity
        in a container is most often an item pair (`Iterable[tuple[K, V]]`, what `update`s take),
        whose key is any value: sometimes an unhashable one, which a bulk update fails on midway."""
        hint = self.rng.choice(hints) if hints else None
        if hint is None or not self.can_make(hint):
            return self.any()
        if _plain(hint) == "builtins.tuple" and self.rng.random() < PAIR_RATIO:
            return ["tuple", [self.any(), self.any()]]
        return self.make(hint)

    def any(self) -> list:
        """A primitive of any type, for parameters we know nothing about."""
        roll = self.rng.random()
        if roll < 0.38:
            return self.integer()
        if roll < 0.76:
            return self.string()
        if roll < 0.84:
            return self.real()
        if roll < 0.88:
            return ["bool", self.rng.random() < 0.5]
        if roll < 0.91:  # a number or time of the standard library (`get(Decimal("1.5"))`)
            return self.make(self.rng.choice(STANDARD_VALUES))
        if roll < 0.94:
            return self.container("list")
        if roll < 0.97:
            return self.mapping()
        return self.callback()  # untyped callback parameters (a cache's `ttu`) need one

    def _mined(self, tag: str) -> list | None:
        """A mined constant, or None (20%, and the shares of empty pools past the last one):
        the changed lines' 35%, the package's TF-IDF-weighted 10% (taken from the changed
        modules' share: without a package pool the draws are those of uniform pools), the
        changed modules' 15% and the tests' 20%. An empty pool's share goes to the next."""
        hunk, module, tests = self._by_tag[tag]
        package, cumulative = self._package[tag]
        roll = self.rng.random()
        if hunk and roll < 0.35:
            return self.rng.choice(hunk)
        if package and roll < 0.45:
            return package[bisect.bisect_right(cumulative, self.rng.random() * cumulative[-1])]
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

    def spec(self) -> list:
        """A format specification: by the mini-language's grammar, or a string (a mined `","`)."""
        if self.structured and self.rng.random() < 0.7:
            return ["str", format_spec(self.rng)]
        return self.string()

    def argv(self, options: tuple[tuple[str, bool, tuple[str, ...]], ...]) -> list:
        """A command line (a list of str literals) from the words its source spells: often a
        subcommand first, then options (with a value when they take one: a choice, a mined
        string or a number; sometimes as `--opt=value`) and positional words."""
        rng = self.rng
        commands = [text for text, _, _ in options if not text.startswith("-")]
        flags = [option for option in options if option[0].startswith("-")]
        words = [rng.choice(commands)] if commands and rng.random() < 0.7 else []
        for _ in range(rng.randint(0, MAX_ARGV_WORDS)):
            if not flags or rng.random() >= OPTION_RATIO:
                words.append(self._word())
                continue
            text, takes_value, choices = rng.choice(flags)
            if not takes_value:
                words.append(text)
                continue
            value = rng.choice(choices) if choices and rng.random() < 0.8 else self._word()
            joined = text.startswith("--") and rng.random() < 0.2
            words.extend([f"{text}={value}"] if joined else [text, value])
        return ["list", [["str", word] for word in words]]

    def _word(self) -> str:
        """A command line's free word: a string the package uses, or a number."""
        return self.string()[1] if self.rng.random() < 0.6 else str(self.integer()[1])

    def fraction(self) -> list:
        return ["fraction", f"{self.integer()[1]}/{self.rng.choice(DENOMINATORS)}"]

    def real(self) -> list:
        mined = self._mined("float")
        if mined is not None:
            return mined
        if self.rng.random() < 0.7:
            return ["float", self.rng.choice(FLOATS)]
        return ["float", repr(round(self.rng.uniform(-100, 100), 3))]

    def string(self) -> list:
        if self.structured and self.rng.random() < STRUCTURED_RATIO:
            seed = self._mined("str") or ["str", self.rng.choice(STRINGS)]
            return ["str", structured(self.rng, seed[1])]
        mined = self._mined("str")
        if mined is not None:
            if self.rng.random() < 0.1:  # a constant glued to a number reaches "1h", "v2", ...
                return ["str", f"{self.rng.choice(SMALL_INTS[:6])}{mined[1]}"]
            return mined
        return ["str", self.rng.choice(STRINGS)]

    def callback(self) -> list:
        """A function returning a constant (None now and then), or counting up (a clock that
        moves), for callbacks such as a cache's timer or time-to-use function, or a hook whose
        missing result the code treats apart; or (`stores`) one returning the same
        empty dict on every call, for a decorator that asks where to keep its results
        (`cachedmethod(lambda self: self.cache)`); or (`failing`) one raising ValueError,
        TypeError or KeyError with a mined or empty message, so that the code handling a user
        function's failure runs (a converter's error message, a rollback)."""
        if self.stores and self.rng.random() < STORE_RATIO:
            return ["fn", ["dict", []]]
        if self.failing and self.rng.random() < FAILING_RATIO:
            message = self.string()[1] if self.rng.random() < 0.5 else ""
            return ["raises", self.rng.choice(tuple(FAILURES)), message]
        if self.rng.random() < 0.4:
            return ["counter", self.rng.choice(SMALL_INTS[:6])]
        roll = self.rng.random()
        if roll < NOTHING_RATIO:  # code that treats "no result" apart (`if c is None:`) runs
            return ["fn", ["none"]]
        return ["fn", self.integer() if roll < 0.7 else self.real()]

    def instant(self) -> str:
        """An ISO date and time: a calendar edge, or a random second of 1900-2100."""
        if self.rng.random() < 0.7:
            return self.rng.choice(DATETIMES)
        moment = datetime.datetime(1900, 1, 1) + datetime.timedelta(seconds=self.rng.randrange(CENTURIES))
        return moment.isoformat()

    def element(self) -> list:
        """An element tree of HTML's vocabulary (the trees markup renderers build and serialize):
        a tag, maybe a mined text, maybe a child, an empty (void) element among them now and then."""
        rng = self.rng
        tag = rng.choice(HTML_TAGS)
        text = "".join(c for c in self.string()[1] if c.isprintable()) if rng.random() < 0.5 else ""
        text = html.escape(text)
        child = f"<{rng.choice(HTML_TAGS)} />" if rng.random() < 0.4 else ""
        return ["element", f"<{tag}>{text}{child}</{tag}>"]

    def duration(self) -> list:
        """A timedelta: a common span (a minute, a day, a week), or seconds from the integers."""
        seconds = self.integer()[1]
        if self.rng.random() < 0.6 or abs(seconds) > MAX_DURATION:
            return ["timedelta", self.rng.choice(TIMEDELTAS)]
        return ["timedelta", str(seconds)]

    def text(self) -> str:
        """The contents of a text stream or file: a few lines of strings the package uses."""
        return "\n".join(self.string()[1] for _ in range(self.rng.randint(0, 3)))

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


def _cumulative(literals: list[list], weights: list[float]) -> tuple[list[list], list[float]]:
    """The literals with positive weight and their running total, for weighted picks by bisection."""
    kept = [(literal, weight) for literal, weight in zip(literals, weights, strict=True) if weight > 0]
    return [literal for literal, _ in kept], list(itertools.accumulate(weight for _, weight in kept))


def _plain(type_name: str) -> str:
    """`?int` (an unresolved annotation) -> `builtins.int`."""
    if type_name.startswith("?"):
        return "builtins." + type_name[1:].lower().replace("optional", "").strip()
    return type_name
