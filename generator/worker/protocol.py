"""The worker boundary's wire format, `difforacle.worker/1`: requests, results, observation keys.

The host (difforacle's interpreter) and the worker (the project's interpreter) exchange JSON
lines; both import this one module, so the grammar of the messages lives in one place. The
worker writes plain dicts (its hot path); the host decodes each reply once, in the executor,
into the types below. Standard library only.

Requests and replies:

    init  {"cmd": "init", "protocol": PROTOCOL, "roots", "modules", "units", "lines", ...}
          -> {"ok": true, "protocol": PROTOCOL, "catalog", "unwrapped", "at_import", "coverage", ...}
    run   {"cmd": "run", "sequences": [[statement, ...], ...], "random_seed", ...}
          -> {"ok": true, "results": [result record, ...]}  (one per sequence, in order)
    quit  {"cmd": "quit"}
    any failure of the worker itself -> {"ok": false, "error": text, "traceback": text}

A statement is `{"op": operation id, "args": [arg], "kwargs": {name: arg}}`, an arg either
`{"ref": index of an earlier statement}` or `{"lit": literal}` (see `literals`).

Observation keys name what was observed, as a Python access path the renderer can turn back
into an assertion: `<statement>/<variable>` then steps, or `<statement>/!` for the exception
the statement raised. `3/0:total` is the property `total` of statement 0's value observed
after statement 3; `2/2['a:b']@len` is `len()` of the item `'a:b'` of statement 2's result.

A step is `.name` (attribute), `.name()` (zero-argument observer), `:name` (property),
`[literal]` (item) or `@name` (len, list, str, repr). A name that is not an ASCII identifier
(an attribute set with `setattr` or through `__dict__`: `' .encoding'`, `'{0:3'`, `''`) is
written as its `repr`, a Python string literal: `.' .encoding'`, `:'a b'`, `.'x y'()`. Keys stay
readable Python, and every name round-trips: the parser reads a quoted name to its closing
quote (skipping escapes), never to the next delimiter, and accepts only the form the builders
write, so `ObservationKey.parse(text).text == text` for every key it accepts.
"""

from __future__ import annotations

import ast
import re
import signal
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, TypedDict

from .compat import StrEnum

if TYPE_CHECKING:  # annotations only (3.11+): the worker runs under 3.9 too
    from typing import NotRequired  # novm

PROTOCOL = "difforacle.worker/1"
# The generation techniques with a part in the worker, by the names `--disable` takes: the init
# request lists those on, and each part reads its own name. `asynchronous`: coroutines awaited and
# asynchronous generators drained; `duck`: parameters typed by the attributes their functions use;
# `divergence`: the changed lines' conditions measured (branch distances); `configured`: the public
# settable attributes of the project's classes listed as operations (`Class.attr<set>`); `volume`: the
# operations that keep state between calls marked, and `op<xN>` called N times (see `volume`)
WORKER_TECHNIQUES = ("asynchronous", "duck", "divergence", "configured", "volume")
# divergence: when there is a condition
WORKER_DEFAULTS = frozenset({"asynchronous", "duck", "configured"})
DUMP_SIGNAL = signal.SIGUSR1  # the worker writes every thread's stack to its stderr (faulthandler)

Leaf = list  # a JSON list led by a tag (`Tag`): ["i", 3], ["s", "a"], ["E", type, message, module], ...
Arg = dict  # {"ref": index of an earlier statement} | {"lit": literal}: see the module docstring


class Statement(TypedDict):
    """One call of a sequence: the operation's id, its positional and its keyword arguments."""

    op: str
    args: list[Arg]
    kwargs: dict[str, Arg]


class Tag:
    """The tags that lead an observation's leaf, and the layout of each leaf (the leaf grammar).

    The worker writes leaves (`observe`); the host compares them, describes them in reports and
    asserts them in tests (the `oracle` package). Values are leaves of their own; a container's
    leaf holds its size, its items are observed under their own keys (`[0]`, `['a']`).
    """

    NONE = "n"  # ["n"]
    BOOL = "t"  # ["t", True | False]
    INT = "i"  # ["i", value], for |value| < 2**62
    BIG_INT = "i~"  # ["i~", bit length, hash]
    FLOAT = "f"  # ["f", repr]
    COMPLEX = "c"  # ["c", repr]
    STR = "s"  # ["s", text]
    LONG_STR = "s~"  # ["s~", length, sha1 prefix, first characters]
    BYTES = "b"  # ["b", hex]
    LONG_BYTES = "b~"  # ["b~", length, sha1 prefix]
    STANDARD = "v"  # a standard value (a date, a Decimal, a compiled pattern): ["v", type name, repr]
    LONG_STANDARD = "v~"  # ["v~", type name, length of the repr, sha1 prefix, first characters]
    # a statement raised: ["E", class qualname, message, module(, who raised it)]; a call the worker
    # stopped or lost: ["E", "Timeout" | "Hang" | "Crash", detail] (no module)
    RAISED = "E"
    # the operation is missing on this commit, or its signature rejects the call:
    # ["API", "missing" | "signature", message]
    API = "API"
    EXCEPTION_VALUE = "exc"  # an exception held as a value: ["exc", class qualname, message, module]
    UNOBSERVABLE = "unobservable"  # observing the value raised: ["unobservable", class qualname, message]
    UNSTABLE = "unstable"  # an observer whose value varied between two calls: ["unstable"]
    CYCLE = "cycle"  # a value already being observed on this path: ["cycle"]
    OBJECT = "T"  # an object observed by its fields: ["T", type name]
    ENUM = "enum"  # ["enum", "Class.MEMBER"]
    FUNCTION = "fn"  # a callable: ["fn", "module.qualname"]
    LIST = "list"  # ["list", length]; a subclass of list or tuple has its type name as the tag
    TUPLE = "tuple"  # ["tuple", length]
    DICT = "dict"  # ["dict", length, [key literal, ...]]; another mapping has its type name as the tag
    SET = "set"  # ["set", length(, [item literal, ...] | sha1 prefix of the sorted items)]
    GENERATOR = "gen"  # ["gen", items taken (at most the observer's limit)]


class OperationKind:
    """What an operation of the catalog is, and so how a statement calls it (an operation id is
    `module:qualname`, or a form the worker's resolver reads)."""

    FUNCTION = "function"  # a module's function: f(*args)
    CONSTRUCTOR = "constructor"  # a class: Class(*args)
    METHOD = "method"  # an instance method: args[0].m(*args[1:])
    STATIC = "static"  # a static or class method: Class.m(*args)
    VALUE = "value"  # a module's public constant, table or object built at import: read, not called
    EXPORT = "export"  # a public name of a module, looked up (head removing it is an API change)
    COMMAND = "command"  # a command-line entry point, run with an argv list and a stdin text
    CALL = "call"  # a callable an earlier statement returned, called: args[0](*args[1:])
    # an attribute assigned: args[0].name = args[1]. The resolver's kind for `Class.attr<set>`, which
    # the catalog lists as a method (a receiver, then the value: see `settable`)
    SETTER = "setter"
    # an operation called many times in a row, its literal arguments distinct in each call: the
    # resolver's kind for `op<xN>` (see `volume`)
    VOLUME = "volume"


class ApiChange(StrEnum):
    """The second field of an API leaf: what about the operation changed."""

    MISSING = "missing"  # the operation does not exist on this commit
    SIGNATURE = "signature"  # its signature rejects the call


class Status(StrEnum):
    """How a sequence ended."""

    OK = "ok"  # every statement returned
    EXCEPTION = "exception"  # a statement raised (the sequence stops there)
    TIMEOUT = "timeout"  # a statement exceeded the per-call timeout
    CRASH = "crash"  # the forked process died or hung: its observations are lost
    MISSING = "missing"  # an operation does not exist on this commit (an API difference)
    UNBINDABLE = "unbindable"  # the operation's signature rejects the call on this commit
    SKIPPED = "skipped"  # not run: it calls an operation that hung earlier in the request


# ---------------------------------------------------------------- requests and replies


class InitRequest(TypedDict):
    cmd: Literal["init"]
    protocol: str
    roots: list[str]  # folders put first on sys.path
    modules: list[str]  # the changed modules, imported to make the catalog
    units: list[list[str]]  # [module, qualname] of the changed functions: wrapped to detect hits
    # changed private functions and methods no public code calls: operations of their own ("direct")
    direct: NotRequired[list[str]]
    # classes whose subclass with nothing of its own is built too (`pkg.mod:Version<subclass>`)
    subclassed: NotRequired[list[str]]
    # class-level values a changed class body binds (`pkg.mod:Locale.timeframes`), read as tables
    class_values: NotRequired[list[str]]
    # module table (`pkg.mod:NAME`) -> literals of the keys or indices of the entries the change is in:
    # walked besides its first MODULE_VALUE_ITEMS
    changed_entries: NotRequired[dict[str, list[list]]]
    techniques: NotRequired[list[str]]  # those of WORKER_TECHNIQUES that are on (default WORKER_DEFAULTS)
    lines: dict[str, list[int]]  # absolute file -> changed lines, for coverage
    coverage_path: str | None  # a folder holding only coverage.py, appended if the project has none
    # [folder, placeholder]: the run's own folders (the checkout, the worker's temporary folder), each
    # written as its placeholder in every observed string, so that base and head read the same
    placeholders: NotRequired[list[list[str]]]
    call_timeout: float
    sequence_timeout: float
    memory_mb: int


class InitReply(TypedDict):
    ok: bool
    protocol: str
    catalog: dict  # {"operations", "classes", "import_errors", "compiled"} (see `introspect`)
    unwrapped: list[str]  # changed units whose calls cannot be detected (every sequence is replayed)
    at_import: dict  # {"arcs", "covered"}: the changed lines the imports ran (see `ExecutedLines`)
    coverage: dict  # {"version": coverage.py's or None, "error": why not measured or None}
    python: str  # the interpreter's version


class RunRequest(TypedDict):
    cmd: Literal["run"]
    sequences: list[list[Statement]]
    random_seed: int
    isolate: bool  # each sequence in its own fork (else one fork per request)
    callees: bool  # name the function each statement ran (dynamic dispatch followed)
    lines: bool  # measure the changed lines and arcs that ran
    # with `lines`: absolute file -> lines whose outgoing arcs are reported per sequence (its path)
    paths: NotRequired[dict[str, list[int]]]
    fields: bool  # field-coverage triples of each ok sequence's last statement
    disabled_observers: list[str]  # type names whose observers must not run
    # per sequence, None or {"receiver", "calls"}: record its reads and writes (dynamic influence check)
    influence: NotRequired[list[dict | None]]
    distances: NotRequired[bool]  # each sequence's least branch distance per changed condition


class ResultRecord(TypedDict, total=False):
    """One sequence's result as the worker writes it (see `SequenceResult` for the meaning)."""

    status: str
    obs: dict[str, Leaf]
    n: int
    hit: bool
    ms: float
    types: list[list[str]]
    digests: dict[str, str]
    reusable: list[bool]
    lost: bool
    skipped_op: str
    fields: list[str]
    callees: list[str]
    callables: dict[str, list[dict]]
    influence: dict | None
    arcs: list[list]
    covered: list[list]
    paths: dict[str, list[list]]
    dist: dict[str, float]


# ---------------------------------------------------------------- observation keys

EXCEPTION_MARK = "!"
# What the observer writes in place of the run's own folders inside a string: where the commit is
# checked out, and the worker's temporary folder (its working folder and $TMPDIR).
CHECKOUT, TEMPORARY = "<checkout>", "<tmp>"
FOLDER_PLACEHOLDERS = (CHECKOUT, TEMPORARY)
RESULT, ARGUMENT = "result", "argument"  # the roles an observed value has in its statement
StepKind = Literal["attr", "property", "call", "item", "wrap"]
OBSERVER_STEPS = frozenset({"property", "call", "wrap"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # written bare in a key; any other name is quoted
_ITEM = re.compile(r"(-?[0-9]+|True|False|None)]")  # the unquoted item literals the observer writes
_QUOTES = "'\""


class MalformedKey(ValueError):
    """Text that no builder of this module writes: a bug or a corrupted record, never a project's value."""


def exception_key(statement: int) -> str:
    """The key of the exception `statement` raised (or the loss of its process)."""
    return f"{statement}/{EXCEPTION_MARK}"


def value_key(statement: int, variable: int) -> str:
    """The key of the value made by statement `variable`, observed after `statement`."""
    return f"{statement}/{variable}"


def digest_key(statement: int, variable: int) -> str:
    """The key of a state digest in a result's `digests` (the statement's own value: `"3"`)."""
    return str(statement) if statement == variable else f"{statement}/{variable}"


def name_text(name: str) -> str:
    """A name as a key writes it: bare if an ASCII identifier, else quoted (its `repr`)."""
    return name if _NAME.fullmatch(name) else str.__repr__(name)


def attribute_step(name: str) -> str:
    return "." + name_text(name)


def property_step(name: str) -> str:
    return ":" + name_text(name)


def call_step(name: str) -> str:
    return f".{name_text(name)}()"


def item_step(key: int | str) -> str:
    """`[k]` for an int, bool or str key (the repr of other values need not read back)."""
    return f"[{key!r}]"


def wrap_step(name: str) -> str:
    """`len(x)`, `list(x)`, `str(x)` or `repr(x)`: `@len`, ..."""
    return "@" + name


@dataclass(frozen=True)
class Step:
    kind: StepKind
    text: str  # attribute, property or method name (as Python has it); item literal source; wrapper name

    @property
    def source(self) -> str:
        """The step as a key writes it."""
        if self.kind == "item":
            return f"[{self.text}]"
        return {"attr": attribute_step, "property": property_step, "call": call_step,
                "wrap": wrap_step}[self.kind](self.text)


@dataclass(frozen=True)
class ObservationKey:
    statement: int
    variable: int | None  # None for the exception key
    steps: tuple[Step, ...] = ()

    @staticmethod
    def parse(text: str) -> ObservationKey:
        """The key `text` stands for; MalformedKey (a ValueError) if no builder writes such text."""
        return _parse_key(text)

    @property
    def text(self) -> str:
        if self.variable is None:
            return exception_key(self.statement)
        return value_key(self.statement, self.variable) + self.path

    @property
    def is_exception(self) -> bool:
        return self.variable is None

    @property
    def observes_result(self) -> bool:
        """The statement's own result (else the state of an earlier value it touched)."""
        return self.variable == self.statement

    @property
    def through_observer(self) -> bool:
        return any(step.kind in OBSERVER_STEPS for step in self.steps)

    @property
    def path(self) -> str:
        """The steps alone, without the statement and variable numbers: `:total`, `['a']@len`."""
        return "".join(step.source for step in self.steps)

    @property
    def observation(self) -> str:
        """What is observed, whatever the sequence: `!`, `result<path>` or `argument<path>`."""
        if self.is_exception:
            return EXCEPTION_MARK
        return (RESULT if self.observes_result else ARGUMENT) + self.path


def statement_of(key: str) -> int:
    """The statement of a key without parsing the rest (a hot path)."""
    try:
        return int(key.split("/", 1)[0])
    except ValueError:
        raise MalformedKey(f"not an observation key: {key!r}") from None


@lru_cache(maxsize=1 << 16)
def _parse_key(text: str) -> ObservationKey:
    statement, slash, rest = text.partition("/")
    if not slash or not statement.isascii() or not statement.isdigit():
        raise MalformedKey(f"not an observation key: {text!r}")
    if rest == EXCEPTION_MARK:
        return ObservationKey(int(statement), None)
    digits = len(rest) - len(rest.lstrip("0123456789"))
    if not digits:
        raise MalformedKey(f"not an observation key: {text!r}")
    return ObservationKey(int(statement), int(rest[:digits]), tuple(parse_steps(rest[digits:])))


def parse_steps(path: str) -> list[Step]:
    """The steps of a key's path. Quoted names and item literals may contain any character, so
    paths are tokenized, never matched with one regex."""
    steps, position = [], 0
    while position < len(path):
        step, position = _next_step(path, position)
        steps.append(step)
    return steps


def _next_step(text: str, start: int) -> tuple[Step, int]:
    """The step at `text[start:]` and where the next one starts."""
    head = text[start]
    if head == "@":
        name = _NAME.match(text, start + 1)
        if name:
            return Step("wrap", name.group(0)), name.end()
    elif head in ".:":
        found = _name_at(text, start + 1)
        if found is not None:
            name, end = found
            if head == ":":
                return Step("property", name), end
            if text.startswith("()", end):
                return Step("call", name), end + 2
            return Step("attr", name), end
    elif head == "[":
        found = _item_at(text, start + 1)
        if found is not None:
            literal, end = found
            return Step("item", literal), end
    raise MalformedKey(f"cannot parse observation key suffix {text[start:]!r}")


def _name_at(text: str, start: int) -> tuple[str, int] | None:
    """A bare or quoted name at `text[start:]` in the one form `name_text` writes, and its end."""
    if start < len(text) and text[start] in _QUOTES:
        end = _string_end(text, start)
        if end is None:
            return None
        literal = text[start:end]
        try:
            name = ast.literal_eval(literal)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if not isinstance(name, str) or name_text(name) != literal:
            return None  # not the canonical form: the same name would print differently
        return name, end
    bare = _NAME.match(text, start)
    return (bare.group(0), bare.end()) if bare else None


def _item_at(text: str, start: int) -> tuple[str, int] | None:
    """An item literal at `text[start:]` (up to its closing bracket), and the end of the step."""
    if start < len(text) and text[start] in _QUOTES:
        end = _string_end(text, start)
        if end is not None and text.startswith("]", end):
            return text[start:end], end + 1
        return None
    simple = _ITEM.match(text, start)
    if simple:
        return simple.group(1), simple.end()
    end = text.find("]", start)
    while end != -1:  # another literal: the shortest that parses
        try:
            ast.literal_eval(text[start:end])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            end = text.find("]", end + 1)
            continue
        return text[start:end], end + 1
    return None


def _string_end(text: str, start: int) -> int | None:
    """The end of the string literal that opens with the quote at `text[start]` (backslash
    escapes skipped, as `repr` writes them), or None if it never closes."""
    quote, position = text[start], start + 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
        elif char == quote:
            return position + 1
        else:
            position += 1
    return None


# ---------------------------------------------------------------- results


@dataclass
class ExecutedLines:
    """What coverage.py saw run in the changed files: raw arcs, and lines by statement
    (statement -1 when not measured per statement); when paths were asked for, each sequence's
    raw arcs out of the lines asked about, by its position in the request (one that took none
    is absent; None: not measured)."""

    covered: list[tuple[int, str, int]] = field(default_factory=list)  # (statement, file, line)
    arcs: list[tuple[str, int, int]] = field(default_factory=list)  # (file, from, to)
    paths: dict[int, list[tuple[str, int, int]]] | None = None

    @staticmethod
    def from_json(data: dict) -> ExecutedLines:
        paths = data.get("paths")
        return ExecutedLines([tuple(c) for c in data.get("covered", ())],  # type: ignore[misc]
                             [tuple(a) for a in data.get("arcs", ())],  # type: ignore[misc]
                             None if paths is None else {int(position): [tuple(a) for a in arcs]  # type: ignore[misc]
                                                         for position, arcs in paths.items()})


@dataclass
class SequenceResult:
    """What running one sequence did, decoded once from the worker's record.

    `observations` maps key text (see `ObservationKey`) to leaf; `executed` counts the
    statements that ran to their end (where a lost process stopped, for a crash); `hit`:
    the sequence entered changed code; `types`: per statement, the MRO names of its value;
    `digests`: state digests by `digest_key`, the generator's redundancy filter (never an
    oracle); `reusable`: per statement, whether its value may be pooled; `milliseconds`:
    what the run took; `lost`: the process died or hung, so observations stop at `executed`;
    `skipped_operation`: the operation that made the worker skip the sequence; `fields`:
    field-coverage triples (when asked); `callees`: per statement, the function that ran
    (when asked); `lines`: coverage (when asked, on the last result of each forked process);
    `callables`: the statements whose values are callables the generator may call, with their
    parameters (in the catalog's form); `influence`: the receiver fields each traced statement
    read and wrote (when asked; None when the receiver could not be traced); `distances`: per
    changed condition ("file:line:column"), the least branch distance the sequence reached (when
    asked; see `distance`).
    """

    status: Status
    observations: dict[str, Leaf]
    executed: int = 0
    hit: bool = False
    milliseconds: float | None = None
    types: list[list[str]] = field(default_factory=list)
    digests: dict[str, str] = field(default_factory=dict)
    reusable: list[bool] = field(default_factory=list)
    lost: bool = False
    skipped_operation: str | None = None
    fields: list[str] | None = None
    callees: list[str] = field(default_factory=list)
    lines: ExecutedLines = field(default_factory=ExecutedLines)
    callables: dict[int, list[dict]] = field(default_factory=dict)
    influence: dict | None = None
    distances: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def from_json(data: ResultRecord) -> SequenceResult:
        return SequenceResult(
            status=Status(data["status"]), observations=data.get("obs", {}), executed=data.get("n", 0),
            hit=bool(data.get("hit")), milliseconds=data.get("ms"), types=data.get("types", []),
            digests=data.get("digests", {}), reusable=data.get("reusable", []), lost=bool(data.get("lost")),
            skipped_operation=data.get("skipped_op"), fields=data.get("fields"),
            callees=data.get("callees", []), lines=ExecutedLines.from_json(data),  # type: ignore[arg-type]
            callables={int(index): params for index, params in data.get("callables", {}).items()},
            influence=data.get("influence"), distances=data.get("dist", {}))

    def forget_observations(self) -> None:
        """Drop the observations once compared (they are most of a result's memory)."""
        self.observations = {}


def lost_record(detail: str, statement: int) -> ResultRecord:
    """The record of a sequence whose process hung (`detail` "hang") or died at `statement`."""
    kind = "Hang" if detail == "hang" else "Crash"
    return {"status": Status.CRASH.value, "n": statement, "hit": True, "lost": True,
            "obs": {exception_key(statement): [Tag.RAISED, kind, detail]}, "types": [], "digests": {},
            "reusable": []}
