"""Solver-found inputs: CrossHair's symbolic execution for the changed functions whose branches
exploration leaves untaken (the concolic step of JTestCraft, §3.1 and Listing 4.4: a path
condition solved for primitive inputs).

A branch such as `if x * 7 % 1000 == 431` or `if name[::-1] == "nimda"` is one random and mined
values rarely take. Once exploration has had SOLVER_AFTER of its budget (of its sequences, in a
reproducible run), each changed function or method that is a catalog operation and still has an
uncovered changed line or an untaken branch out of one gets a time slice of `crosshair cover`
(path coverage) on the side where that code is uncovered, run by the worker's `solver` under the
project's interpreter in the worker's sandbox, with difforacle's CrossHair appended to its path
as pytest is for the reproduction check. Each argument dictionary CrossHair prints whose values
are primitives (`literals.encode`) becomes that operation's call with those literal arguments (a
method's receiver is built as for any call): exploration runs these seeds next, pools and learns
from them, and replays them like generated sequences. An input that cannot be parsed, or holds a
value no literal spells (an object, `float('nan')`), is skipped and counted.

A change that shows only on a boundary (`<` for `<=`, one residue of a modulus) leaves every
changed line run by thousands of calls and nothing different. The `diffbehavior` component asks
the solver for divergence instead (CrossHair's `diffbehavior`, after shadow symbolic execution
and HyDiff's differential search): at the same moment, each changed function or method whose
changed lines ran but through which no difference was seen (or, for a private helper, each
operation that calls it) gets a time slice in which CrossHair runs base's and head's versions of
it side by side and prints the inputs on which they differ.
Those become seeds the same way, and the replay on the two checkouts decides what differs.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import math
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...changes.changed_lines import ChangedLines, Target
from ...changes.model import Checkout
from ...planning.deadline import (
    SOLVER_AFTER,
    SOLVER_CALL_SECONDS,
    SOLVER_CPU_SHARE,
    SOLVER_PATH_SECONDS,
    SOLVER_REPRODUCIBLE_CALL_SECONDS,
)
from ...planning.impact import Impact
from ...runtime.catalog import Operation
from ...runtime.packages import link_packages
from ...runtime.sequence import CallSequence, sequence_key
from ...runtime.workers import BOOT, worker_environment
from ...worker.literals import encode
from ...worker.protocol import OperationKind
from ...worker.solver import NO_HEAD, NO_SOLVER, PATH_VARIABLE
from ..replay import KeptSequence

# and a busy machine's slack (CrossHair prints a function's inputs only at its end; on an idle
# machine the call ends early)
MAX_FUNCTIONS = 6  # asked per run, those with the most uncovered targets first
MEMORY_MB = 2048
SOLVER_DISTRIBUTION = "crosshair-tool"
GIVEN = "Given: ("  # how `crosshair diffbehavior` starts the line of an input the versions differ on
ARGUMENT_NAME = re.compile(r"(?:^|, )([A-Za-z_]\w*)=")  # where `name=repr, ...` starts an argument
UNSPELLED = "unspelled"  # stands for a repr that is no expression
SOLVED_KINDS = (OperationKind.FUNCTION, OperationKind.METHOD, OperationKind.STATIC)
NOT_INSTALLED_FOLDERS = (".dist-info", ".data", ".egg-info")  # a distribution's files that are no modules
MISSING_NOTE = ("The solver component is on, but CrossHair is not installed in difforacle's environment "
                "(pip install 'difforacle[solver]'): no solver-found inputs.")


@dataclass(frozen=True)
class SolverTarget:
    """A changed function or method to ask for inputs: on the side where its code is uncovered
    (`cover`), or on base against head's file of its module (`diffbehavior`)."""

    operation: Operation
    side: str
    uncovered: int  # changed lines and branches not yet covered in it (`cover`), or run (`diffbehavior`)
    head_file: Path | None = None  # head's file of the operation's module: ask for divergence


@dataclass(frozen=True, eq=False)
class SolverInput:
    """The literal arguments CrossHair found for one path through an operation."""

    op_id: str
    args: tuple[list, ...]
    kwargs: tuple[tuple[str, list], ...]


@dataclass
class SolverStats:
    calls: int = 0  # crosshair processes run
    seconds: float = 0.0  # wall time they took
    inputs: int = 0  # parsed into literal arguments
    skipped: int = 0  # unparseable, or holding a value no literal spells
    new_coverage: int = 0  # changed lines and branches uncovered when asked that the inputs' replays ran


@dataclass
class Solver:
    """Asks CrossHair once per run, for the changed functions exploration left uncovered."""

    by_id: Mapping[str, Operation]
    impact: Impact
    checkouts: Mapping[str, Checkout]  # side -> checkout
    python: str
    lines: ChangedLines | None = None  # the changed lines, when measured: to credit what seeds ran
    cover: bool = True  # ask `cover` for the changed functions with code still uncovered
    diverge: bool = False  # ask `diffbehavior` for those that ran with no difference (needs `lines`)
    stats: SolverStats = field(default_factory=SolverStats)
    notes: list[str] = field(default_factory=list)
    asked: bool = False
    asked_for: set[Target] = field(default_factory=set)  # what was uncovered when asked
    reached: set[Target] = field(default_factory=set)  # of `asked_for`, what the seeds' replays ran
    _seeds: set[str] = field(default_factory=set)  # the seeds made of its inputs, as JSON

    @property
    def technique(self) -> str:
        """The technique its counters are reported under: `solver`, else `diffbehavior`."""
        return "solver" if self.cover else "diffbehavior"

    def counters(self) -> dict[str, float]:
        """Its processes, their wall time, the inputs parsed and skipped, and the changed lines and
        branches its inputs' replays ran (for `stats.techniques`)."""
        stats = self.stats
        return {"calls": stats.calls, "seconds": round(stats.seconds, 3), "inputs": stats.inputs,
                "skipped": stats.skipped, "new_coverage": stats.new_coverage}

    def due(self, share_explored: float) -> bool:
        """Whether to ask now: once per run, when exploration has had SOLVER_AFTER of it (what it
        covers by then with random and mined values needs no solver)."""
        return not self.asked and share_explored >= SOLVER_AFTER

    def solve(self, uncovered: set[Target], seconds: float | None,
              differing: Collection[str] = ()) -> list[SolverInput]:
        """Inputs for the functions with uncovered targets, and for those whose changed lines ran
        but that no difference was seen through (`differing`: the operations a difference was);
        `seconds` (wall) for all calls, shared by those still to come (None: a fixed time per
        function, for a reproducible run)."""
        self.asked, self.asked_for = True, set(uncovered)
        targets = solver_targets(uncovered, self.impact, self.by_id)[:MAX_FUNCTIONS] if self.cover else []
        if self.diverge and self.lines is not None:
            ran = set(self.lines.targets()) - set(uncovered)
            targets += quiet_targets(ran, differing, self.impact, self.by_id,
                                     self.checkouts["head"].root)[:MAX_FUNCTIONS]
        if not targets or (seconds is not None and seconds < SOLVER_CALL_SECONDS[0]):
            return []
        packages = solver_packages()
        if packages is None:
            self.notes.append(MISSING_NOTE)
            return []
        found: list[SolverInput] = []
        tmp = Path(tempfile.mkdtemp(prefix="difforacle-solver-")).resolve()
        try:
            link_packages(tmp, packages)
            started = time.monotonic()
            for done, target in enumerate(targets):
                left = None if seconds is None else seconds - (time.monotonic() - started)
                if left is not None and done and left < SOLVER_CALL_SECONDS[0]:
                    break
                low, high = SOLVER_CALL_SECONDS
                wall = (SOLVER_REPRODUCIBLE_CALL_SECONDS if left is None
                        else min(high, max(low, left / (len(targets) - done))))
                output = self._ask(target, wall, tmp)
                if output is None:
                    break  # CrossHair cannot run under this interpreter: the others would fail alike
                parse = parse_differences if target.head_file is not None else parse_inputs
                inputs, skipped = parse(output, target.operation)
                found += inputs
                self.stats.skipped += skipped
            self.stats.seconds = round(time.monotonic() - started, 2)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.stats.inputs = len(found)
        return found

    def _ask(self, target: SolverTarget, wall: float, solver_path: Path) -> str | None:
        """What one `crosshair cover` (or `diffbehavior`) of `target` printed within `wall` seconds;
        None (with a note) when CrossHair cannot run."""
        op, checkout = target.operation, self.checkouts[target.side]
        scratch = Path(tempfile.mkdtemp(prefix="difforacle-solver-run-")).resolve()  # its cwd and $TMPDIR
        try:
            analysis = round(SOLVER_CPU_SHARE * wall, 2)
            options = {"module": op.module, "target": f"{op.module}.{op.qualname}", "seconds": analysis,
                       "path_seconds": min(SOLVER_PATH_SECONDS, analysis / 2), "memory_mb": MEMORY_MB,
                       "cpu_seconds": math.ceil(wall)}
            if target.head_file is not None:
                options["head_file"] = str(target.head_file)
            env = worker_environment(checkout, 0, str(scratch))
            env[PATH_VARIABLE] = str(solver_path)
            self.stats.calls += 1
            try:
                done = subprocess.run([self.python, str(BOOT), "solver", json.dumps(options)], cwd=scratch,
                                      env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=wall)
            except subprocess.TimeoutExpired as expired:  # CrossHair prints a function's inputs at its end
                self.notes.append(f"CrossHair's call on {op.id} was stopped after {wall:.1f} s: what it "
                                  "found was lost.")
                return _text(expired.stdout)
            except OSError as exc:
                self.notes.append(f"The solver could not start {self.python!r}: {exc.strerror or exc}.")
                return None
            reason = (_text(done.stderr).strip().splitlines() or ["unknown error"])[-1]
            if done.returncode == NO_SOLVER:
                self.notes.append(f"CrossHair does not run under the project's interpreter ({reason}): no "
                                  "solver-found inputs.")
                return None
            if done.returncode == NO_HEAD:
                self.notes.append(f"Head's version of {op.module} does not load beside base's package "
                                  f"({reason}): the solver was not asked where {op.id} diverges.")
                return ""
            return _text(done.stdout)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def track(self, sequences: list[CallSequence]) -> None:
        """Remember the seeds made of the solver's inputs, to credit what their replays cover."""
        self._seeds.update(sequence_key(statements) for statements in sequences)

    def credit(self, replayed: list[KeptSequence]) -> None:
        """Credit the changed lines and branches, uncovered when asked, that a replay round of the
        solver's inputs ran (coverage is measured per round, not per sequence: exploring gives
        the inputs rounds of their own)."""
        if self.lines is None or not replayed:
            return
        keys = [sequence_key(kept.statements) for kept in replayed]
        if not all(key in self._seeds for key in keys):
            return
        ran: set[Target] = set()
        for kept in replayed:
            for side, result in (("base", kept.replayed_base), ("head", kept.replayed_head)):
                if result is not None:
                    ran |= self.lines.run_by(side, result.lines)
        self.reached |= ran & self.asked_for
        self.stats.new_coverage = len(self.reached)


def solver_targets(uncovered: set[Target], impact: Impact,
                   by_id: Mapping[str, Operation]) -> list[SolverTarget]:
    """The changed functions and methods (catalog operations, so a seed can call them) with
    uncovered changed lines or branches, the most uncovered first, each on the side that has more."""
    counts: Counter[tuple[str, str]] = Counter()
    for target in uncovered:
        op = _solved(impact.unit_at(target[1], target[2], target[3]), by_id)
        if op is not None:
            counts[(op.id, target[1])] += 1
    best: dict[str, tuple[int, str]] = {}
    for (op_id, side), count in counts.items():
        best[op_id] = max(best.get(op_id, (0, "")), (count, side))  # a tie goes to head
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))
    return [SolverTarget(by_id[op_id], side, count) for op_id, (count, side) in ranked]


def quiet_targets(ran: set[Target], differing: Collection[str], impact: Impact,
                  by_id: Mapping[str, Operation], head: Path) -> list[SolverTarget]:
    """The changed functions and methods (catalog operations) whose changed lines or branches
    `ran` and that no difference was seen through, the most run first, then the operations of the
    same module that call a changed unit that ran (a private helper is asked about through its
    public callers: head's copy of the module calls head's helper), each with head's file of its
    module under `head`, its checkout (a module head adds or removes has no other version)."""
    head_files = {change.module: change.head_path for change in impact.changes.files
                  if change.module and change.head_path and change.base_path}
    itself: Counter[str] = Counter()
    callers: Counter[str] = Counter()
    for target in ran:
        unit = impact.unit_at(target[1], target[2], target[3])
        if unit is None or unit[0] not in head_files:
            continue
        if (op := _solved(unit, by_id)) is not None:
            itself[op.id] += 1
            continue
        for caller in impact.reached_by.get(unit, set()) - {unit}:
            if (op := _solved(caller, by_id)) is not None:
                callers[op.id] += 1
    ranked = [*sorted(itself, key=lambda op_id: (-itself[op_id], op_id)),
              *sorted(set(callers) - set(itself), key=lambda op_id: (-callers[op_id], op_id))]
    counts = callers + itself
    return [SolverTarget(by_id[op_id], "base", counts[op_id], head / head_files[by_id[op_id].module])
            for op_id in ranked if op_id not in differing]


def _solved(unit: tuple[str, str] | None, by_id: Mapping[str, Operation]) -> Operation | None:
    """The catalog operation of a (module, qualname) unit, if a seed can call it with literals."""
    op = by_id.get(f"{unit[0]}:{unit[1]}") if unit is not None else None
    return op if op is not None and op.kind in SOLVED_KINDS else None


def parse_differences(text: str, op: Operation) -> tuple[list[SolverInput], int]:
    """The distinct inputs of `crosshair diffbehavior` output for `op` (a `Given: (name=repr, ...),`
    line per difference, then a line per version saying what it did), and how many were skipped."""
    lines = [line.rstrip() for line in text.splitlines()]
    given = [_keywords(line[len(GIVEN):-2]) for line in lines
             if line.startswith(GIVEN) and line.endswith("),")]
    return _distinct([_placed(values, op) if values is not None else None for values in given])


def _keywords(text: str) -> dict[str, ast.expr] | None:
    """`name=repr, ...` as expressions by name; None when it is no such list. A repr that is no
    expression (`<pkg.Meter object at 0x7f00>`, a receiver) stands as a name no literal spells."""
    try:
        node = ast.parse(f"f({text})", mode="eval").body
    except (SyntaxError, ValueError):
        node = None
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            return None
        return {k.arg: k.value for k in node.keywords if k.arg is not None}
    starts = list(ARGUMENT_NAME.finditer(text))
    if not starts or starts[0].start() != 0:
        return None
    values: dict[str, ast.expr] = {}
    for here, after in zip(starts, [*starts[1:], None], strict=True):
        value = text[here.end():after.start() if after is not None else len(text)]
        try:
            values[here.group(1)] = ast.parse(value, mode="eval").body
        except (SyntaxError, ValueError):
            values[here.group(1)] = ast.Name(UNSPELLED, ast.Load())
    return values


def parse_inputs(text: str, op: Operation) -> tuple[list[SolverInput], int]:
    """The distinct inputs of `crosshair cover --example_output_format=arg_dictionary` output for
    `op` (one `{"name": repr, ...}` per line), and how many lines were skipped."""
    return _distinct([_arguments(line, op) for line in text.splitlines() if line.strip()])


def _distinct(parsed: list[SolverInput | None]) -> tuple[list[SolverInput], int]:
    """The distinct inputs among `parsed`, in order, and how many could not be parsed (None)."""
    found: dict[str, SolverInput] = {}
    for one in parsed:
        if one is not None:
            found.setdefault(json.dumps([one.args, one.kwargs]), one)
    return list(found.values()), parsed.count(None)


def _arguments(line: str, op: Operation) -> SolverInput | None:
    """One line's arguments as literals, placed as `op` takes them; None when any cannot be."""
    try:
        node = ast.parse(line.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                 for k in node.keys):
        return None
    names = [k.value for k in node.keys]  # type: ignore[union-attr]
    return _placed(dict(zip(names, node.values, strict=True)), op)


def _placed(values: dict[str, ast.expr], op: Operation) -> SolverInput | None:
    """Arguments by name as literals, placed as `op` takes them; None when any cannot be."""
    names = list(values)
    params = {param.name: param for param in op.params}
    if op.kind in (OperationKind.METHOD, OperationKind.STATIC) and names and names[0] not in params:
        del values[names[0]]  # the receiver (or a class method's class): built as for any call
    if set(values) - set(params):
        return None
    args: list[list] = []
    kwargs: list[tuple[str, list]] = []
    by_keyword = False  # once a positional parameter is missing, the rest go by name
    for param in op.params:
        if param.name not in values:
            by_keyword = by_keyword or param.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
            continue
        value = _literal(values[param.name])
        if value is None:
            return None
        if param.kind == "VAR_POSITIONAL":
            if value[0] != "tuple" or by_keyword:
                return None
            args += value[1]
        elif param.kind == "VAR_KEYWORD":
            if value[0] != "dict" or any(k[0] != "str" for k, _ in value[1]):
                return None
            kwargs += [(k[1], v) for k, v in value[1]]
        elif param.kind == "KEYWORD_ONLY" or (by_keyword and param.kind == "POSITIONAL_OR_KEYWORD"):
            kwargs.append((param.name, value))
        elif by_keyword:
            return None  # a positional-only parameter after a missing one
        else:
            args.append(value)
    return SolverInput(op.id, tuple(args), tuple(kwargs))


def _literal(node: ast.expr) -> list | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return encode(value)


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def solver_packages() -> list[str] | None:
    """The top-level packages and modules of CrossHair and its dependencies in difforacle's
    environment (what the project's interpreter is given), or None when CrossHair is not installed."""
    try:
        importlib.metadata.distribution(SOLVER_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    names: list[str] = []
    seen: set[str] = set()
    waiting = [SOLVER_DISTRIBUTION]
    while waiting:
        name = waiting.pop()
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a dependency for other Pythons or platforms
        for requirement in distribution.requires or ():
            requirement_name, _, marker = requirement.partition(";")
            dependency = requirement_name.split("(")[0].strip()
            for stop in "<>=!~[ ":
                dependency = dependency.split(stop)[0]
            key = dependency.lower().replace("_", "-")
            if "extra" not in marker and dependency and key not in seen:
                seen.add(key)
                waiting.append(dependency)
        names += [top for top in _top_level(distribution) if top not in names]
    return names


def _top_level(distribution: importlib.metadata.Distribution) -> list[str]:
    """A distribution's importable top-level names, read from its files (top_level.txt may list
    folders of its source tree that were never installed)."""
    files = {str(path).replace("\\", "/") for path in distribution.files or ()}
    found = []
    for path in sorted(files):
        first, _, rest = path.partition("/")
        if first.startswith("..") or first == "__pycache__" or first.endswith(NOT_INSTALLED_FOLDERS):
            continue
        name = first.split(".")[0] if not rest else first
        module = not rest and first.endswith((".py", ".so", ".pyd"))
        package = bool(rest) and f"{first}/__init__.py" in files
        if (module or package) and name not in found:
            found.append(name)
    return found
