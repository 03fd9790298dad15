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
"""

from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, TypedDict

PROTOCOL = "difforacle.worker/1"

Leaf = list  # a JSON list led by a tag: ["i", 3], ["s", "a"], ["E", type, message, module], ...
Statement = dict  # {"op", "args", "kwargs"}: see the module docstring


class Status(enum.StrEnum):
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
    lines: dict[str, list[int]]  # absolute file -> changed lines, for coverage
    coverage_path: str | None  # a folder holding only coverage.py, appended if the project has none
    call_timeout: float
    sequence_timeout: float
    memory_mb: int


class InitReply(TypedDict):
    ok: bool
    protocol: str
    catalog: dict  # {"operations", "classes", "import_errors"} (see `introspect`)
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
    fields: bool  # field-coverage triples of each ok sequence's last statement
    disabled_observers: list[str]  # type names whose observers must not run


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
    arcs: list[list]
    covered: list[list]


# ---------------------------------------------------------------- observation keys

EXCEPTION_MARK = "!"
StepKind = Literal["attr", "property", "call", "item", "wrap"]
OBSERVER_STEPS = frozenset({"property", "call", "wrap"})
_NAME = re.compile(r"[A-Za-z_]\w*")


def exception_key(statement: int) -> str:
    """The key of the exception `statement` raised (or the loss of its process)."""
    return f"{statement}/{EXCEPTION_MARK}"


def value_key(statement: int, variable: int) -> str:
    """The key of the value made by statement `variable`, observed after `statement`."""
    return f"{statement}/{variable}"


def digest_key(statement: int, variable: int) -> str:
    """The key of a state digest in a result's `digests` (the statement's own value: `"3"`)."""
    return str(statement) if statement == variable else f"{statement}/{variable}"


def attribute_step(name: str) -> str:
    return "." + name


def property_step(name: str) -> str:
    return ":" + name


def call_step(name: str) -> str:
    return f".{name}()"


def item_step(key: Any) -> str:
    return f"[{key!r}]"


def wrap_step(name: str) -> str:
    """`len(x)`, `list(x)`, `str(x)` or `repr(x)`: `@len`, ..."""
    return "@" + name


@dataclass(frozen=True)
class Step:
    kind: StepKind
    text: str  # attribute, property or method name; item literal source; wrapper name

    @property
    def source(self) -> str:
        return {"attr": attribute_step, "property": property_step, "call": call_step,
                "wrap": wrap_step}[self.kind](self.text) if self.kind != "item" else f"[{self.text}]"


@dataclass(frozen=True)
class ObservationKey:
    statement: int
    variable: int | None  # None for the exception key
    steps: tuple[Step, ...] = ()

    @staticmethod
    def parse(text: str) -> ObservationKey:
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
        return ("result" if self.observes_result else "argument") + self.path


def statement_of(key: str) -> int:
    """The statement of a key without parsing the rest (a hot path)."""
    return int(key.split("/", 1)[0])


@lru_cache(maxsize=1 << 16)
def _parse_key(text: str) -> ObservationKey:
    statement, _, rest = text.partition("/")
    if rest == EXCEPTION_MARK:
        return ObservationKey(int(statement), None)
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return ObservationKey(int(statement), int(rest[:digits]), tuple(parse_steps(rest[digits:])))


def parse_steps(path: str) -> list[Step]:
    """The steps of a key's path. Item literals may contain any character, so paths are
    tokenized, never matched with one regex."""
    steps, position = [], 0
    while position < len(path):
        step, length = _next_step(path[position:])
        steps.append(step)
        position += length
    return steps


def _next_step(text: str) -> tuple[Step, int]:
    head = text[0]
    if head == "@":
        name = _NAME.match(text, 1)
        if name:
            return Step("wrap", name.group(0)), name.end()
    elif head in ".:":
        name = _NAME.match(text, 1)
        if name:
            if head == ":":
                return Step("property", name.group(0)), name.end()
            if text.startswith("()", name.end()):
                return Step("call", name.group(0)), name.end() + 2
            return Step("attr", name.group(0)), name.end()
    elif head == "[":
        for end in range(2, len(text) + 1):
            if text[end - 1] == "]":
                try:
                    ast.literal_eval(text[1:end - 1])
                except (ValueError, SyntaxError):
                    continue
                return Step("item", text[1:end - 1]), end
    raise ValueError(f"cannot parse observation key suffix {text!r}")


# ---------------------------------------------------------------- results


@dataclass
class ExecutedLines:
    """What coverage.py saw run in the changed files: raw arcs, and lines by statement
    (statement -1 when not measured per statement)."""

    covered: list[tuple[int, str, int]] = field(default_factory=list)  # (statement, file, line)
    arcs: list[tuple[str, int, int]] = field(default_factory=list)  # (file, from, to)

    @staticmethod
    def from_json(data: dict) -> ExecutedLines:
        return ExecutedLines([tuple(c) for c in data.get("covered", ())],  # type: ignore[misc]
                             [tuple(a) for a in data.get("arcs", ())])  # type: ignore[misc]


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
    (when asked); `lines`: coverage (when asked, on the last result of each forked process).
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

    @staticmethod
    def from_json(data: ResultRecord) -> SequenceResult:
        return SequenceResult(
            status=Status(data["status"]), observations=data.get("obs", {}), executed=data.get("n", 0),
            hit=bool(data.get("hit")), milliseconds=data.get("ms"), types=data.get("types", []),
            digests=data.get("digests", {}), reusable=data.get("reusable", []), lost=bool(data.get("lost")),
            skipped_operation=data.get("skipped_op"), fields=data.get("fields"),
            callees=data.get("callees", []), lines=ExecutedLines.from_json(data))  # type: ignore[arg-type]

    def forget_observations(self) -> None:
        """Drop the observations once compared (they are most of a result's memory)."""
        self.observations = {}


def lost_record(detail: str, statement: int) -> ResultRecord:
    """The record of a sequence whose process hung (`detail` "hang") or died at `statement`."""
    kind = "Hang" if detail == "hang" else "Crash"
    return {"status": Status.CRASH.value, "n": statement, "hit": True, "lost": True,
            "obs": {exception_key(statement): ["E", kind, detail]}, "types": [], "digests": {},
            "reusable": []}
