"""The pipeline: (repo, base, head, budget) -> Report. No network, no GitHub.

Phases, each bounded by the time budget:
  explore  feedback-directed generation on base (worker A, hash seed 0)
  replay   the kept sequences that entered changed code, on base again (worker B, hash
           seed 1, other random seed: what varies is masked) and on head
  confirm  one representative per group of mismatches, each in a fresh forked process
           of fresh workers on both commits; only what reproduces is reported
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from .aim import Aim, defect_scores, plan_aim
from .catalog import Catalog, changed_at_import, focus_operations, read_sources
from .changed_lines import ChangedLines
from .changes import compute_changes
from .compare import Mismatch, first_mismatch, kind_of, leaf_text, reproduces, unstable_keys
from .components import ALL, Components
from .differential import DifferenceCheck, Shown, Signature, case_from_key, key_suffix
from .executor import Worker, WorkerOptions
from .explore import Explorer
from .guidance import uncovered_ratios
from .minimize import Case, minimize
from .model import ChangeSet, Checkout, Difference, Report, SetupError, Statement
from .render import can_pin, render_test, test_name
from .reproduce import SuggestedTests, check_reproduction
from .risk import WINDOW, RiskTable
from .values import Constants, ValueGenerator, mine_constants, package_modules
from .worker.protocol import ObservationKey, SequenceResult, Status
from .workspace import checkouts, open_repo, resolve

# Sequences worth replaying. Not "timeout": a hang on base costs a whole timeout again on
# each replay, and a head that hangs where base did not shows up on sequences that ended.
KEPT_STATUSES = (Status.OK, Status.EXCEPTION, Status.CRASH)
REPRESENTATIVES = 3
UNPINNABLE = "# base's behaviour here cannot be asserted by a test (a hang, a crash, or no stable value)\n"
REPRODUCE_SECONDS = 2.0  # time kept for running the suggested tests with pytest on both commits
REPRODUCIBLE_MINIMIZE_CHECKS = 120  # candidates per finding when runs are bound by sequences, not time
CONFIRM_OVERRUN = 5.0  # seconds past the budget that confirming may take while nothing is confirmed yet
CONFIRM_CALL_TIMEOUT = 2.0  # seconds: at least this long before a call counts as hanging in confirmation
EXPLORE_RANDOM_SEED, REPLAY_RANDOM_SEED = 0, 1
TEST_DIRS = ("tests", "test", "testing")


@dataclass
class Progress:
    phase: str
    sequences: int = 0
    differences: int = 0
    elapsed: float = 0.0


@dataclass
class Options:
    budget: float = 60.0
    seed: int = 0
    python: str = field(default_factory=lambda: sys.executable)
    batch_size: int = 50
    call_timeout: float | None = None  # seconds per call; default scales with the budget
    max_sequences: int | None = None  # stop exploring after this many: reproducible, bound by counts
    minimize_share: float = 0.15  # of the budget, for shrinking the tests of confirmed differences
    show_unreproduced: bool = False  # also report differences whose pytest test did not reproduce
    allocation: str = "defect"  # how focused generation is shared over units: "defect" or "uniform"
    history_window: int = WINDOW  # commits before base read for the defect scores
    pr_title: str = ""  # a title saying "fix" makes the PR's commits count as fixes
    components: Components = ALL  # generation techniques on (switch one off to measure it)
    progress: Callable[[Progress], None] | None = None


def analyze(repo_path: str | Path, base_ref: str, head_ref: str, options: Options) -> Report:
    """Find the behavioural differences head introduces over base, within `options.budget` seconds."""
    started = time.monotonic()
    repo = open_repo(repo_path)
    base_sha, head_sha = resolve(repo, base_ref), resolve(repo, head_ref)
    report = Report(base_sha, head_sha)
    if base_sha == head_sha:
        report.notes.append(f"{base_ref} and {head_ref} are the same commit: nothing to compare.")
        return report
    with checkouts(repo, base_sha, head_sha) as (base, head):
        changes = compute_changes(repo, base_sha, head_sha, base, head)
        if not changes.modules:
            report.notes.append("No change to importable Python code between the two commits.")
            return report
        table = None
        if options.allocation == "defect":  # the history's time counts against the budget
            table, problem = defect_scores(repo, base_sha, head_sha, head_ref, window=options.history_window,
                                           title=options.pr_title)
            report.notes.extend([problem] if problem else [])
        session = _Session(changes, base, head, options, started, report, table)
        try:
            session.run()
        finally:
            session.close()
    for number, difference in enumerate(report.differences, 1):
        difference.id = f"D{number}"
    report.stats.seconds = time.monotonic() - started
    if report.stats.seconds > 0:
        report.stats.sequences_per_second = report.stats.sequences / report.stats.seconds
    return report


class _Replayer:
    """Replays kept sequences on base (another process and hash seed) and on head, in the
    background, so that replay overlaps generation and nothing waits for the end."""

    def __init__(self, base: Worker, head: Worker, lines: ChangedLines | None) -> None:
        """`lines` None: coverage cannot be measured, and is not asked for."""
        self.base, self.head, self.lines = base, head, lines
        self._pool = ThreadPoolExecutor(2)
        self._pending: tuple[list[_Kept], Future, Future, float] | None = None
        self.last_seconds = 0.0  # how long the latest round took: the time the final one needs
        self.replayed = 0

    def start(self, kept: list[_Kept]) -> None:
        if not kept:
            return
        batch = [k.statements for k in kept]
        # coverage is measured only while something is still uncovered (tracing is slow)
        wanted = {side: self.lines is not None and self.lines.pending(side) for side in ("base", "head")}
        base = self._pool.submit(self.base.run, batch, REPLAY_RANDOM_SEED, lines=wanted["base"])
        head = self._pool.submit(self.head.run, batch, REPLAY_RANDOM_SEED, lines=wanted["head"])
        self._pending = (kept, base, head, time.monotonic())

    def finish(self) -> list[_Kept]:
        """Wait for the round in flight; return its sequences, with their replay results."""
        if self._pending is None:
            return []
        kept, base, head, started = self._pending
        self._pending = None
        base_results, head_results = base.result(), head.result()
        self.last_seconds = time.monotonic() - started
        if self.lines is not None:
            self.lines.add("base", [result.lines for result in base_results])
            self.lines.add("head", [result.lines for result in head_results])
        for item, b, h in zip(kept, base_results, head_results, strict=True):
            item.replayed_base, item.replayed_head = b, h
        self.replayed += len(kept)
        return kept

    def __enter__(self) -> _Replayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Finding:
    """A confirmed difference being minimized; `group` is (target, kind, observation, path, hunk)."""

    case: Case
    shown: Shown
    group: tuple
    location: _Location
    count: int = 1
    minimized: bool = True


@dataclass(frozen=True)
class _Location:
    """Where a difference happens: a line of `path` on `side` ("head" or "base"), and its diff hunk."""

    path: str | None = None
    line: int | None = None
    side: str | None = None
    hunk: int | None = None


@dataclass
class _Kept:
    statements: list[dict]
    explored: SequenceResult
    replayed_base: SequenceResult | None = None
    replayed_head: SequenceResult | None = None


class _Session:
    def __init__(self, changes: ChangeSet, base: Checkout, head: Checkout, options: Options,
                 started: float, report: Report, table: RiskTable | None = None) -> None:
        self.changes, self.base, self.head, self.table = changes, base, head, table
        self.options, self.started, self.report = options, started, report
        call_timeout = options.call_timeout or _call_timeout(options.budget)
        self.worker_options = WorkerOptions(options.python, call_timeout=call_timeout,
                                            sequence_timeout=max(2.0, 5 * call_timeout))
        # Confirmation is patient: a call that merely ran slow on a loaded machine must not
        # become a "hang" difference, so the fresh workers wait several times longer.
        confirm_timeout = max(CONFIRM_CALL_TIMEOUT, 4 * call_timeout)
        self.confirm_options = replace(self.worker_options, call_timeout=confirm_timeout,
                                       sequence_timeout=max(4.0, 5 * confirm_timeout))
        self.workers: list[Worker] = []
        self.groups: dict[tuple, list[tuple[_Kept, Mismatch]]] = {}  # (kind, operation, key shape)
        self.found: list[Difference] = []  # confirmed, before the reproduction check

    # ------------------------------------------------------------ helpers

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def progress(self, phase: str) -> None:
        """Differences so far: confirmed ones once confirming, candidate groups before."""
        if self.options.progress:
            found = len(self.found) + (len(self.groups) if phase in ("importing", "exploring") else 0)
            self.options.progress(Progress(phase, self.report.stats.sequences, found, self.elapsed()))

    def start_worker(self, checkout: Checkout, side: str, hash_seed: int,
                     options: WorkerOptions | None = None) -> Worker:
        worker = Worker(checkout, self.changes, side, hash_seed, options or self.worker_options)
        self.workers.append(worker)
        return worker

    def start_workers(self, *specs: tuple) -> list[Worker]:
        """Start workers in parallel: each spends its start-up importing the project."""
        with ThreadPoolExecutor(len(specs)) as pool:
            futures = [pool.submit(self.start_worker, *spec) for spec in specs]
            return [future.result() for future in futures]

    def close(self) -> None:
        for worker in self.workers:
            worker.close()

    # ------------------------------------------------------------ phases

    def run(self) -> None:
        self.find()
        self.reproduce()

    def find(self) -> None:
        self.progress("importing")
        explorer_worker, head_worker, replay_worker = self.start_workers(
            (self.base, "base", 0), (self.head, "head", 1), (self.base, "base", 1))
        catalog = Catalog.from_json(explorer_worker.catalog)
        self._check_imports(catalog, head_worker)
        self.sources = read_sources(self.base.root, self.changes)
        catalog.focus = focus_operations(catalog, self.changes, self.sources)
        self.operations = {op.id: op for op in catalog.operations}
        importable_on_head = set(self.changes.modules) - set(head_worker.catalog["import_errors"])
        if not importable_on_head - set(catalog.import_errors):
            self.report.notes.append("No changed module imports on both commits: nothing to replay.")
            return
        self.lines = ChangedLines(self.changes, self.base, self.head)
        self.lines.add("base", [explorer_worker.at_import])
        self.lines.add("head", [head_worker.at_import])
        measured = all(w.coverage_version for w in (replay_worker, head_worker))
        if not measured:
            error = replay_worker.coverage_error or head_worker.coverage_error
            self.report.notes.append(f"Changed-line coverage was not measured: {error}.")
        aim = plan_aim(catalog, self.changes, self.sources, self.base, self.head, self.lines, self.table,
                       self.options.allocation if self.table is not None else "uniform")
        self.report.allocation = aim.allocation
        self.report.stats.history_seconds = self.table.seconds if self.table is not None else 0.0
        with _Replayer(replay_worker, head_worker, self.lines if measured else None) as replayer:
            self.explore(explorer_worker, catalog, replayer, aim)
        self.confirm()
        self.report.coverage = self.lines.report()
        self.report.coverage.measured_by = (f"coverage.py {head_worker.coverage_version}" if measured
                                            else "not measured")

    def _check_imports(self, catalog: Catalog, head_worker: Worker) -> None:
        errors = catalog.import_errors
        if errors and len(errors) == len(self.changes.modules):
            module, error = next(iter(errors.items()))
            raise SetupError(f"{self.options.python} cannot import {module} on base ({error}); "
                             "pass --python with an interpreter that has the project's dependencies")
        for module, error in errors.items():
            self.report.notes.append(f"{module} does not import on base ({error}); it was not tested.")
        for module, error in head_worker.catalog["import_errors"].items():
            if module not in errors:
                self.found.append(_import_difference(module, error, self.changes))

    def explore(self, worker: Worker, catalog: Catalog, replayer: _Replayer, aim: Aim) -> None:
        """Generate on base; replay each batch's kept sequences while the next batch is generated."""
        self.progress("exploring")
        rng = random.Random(self.options.seed)
        components = self.options.components
        constants = mine_constants(*self._constant_sources()) if "constants" in components else Constants()
        explorer = Explorer(catalog, ValueGenerator(random.Random(rng.random()), constants), rng, components,
                            timed=self.options.max_sequences is None)
        explorer.aim(aim.quota, aim.unit_operations,
                     lambda: uncovered_ratios(aim.operation_targets, self.lines.uncovered()))
        replay_all = (bool(worker.unwrapped) or any(u.kind in ("module", "class") for u in self.changes.units)
                      or bool(changed_at_import(self.changes, self.sources)))
        stats = self.report.stats
        explore_started = time.monotonic()
        while not self._explore_done(replayer):
            # Small batches first: the explorer learns which operations hang or fail before
            # it commits a full batch to them.
            size = min(self.options.batch_size, max(10, stats.sequences),
                       (self.options.max_sequences or sys.maxsize) - stats.sequences)
            batch = list(explorer.candidates(size))
            if not batch:
                break
            results = worker.run(batch, EXPLORE_RANDOM_SEED, fields="novelty" in components)
            kept = []
            for statements, result in zip(batch, results, strict=True):
                explorer.feedback(statements, result)
                stats.crashed += result.status in (Status.CRASH, Status.TIMEOUT)
                if result.status in KEPT_STATUSES and (result.hit or replay_all):
                    kept.append(_Kept(statements, result))
            stats.kept += len(kept)
            self.compare(replayer.finish())
            replayer.start(kept)
            stats.sequences += len(batch)
            stats.explore_seconds = round(time.monotonic() - explore_started, 2)
            self.progress("exploring")
        self.compare(replayer.finish())
        stats.replayed = replayer.replayed

    def _explore_done(self, replayer: _Replayer) -> bool:
        limit = self.options.max_sequences
        if limit is not None:
            return self.report.stats.sequences >= limit
        reserve = max(1.5, 0.1 * self.options.budget)  # confirmation and rendering
        if self.groups:  # something to minimize and reproduce, but a short budget keeps exploring
            budget = self.options.budget
            reserve += min(self.options.minimize_share * budget + REPRODUCE_SECONDS, 0.25 * budget)
        return self.elapsed() + replayer.last_seconds + reserve >= self.options.budget

    def _constant_sources(self) -> tuple[list[Path], dict[Path, set[int]], list[Path], list[Path]]:
        """The changed modules, the changed lines of both sides (head's new literals are the
        ones that reach head's new branches), the repository's tests, and the modules of the
        changed modules' packages: the documents of the TF-IDF."""
        files, changed, named = [], {}, []
        for change in self.changes.files:
            if not change.module:
                continue
            if change.base_path:
                path = self.base.root / change.base_path
                files.append(path)
                changed[path] = set(change.base_lines)
                named.append((path, change.module))
            if change.head_path and change.head_lines:
                changed[self.head.root / change.head_path] = set(change.head_lines)  # its hunks only
        tests = [p for d in TEST_DIRS for p in sorted((self.base.root / d).rglob("test*.py"))][:50]
        return files, changed, tests, package_modules(named)

    def confirm(self) -> None:
        """Confirm one representative per group in fresh processes, minimize it, group the
        results into findings, render their tests and check that pytest reproduces them."""
        groups = self.groups
        self.report.stats.candidates = sum(len(g) for g in groups.values())
        if not groups:
            return
        self.progress("confirming")
        base_worker, head_worker = self.start_workers((self.base, "base", 2, self.confirm_options),
                                                      (self.head, "head", 2, self.confirm_options))
        check = DifferenceCheck(base_worker, head_worker)
        budget = self.options.budget
        minimize_until = min(time.monotonic() + self.options.minimize_share * budget,
                             self.started + budget - REPRODUCE_SECONDS)
        if self.options.max_sequences is not None:
            minimize_until = math.inf  # reproducible runs: bounded by a number of checks instead
        findings: dict[tuple, _Finding] = {}
        try:
            for remaining, members in zip(range(len(groups), 0, -1), groups.values(), strict=True):
                if self._out_of_time(bool(findings)):
                    self.report.notes.append(
                        f"The budget ran out before {remaining} of {len(groups)} groups of candidate "
                        "differences were confirmed; a larger --budget checks them.")
                    break
                members.sort(key=lambda m: (int(m[1].key.split("/", 1)[0]), repr(m[0].statements)))
                for kept, mismatch in members[:REPRESENTATIVES]:
                    found = self._confirm_one(kept, mismatch, check)
                    if found is None:
                        continue
                    if found.group in findings:  # same target, kind, observation and hunk
                        findings[found.group].count += len(members)
                    else:
                        share = (minimize_until - time.monotonic()) / remaining
                        self._minimize(found, check, time.monotonic() + share)
                        found.count = len(members)
                        findings[found.group] = found
                    self.progress("confirming")
                    break
        finally:
            check.close()
        self.found.extend(self._difference(f) for f in findings.values())

    def _out_of_time(self, found_some: bool) -> bool:
        """Confirmation goes on while the budget lasts (keeping time to reproduce), and past it
        only until a first finding, and never more than CONFIRM_OVERRUN seconds past it."""
        elapsed, budget = self.elapsed(), self.options.budget
        if self.options.max_sequences is not None:
            return False  # reproducible runs confirm everything, however long it takes
        return elapsed >= budget + CONFIRM_OVERRUN or (found_some and elapsed >= budget - REPRODUCE_SECONDS)

    def _confirm_one(self, kept: _Kept, mismatch: Mismatch, check: DifferenceCheck) -> _Finding | None:
        """The mismatch again, alone in fresh processes on both commits; None if it does not reproduce."""
        case = case_from_key(kept.statements, mismatch.key)
        shown = check.observe(case, key_suffix(mismatch.key), lines=True)
        if shown is None or not (reproduces(shown.mismatch.base, mismatch.base)
                                 and reproduces(shown.mismatch.head, mismatch.head)):
            return None  # does not reproduce in a fresh process: nondeterministic or merely slow
        location = self._location(case.target, shown)
        group = (shown.target, kind_of(mismatch), key_suffix(mismatch.key), location.path, location.hunk)
        return _Finding(case, shown, group, location)

    def _minimize(self, finding: _Finding, check: DifferenceCheck, deadline: float) -> None:
        signature = Signature.of(finding.shown)
        pins = [pin for pin in ("base", "head") if can_pin(finding.shown.mismatch, pin)]

        def same(cases: Sequence[Case]) -> list[Shown | None]:
            """The same difference, and still assertable where the original was."""
            shown = check.same(cases, signature)
            return [s if s is not None and all(can_pin(s.mismatch, p) for p in pins) else None for s in shown]

        max_checks = REPRODUCIBLE_MINIMIZE_CHECKS if self.options.max_sequences is not None else None
        result = minimize(finding.case, finding.shown, same, deadline=deadline, operations=self.operations,
                          max_checks=max_checks)
        finding.minimized = result.complete
        if result.case != finding.case:
            shown = check.observe(result.case, signature.suffix, lines=True) or result.outcome
            finding.case, finding.shown = result.case, shown
            finding.location = self._location(result.case.target, shown)

    def reproduce(self) -> None:
        """Run both flavours of each difference's test with pytest on both commits; report what reproduces."""
        differences = self.found
        if not differences:
            return
        self.progress("reproducing")
        suggested = {f"d{n}": SuggestedTests(f"d{n}", d.test, d.pin_head)
                     for n, d in enumerate(differences, 1) if d.test != UNPINNABLE}
        results = check_reproduction(list(suggested.values()), self.base, self.head, self.options.python)
        hidden = 0
        for number, difference in enumerate(differences, 1):
            result = results.get(f"d{number}")
            difference.reproduced = result is not None and result.reproduced
            if difference.reproduced or self.options.show_unreproduced:
                self.report.differences.append(difference)
            else:
                hidden += 1
        if hidden:
            self.report.notes.append(
                f"{hidden} confirmed difference(s) hidden: their suggested test did not reproduce them "
                "under pytest in a fresh process (--show-unreproduced reports them).")
        cut = [d for d in differences if not d.minimized]
        reproducible = self.options.max_sequences is not None
        bound = f"bound of {REPRODUCIBLE_MINIMIZE_CHECKS} checks" if reproducible else "time bound"
        remedy = "a run bound by time shrinks further" if reproducible else "raise --minimize-share"
        if cut:
            self.report.notes.append(
                f"Minimization stopped at its {bound} for {len(cut)} test(s) "
                f"({', '.join(sorted({d.target for d in cut}))}); they may be longer than needed "
                f"({remedy}).")

    def _difference(self, finding: _Finding) -> Difference:
        mismatch, target = finding.shown.mismatch, finding.shown.target
        kind = kind_of(mismatch)
        statements = list(finding.case.statements)
        tests = {pin: render_test(statements, self.operations, mismatch, test_name(target, kind, pin),
                                  pin=pin) if can_pin(mismatch, pin) else None for pin in ("base", "head")}
        return Difference(
            id="", kind=kind, target=target, path=finding.location.path, line=finding.location.line,
            side=finding.location.side,
            base=leaf_text(mismatch.base, mismatch.head), head=leaf_text(mismatch.head, mismatch.base),
            test=tests["base"] or UNPINNABLE, key=mismatch.key,
            statements=[Statement.from_json(s) for s in statements], count=finding.count,
            pin_head=tests["head"], minimized=finding.minimized)

    def compare(self, replayed: list[_Kept]) -> None:
        """Mask what varied between the two base runs, then group what differs on head.

        Observations are dropped afterwards: only the mismatching sequences keep theirs.
        """
        for kept in replayed:
            assert kept.replayed_base is not None and kept.replayed_head is not None
            masked = unstable_keys(kept.explored.observations, kept.replayed_base.observations)
            self.report.stats.masked_keys += len(masked)
            mismatch = first_mismatch(kept.replayed_base, kept.replayed_head, masked)
            if mismatch is None:
                for result in (kept.explored, kept.replayed_base, kept.replayed_head):
                    result.forget_observations()
                continue
            key = ObservationKey.parse(mismatch.key)
            # the key without statement numbers: same observation, other sequence
            group = (kind_of(mismatch), kept.statements[key.statement]["op"], key.observation)
            self.groups.setdefault(group, []).append((kept, mismatch))

    def _location(self, statement: int, shown: Shown) -> _Location:
        """The first changed line the differing statement executed (head first), else the
        target's unit; with the index of the diff hunk that line belongs to."""
        for side, result, checkout in (("head", shown.head, self.head), ("base", shown.base, self.base)):
            lines = sorted((file, line) for s, file, line in result.lines.covered if s == statement)
            if lines:
                file, line = lines[0]
                path = _relative(file, checkout)
                return _Location(path, line, side, self._hunk(side, path, line))
        module, _, qualname = shown.target.partition(":")
        for unit in self.changes.units:
            if unit.module == module and unit.qualname == qualname:
                return _Location(unit.path, unit.start, "base" if unit.status == "removed" else "head")
        op = self.operations.get(shown.target)
        if op and op.file:
            return _Location(_relative(op.file, self.base), op.line, "base")
        return _Location()

    def _hunk(self, side: str, path: str, line: int) -> int | None:
        for change in self.changes.files:
            if (change.head_path if side == "head" else change.base_path) == path:
                return change.hunk_at(side, line)
        return None


def _call_timeout(budget: float) -> float:
    """A call that runs longer is a hang: 1 s (Randoop uses 5 s) but no more than a sixtieth of
    the budget, down to 0.25 s, so that a few hanging operations cannot eat a short budget."""
    return min(1.0, max(0.25, budget / 60))


def _relative(file: str, checkout: Checkout) -> str:
    try:
        return Path(file).resolve().relative_to(checkout.root.resolve()).as_posix()
    except ValueError:
        return file


def _slug(target: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in target.replace(":", "_")).strip("_").lower()[:60]


def _import_difference(module: str, error: str, changes: ChangeSet) -> Difference:
    path = next((f.head_path for f in changes.files if f.module == module), None)
    test = f"def test_import_{_slug(module)}():\n    import {module}  # head: {error}\n"
    return Difference(id="", kind="exception", target=f"{module}:<module>", path=path, line=1, side="head",
                      base="imports", head=f"raises {error}", test=test, key="import")

