"""Plain data types at the edges of the engine's pipeline stages.

Every stage (workspace, changes, catalog, explore, compare, render, report) takes and
returns these types, so stages can be tested and replaced one at a time.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

# ---------------------------------------------------------------- workspace




# ---------------------------------------------------------------- changes









# ---------------------------------------------------------------- sequences

# An argument is either a reference to the value made by an earlier statement, or a
# literal in the tagged form of the worker's literals (e.g. ["int", 3], ["str", "a"]).
Arg = dict  # {"ref": int} | {"lit": list}


@dataclass(frozen=True)
class Statement:
    """One call: `op` is an operation id from the catalog (`mod:Qual.name` or a dunder form)."""

    op: str
    args: tuple[Arg, ...] = ()
    kwargs: tuple[tuple[str, Arg], ...] = ()

    def to_json(self) -> dict:
        return {"op": self.op, "args": list(self.args), "kwargs": dict(self.kwargs)}

    @staticmethod
    def from_json(data: dict) -> Statement:
        return Statement(data["op"], tuple(data["args"]), tuple(sorted(data["kwargs"].items())))


# ---------------------------------------------------------------- findings

DifferenceKind = Literal["return", "exception", "state", "observer", "api"]


class Verdict(enum.StrEnum):
    """What the run can say about why a difference is there (the triage stage decides)."""

    UNEXPLAINED = "unexplained"  # nothing accounts for it: a possible regression
    BREAKS_EXISTING_TEST = "breaks-existing-test"  # an unchanged test calling its operation now fails
    ASSERTED_BY_PR = "asserted-by-pr"  # a test the pull request adds or changes shows it on its own input
    NAMED_BY_PR = "named-by-pr"  # the pull request's words name its operation: meant, most likely
    OUTSIDE_DECLARED_TYPES = "outside-declared-types"  # only an input the declared types rule out shows it


# the verdicts that fail a check and set exit status 1
COUNTED = (Verdict.BREAKS_EXISTING_TEST, Verdict.UNEXPLAINED, Verdict.ASSERTED_BY_PR, Verdict.NAMED_BY_PR)
# accounted for by the pull request: listed after the unexplained ones
EXPLAINED = (Verdict.ASSERTED_BY_PR, Verdict.NAMED_BY_PR)


class InputOrigin(enum.StrEnum):
    """How the input that shows a difference was obtained: what a maintainer weighs it by."""

    CARVED = "carved"  # cut from a call the project's own tests make
    WITHIN_DECLARED_TYPES = "within-declared-types"  # generated, within its operations' declared types
    OUTSIDE_DECLARED_TYPES = "outside-declared-types"  # generated, of a type its operation rules out


@dataclass(frozen=True)
class TableEntry:
    """An entry of a module's table that differs: a dict's key, a list's item, a set's element."""

    change: str  # "added", "removed" or "changed"
    entry: str  # where it sits: `['ASC']`, `[5]`, or a set's element
    words: tuple[str, ...] = ()  # the strings and numbers in it, by which prose may name it
    edits: tuple[tuple[str, str], ...] = ()  # a changed entry's strings that differ: (base's, head's)


@dataclass
class Difference:
    """One behavioural difference, grouped: `count` sequences showed it, `statements` is the shown one."""

    id: str
    kind: DifferenceKind
    target: str  # "pkg.mod:Qual.name"
    path: str | None
    line: int | None
    base: str  # human-readable value on base
    head: str  # human-readable value on head
    test: str  # pytest source: passes on base, fails on head
    key: str  # observation key that differs (see the oracle's compare)
    statements: list[Statement] = field(default_factory=list)
    count: int = 1
    pin_head: str | None = None  # pytest source asserting head's behaviour (kept if the change is intended)
    reproduced: bool | None = None  # pytest reproduced both flavours in fresh processes (None: not checked)
    minimized: bool = True  # False when the minimization time bound cut shrinking short
    side: str | None = None  # "head" or "base": the commit whose file `path`:`line` refers to
    # "minor": only the message of an exception differs, and the project's own code did not produce
    # it on either commit (the interpreter, the standard library or a dependency raised it)
    severity: str = "major"
    verdict: str = Verdict.UNEXPLAINED
    evidence: str = ""  # what the verdict rests on, quoted for a reader ("" when unexplained)
    rule: str = ""  # the triage rule that gave the verdict (`triage.rules.RULES`; "" when unexplained)
    closest: list[str] = field(default_factory=list)  # unexplained: evidence that nearly counted, and why not
    origin: str = InputOrigin.WITHIN_DECLARED_TYPES
    carved_by: list[str] = field(default_factory=list)  # the project's tests whose own calls showed it
    direct: bool = False  # its sequence calls a changed private function or method no public code calls
    entries: list[TableEntry] = field(default_factory=list)  # a module table's entries that differ

    @property
    def pin_base(self) -> str:
        """The regression test: passes on base, fails on head."""
        return self.test


@dataclass
class SideCoverage:
    """Changed-code coverage of one commit: base (removed or modified lines) or head (added or modified)."""

    changed_lines: int = 0
    changed_lines_covered: int = 0
    changed_branches: int = 0
    changed_branches_covered: int = 0
    uncovered: dict[str, list[int]] = field(default_factory=dict)  # path -> lines
    uncovered_branches: dict[str, list[list[int]]] = field(default_factory=dict)  # path -> [from, to]


NOT_MEASURED = "not measured"  # Coverage.measured_by when changed-line coverage could not be measured


@dataclass
class Coverage:
    """The top-level figures count each file once, on its primary side (see changed_lines)."""

    changed_lines: int = 0
    changed_lines_covered: int = 0
    uncovered: dict[str, list[int]] = field(default_factory=dict)
    changed_branches: int = 0
    changed_branches_covered: int = 0
    sides: dict[str, SideCoverage] = field(default_factory=dict)
    measured_by: str = ""  # "coverage.py 7.x", or why nothing was measured


@dataclass(frozen=True)
class UnitShare:
    """A unit's place in the budget: tier 1 changed, tier 2 impacted; its share of focused generation."""

    unit: str  # "pkg.mod:Qual.name"
    tier: int
    probability: float  # Schwa defect probability (0 with --allocation uniform)
    share: float


@dataclass
class Allocation:
    mode: str  # "defect" or "uniform"
    units: list[UnitShare] = field(default_factory=list)


@dataclass
class Stats:
    sequences: int = 0
    seconds: float = 0.0
    sequences_per_second: float = 0.0
    explore_seconds: float = 0.0  # time in the exploration phase: sequences / this = base throughput
    explore_workers: int = 0  # workers that explored on base (`--jobs`)
    explore_stopped_early: int = 0  # 1: exploring ended before its deadline, the change exhausted
    kept: int = 0
    replayed: int = 0
    candidates: int = 0
    masked_keys: int = 0
    crashed: int = 0  # sequences that crashed their process or timed out while exploring
    history_seconds: float = 0.0  # reading the git history for the defect scores
    # What each technique that is on did, by technique and counter (`techniques.TECHNIQUES` names
    # them): its plugin's counters, what it marked in the catalog, what carving ran. A technique
    # that counts nothing is left out; one with all counts 0 had nothing to act on in this run.
    techniques: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class UnitReach:
    """How much of one changed unit's changed code the run ran (see reach.py)."""

    unit: str  # "pkg.mod:Qual.name", "pkg.mod:<module>" for module-level code
    path: str  # repository-relative, on `side`
    side: str  # "head", or "base" for a file whose change only removes lines
    lines: int  # changed executable lines in it
    run: int  # of them, run by some sequence or by the import
    reason: str = ""  # why the others did not run ("" when all ran)


@dataclass(frozen=True)
class RunError:
    """Where a run stopped on an internal error: its report is partial."""

    phase: str  # the phase the run was in: "exploring", "confirming", "reproducing", ...
    message: str  # the error, on one line: "ValueError: ..."


@dataclass
class Report:
    base: str
    head: str
    differences: list[Difference] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)
    stats: Stats = field(default_factory=Stats)
    allocation: Allocation | None = None
    notes: list[str] = field(default_factory=list)
    reach: list[UnitReach] = field(default_factory=list)  # per changed unit; empty when not measured
    error: RunError | None = None  # set only on the partial report of a run that stopped early
