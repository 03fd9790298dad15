"""The pipeline: (repo, base, head, budget) -> Report. No network, no GitHub.

`analyze` runs the stages in order, each a call with a typed result; the package that holds each
stage is on the right:

    changes    base and head checked out; the diff merge-base..head mapped onto     changes
               modules and units (compiled extensions declared, built when configured)
    impact     which code reaches the changed units (static, parsed once)           planning
    plan       units in two tiers, their shares by defect score from the history    planning
    catalog    what the changed modules offer, listed by a base worker              runtime
    operations the plan and impact over the catalog: focus, quotas, targets        planning
    carve      seed sequences from the calls of the project's own tests (alongside  generation.seeds
               exploring in a run bound by time, before it in a reproducible one)
    explore    feedback-directed generation on base, replayed on base and head in   generation
               the background and compared (what varies on base masked)             (oracle)
    reach      per changed unit: its changed lines run, and why not the rest        generation
    confirm    one representative per group, in fresh processes                     findings
    minimize   each finding's sequence shrunk while it shows the same difference    findings
    render     two pytest tests per finding                                         findings
    triage     each difference's verdict: unexplained, or why it is there (evidence)  triage
    reproduce  the tests run by pytest on both commits                              findings
    merge      one difference per changed line and values, whatever entry point    findings
    report     the Report, with coverage, allocation and notes                      report

One `Deadline` (planning) decides when each phase stops: by time, or by a count of sequences in
a reproducible run. A failure of ours once exploring has begun raises `InternalError` with the
partial report: what was found by then, and where the run stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from .changes.changed_lines import ChangedLines
from .changes.checkout import checkouts, open_repo, resolve
from .changes.extensions import Extensions, build_extensions, declared_extensions, extension_note
from .changes.importers import importers
from .changes.model import ChangeSet, Checkout
from .changes.tables import changed_entries
from .changes.units import compute_changes
from .changes.version_files import nearest_version, write_version_files
from .errors import InternalError, SetupError
from .findings.confirm import Confirmation, Locator, confirm
from .findings.difference_check import DifferenceCheck
from .findings.merge import merge_repeats
from .findings.minimize import minimize_findings
from .findings.render import import_difference, render_findings
from .findings.reproduce import reproduce
from .generation.explore import Exploration, ExploreSettings, explore
from .generation.reach import assess_reach
from .generation.replay import Replayer
from .generation.search.divergence import changed_conditions
from .generation.search.influence import influence_map
from .generation.search.solver import Solver
from .generation.seeds.carving import Carving, carve
from .generation.seeds.changed_tests import names_used_by
from .generation.techniques import Switches
from .generation.values.constants import Constants, mine_change
from .options import READING_HISTORY, Options, Progress
from .planning.deadline import (
    BUILD_TIMEOUT,
    REPRODUCE_RUN_TIMEOUT,
    WORKER_QUIT_TIMEOUT,
    WORKER_REQUEST_TIMEOUT,
    WORKER_START_TIMEOUT,
    Deadline,
    call_timeout,
    confirm_timeouts,
    sequence_timeout,
)
from .planning.early_stop import EarlyStop
from .planning.impact import Impact, analyze_impact
from .planning.operation_plan import plan_operations
from .planning.plan import HistoryOptions, Plan, plan_change
from .report.model import NOT_MEASURED, Difference, Report, RunError
from .runtime.catalog import Catalog
from .runtime.sequence import CallSequence
from .runtime.workers import Additions, Worker, WorkerOptions, WorkerPool, usable_cores
from .triage.pull_request import PullRequestText, read_pull_request
from .triage.verdicts import triage
from .worker.execute import MODULE_VALUE_ITEMS
from .worker.protocol import WORKER_TECHNIQUES, OperationKind

__all__ = ["Options", "Progress", "analyze"]


def analyze(repo_path: str | Path, base_ref: str, head_ref: str, options: Options) -> Report:
    """Find the behavioural differences head introduces over base, within `options.budget` seconds.

    Raises SetupError for what the user must fix; InternalError, holding the partial report, for
    an error of ours once exploring has begun (before that there is nothing worth reporting).
    """
    deadline = Deadline(options.budget, options.max_sequences, options.minimize_share)
    repo = open_repo(repo_path)
    base_sha, head_sha = resolve(repo, base_ref), resolve(repo, head_ref)
    report = Report(base_sha, head_sha)
    if base_sha == head_sha:
        report.notes.append(f"{base_ref} and {head_ref} are the same commit: nothing to compare.")
        return report
    with checkouts(repo, base_sha, head_sha) as (base, head):
        base, head = (replace(side, pass_env=options.pass_env) for side in (base, head))
        report.notes.extend(write_version_files((base, head), nearest_version(repo, base_sha)))
        everything = compute_changes(repo, base_sha, head_sha, base, head)
        changes = options.scope.restrict(everything)
        if left_out := len(everything.files) - len(changes.files):
            report.notes.append(f"{left_out} changed Python file(s) outside the include/exclude settings "
                                "were not tested.")
        if not changes.modules:
            report.notes.append("No change to importable Python code between the two commits.")
            return report
        changes = replace(changes, importers=importers(base, changes))
        extensions = _prepare_extensions(base, head, options, deadline, report)
        impact = analyze_impact(changes, base, head)
        progress = _Progress(options, deadline)
        history = HistoryOptions(window=options.history_window, title=options.pr_title,
                                 progress=progress.history)
        plan = plan_change(repo, base_sha, head_sha, head_ref, changes, impact, options.allocation, history,
                           options.scope)
        report.notes.extend(plan.notes)
        words = read_pull_request(repo, changes, head_sha, base, head, options.pr_title, options.pr_body)
        run = _Run(options, deadline, report, progress, base, head, changes, impact, plan, extensions, words)
        try:
            _test_change(run)
            reproduced = reproduce(run.found, base, head, options.python,
                                   run_timeout=deadline.bounded(REPRODUCE_RUN_TIMEOUT),
                                   show_unreproduced=options.show_unreproduced)
        except SetupError:
            raise
        except Exception as exc:
            if progress.phase in ("", "importing"):
                raise
            raise _stopped(run, exc) from exc
        report.differences, merged = merge_repeats(reproduced.differences)
        report.notes.extend([*reproduced.notes, *run.minimization_notes, *merged])
    _finish(report, deadline)
    return report


@dataclass
class _Run:
    """One run as its stages hand it on: what it was asked, its two checkouts, what the stages
    before the workers made of the change, and what the stages that run the project's code found
    so far (as soon as it is known: a partial report needs it if a later stage fails)."""

    options: Options
    deadline: Deadline
    report: Report
    progress: _Progress  # its phase is where the run is; its exploration, how far it got
    base: Checkout
    head: Checkout
    changes: ChangeSet
    impact: Impact
    plan: Plan
    extensions: Extensions | None
    words: PullRequestText  # what the pull request says about itself: the evidence of intent
    broken: dict[str, frozenset[str]] = field(default_factory=dict)  # existing tests head breaks (carving)
    asserting: dict[str, frozenset[str]] = field(default_factory=dict)  # the PR's tests of new behaviour
    updated: dict[str, frozenset[str]] = field(default_factory=dict)  # base's tests the PR rewrote
    carved: dict[str, frozenset[str]] = field(default_factory=dict)  # carved sequence -> its tests
    stated: frozenset[str] = frozenset()  # the names the `asserting` tests use
    found: list[Difference] = field(default_factory=list)  # the differences, before the reproduction check
    minimization_notes: list[str] = field(default_factory=list)
    lines: ChangedLines | None = None  # the changed lines, and which of them ran
    measured_by: str = NOT_MEASURED  # what measured that
    rendered: bool = False  # the confirmed findings are in `found`

    @property
    def switches(self) -> Switches:
        return self.options.components.switches

    @property
    def sides(self) -> dict[str, Checkout]:
        return {"base": self.base, "head": self.head}

    @property
    def jobs(self) -> int:
        """Workers exploring on base: `--jobs`, else the cores the process may use (one in a run
        bound by a count of sequences, whose report must not depend on the machine)."""
        if self.options.jobs is not None:
            return self.options.jobs
        return 1 if self.deadline.reproducible else usable_cores()


@dataclass(frozen=True)
class _Explorers:
    """The workers of exploring: one that explores on base (hash seed 0), and the two that replay
    what it keeps, on head and on base again (hash seed 1: what varies with it is masked); with
    `--jobs N`, N - 1 more that explore on base (hash seed 0), sharing its generator."""

    base: Worker
    head: Worker
    replay: Worker
    more: tuple[Worker, ...] = ()


def _finish(report: Report, deadline: Deadline) -> None:
    """Number the differences; the run's time and rate."""
    for number, difference in enumerate(report.differences, 1):
        difference.id = f"D{number}"
    report.stats.seconds = deadline.elapsed()
    if report.stats.seconds > 0:
        report.stats.sequences_per_second = report.stats.sequences / report.stats.seconds


def _stopped(run: _Run, exc: Exception) -> InternalError:
    """The partial report of a run that failed in its progress's phase, in an InternalError."""
    report, phase = run.report, run.progress.phase
    message = f"{type(exc).__name__}: {exc}".splitlines()[0]
    report.error = RunError(phase, message)
    exploration = run.progress.exploration
    if exploration is not None and not report.stats.sequences:
        _record(run, exploration)
    if run.lines is not None and not report.coverage.measured_by:
        try:
            report.coverage = run.lines.report()
            report.coverage.measured_by = run.measured_by
        except Exception:  # the coverage may be what failed: the report goes without it
            report.notes.append("Changed-line coverage is missing: it could not be computed.")
    report.differences = run.found
    if run.rendered:
        report.notes.extend(run.minimization_notes)
    report.notes.append(f"The run stopped on an internal error while {phase} ({message}): this report is "
                        "partial. It shows what was found until then; its tests were not checked by "
                        "pytest unless marked reproduced.")
    if exploration is not None and exploration.candidates.groups and not run.rendered:
        report.notes.append(f"{len(exploration.candidates.groups)} group(s) of candidate differences were "
                            "found but not confirmed.")
    _finish(report, run.deadline)
    return InternalError(report, phase, exc)


def _prepare_extensions(base: Checkout, head: Checkout, options: Options, deadline: Deadline,
                        report: Report) -> Extensions | None:
    """The extensions head's build declares; built in both checkouts when the project says how."""
    extensions = declared_extensions(head)
    if options.build:
        sides = (("base", base), ("head", head))
        outcome = build_extensions(options.build, sides, options.python, BUILD_TIMEOUT)
        deadline.set_aside(outcome.seconds)
        report.notes.append(outcome.note)
    return extensions


def _test_change(run: _Run) -> None:
    """Catalog, explore, confirm, minimize and render: everything that needs worker processes.
    What they find goes into `run` as soon as it is known."""
    run.progress("importing")
    worker_options = _worker_options(run.options, run.deadline)
    if "divergence" in worker_options.techniques and not changed_conditions(run.changes, run.base, run.head):
        # nothing to measure: no rewriting
        worker_options = replace(worker_options, techniques=worker_options.techniques - {"divergence"})
    additions = Additions(tuple(run.impact.reached_directly()) if run.switches.direct else (),
                          tuple(run.impact.subclassed()) if run.switches.subclasses else (),
                          tuple(run.impact.class_values()) if run.switches.values else (),
                          changed_entries(run.changes, run.base, run.head))
    with WorkerPool(run.changes, additions) as pool:
        base, head, replay, *more = pool.start((run.base, "base", 0, worker_options),
                                               (run.head, "head", 1, worker_options),
                                               (run.base, "base", 1, worker_options),
                                               *[(run.base, "base", 0, worker_options)] * (run.jobs - 1))
        explorers = _Explorers(base, head, replay, tuple(more))
        run.report.stats.explore_workers = 1 + len(more)
        catalog = _catalog(run, explorers)
        run.report.notes.extend(_tables_walked_in_part(catalog, run.changes, additions.changed_entries))
        if catalog.importable_on_both(run.changes.modules):
            _explore_and_confirm(run, explorers, pool, catalog, worker_options)
        else:
            run.report.notes.append("No changed module imports on both commits: nothing to replay.")
    # the modules that no longer import on head are judged with what exploration found
    triage(run.found, catalog.by_id, run.words, run.changes.units, run.broken, run.asserting, run.updated,
           catalog.classes, run.stated)
    if run.found:
        run.progress.differences = len(run.found)
        run.progress("reproducing")


def _explore_and_confirm(run: _Run, explorers: _Explorers, pool: WorkerPool, catalog: Catalog,
                         worker_options: WorkerOptions) -> None:
    measured = _measure_lines(run, explorers)
    exploration = _explore(run, explorers, catalog, measured)
    _account(run, catalog, exploration, measured)
    ignored = exploration.candidates.ignored
    if exploration.candidates.groups:
        ignored += _confirm_and_render(run, exploration, pool, catalog, worker_options)
    if ignored:
        run.report.notes.append(f"{ignored} sequence(s) showed differences in targets the project "
                                "ignores (ignore-targets); they were left out.")


def _catalog(run: _Run, explorers: _Explorers) -> Catalog:
    """What the changed modules offer, as the workers listed it (less the techniques switched off);
    the changed modules that no longer import on head are differences already."""
    catalog = Catalog.from_json(explorers.base.catalog, explorers.head.catalog)
    switches = run.switches
    catalog = catalog.without(protocols=not switches.protocols, values=not switches.values,
                              commands=not switches.cli)
    run.report.stats.techniques.update((technique, counted) for technique, counted
                                       in catalog.counters().items() if technique in switches.on)
    run.report.notes.extend(_check_imports(catalog, run.changes, run.options.python))
    if run.extensions is not None:
        run.report.notes.append(extension_note(run.extensions, catalog.compiled, bool(run.options.build)))
    run.found = [import_difference(m, e, run.changes) for m, e in catalog.broken_on_head().items()]
    run.progress.imports = run.progress.differences = len(run.found)
    return catalog


def _measure_lines(run: _Run, explorers: _Explorers) -> bool:
    """The changed lines and what the imports ran of them; whether the replaying workers measure
    coverage (a worker without changed lines on its side measures nothing and reports no error)."""
    lines = run.lines = ChangedLines(run.changes, run.base, run.head)
    lines.add("base", [explorers.base.at_import])
    lines.add("head", [explorers.head.at_import])
    error = explorers.replay.coverage_error or explorers.head.coverage_error
    measured = error is None
    if not measured:
        run.report.notes.append(f"Changed-line coverage was not measured: {error}.")
    version = explorers.head.coverage_version or explorers.replay.coverage_version
    run.progress.lines = lines if measured else None
    run.measured_by = (NOT_MEASURED if not measured else f"coverage.py {version}" if version
                       else "nothing to measure")
    return measured


def _explore(run: _Run, explorers: _Explorers, catalog: Catalog, measured: bool) -> Exploration:
    """Carve seeds and explore with replay on both commits."""
    switches, report = run.switches, run.report
    report.allocation = run.plan.allocation()
    report.stats.history_seconds = run.plan.history_seconds
    replay_all = (bool(explorers.base.unwrapped) or bool(run.impact.at_import)
                  or any(u.kind in ("module", "class") for u in run.changes.units))
    with ThreadPoolExecutor(1, thread_name_prefix="carving") as alongside:
        # A run bound by time carves while it explores (the carved seeds join exploring when they
        # come): the project's tests take a core and a fifth of the budget that exploring need not
        # wait out. A reproducible run carves first, so that its batches do not depend on timing.
        if run.deadline.reproducible or not switches.carving:
            carving: Carving | Future[Carving] = _carve(run)
        else:
            carving = alongside.submit(_carving, run)
        exploration = _explore_with(run, explorers, catalog, measured, replay_all, carving)
        if isinstance(carving, Future):
            _take_carving(run, carving.result())
    return exploration


def _explore_with(run: _Run, explorers: _Explorers, catalog: Catalog, measured: bool, replay_all: bool,
                  carving: Carving | Future[Carving]) -> Exploration:
    """OperationPlan at the plan, and explore from the carved seeds, or from those still being carved."""
    assert run.lines is not None
    lines, switches, options, report = run.lines, run.switches, run.options, run.report
    operation_plan = plan_operations(run.plan, catalog, run.impact, lines)
    constants = mine_change(run.changes, run.base, run.head) if switches.constants else Constants()
    influence = influence_map(run.impact.sources, catalog) if switches.influence else None
    solver = (Solver(catalog.by_id, run.impact, run.sides, options.python, lines=lines if measured else None,
                     cover=switches.solver, diverge=switches.diffbehavior)
              if switches.solver or switches.diffbehavior else None)
    # blind: coverage tells exploring nothing when no call enters the change, or when the imports
    # alone ran every changed line (a decorator, a default value, a table): wait longer
    blind = replay_all or (measured and not lines.uncovered())
    early_stop = (EarlyStop(options.budget, blind=blind)
                  if options.early_stop and not run.deadline.reproducible else None)
    run.progress("exploring")
    with Replayer(explorers.replay, explorers.head, lines if measured else None,
                  paths=switches.paths, distances=switches.divergence) as replayer:
        settings = ExploreSettings(options.seed, options.batch_size, switches, options.floats, options.scope)
        exploration = explore((explorers.base, *explorers.more), replayer, catalog, operation_plan, constants,
                              settings, run.deadline, replay_all=replay_all, uncovered=lines.uncovered,
                              on_progress=run.progress.explored, seeds=_seeds(carving),
                              influence=influence, solver=solver, early_stop=early_stop)
    run.progress.exploration = exploration
    if exploration.stopped_early:
        report.stats.explore_stopped_early = 1
        report.notes.append(f"Exploring stopped at {run.deadline.elapsed():.0f} s of the {options.budget:g} "
                            f"s budget: the changed code was exhausted ({exploration.stopped_early}). "
                            "--no-early-stop explores until the budget's end.")
    report.notes.extend(f"A generation technique failed and was switched off for the rest of the run: "
                        f"{failed}. This is a bug in difforacle; please report it."
                        for failed in exploration.failed)
    if solver is not None:
        report.notes.extend(solver.notes)
    return exploration


def _account(run: _Run, catalog: Catalog, exploration: Exploration, measured: bool) -> None:
    """What exploring did goes into the report: its figures, the changed-line coverage, and per
    changed unit, why some of its changed lines did not run."""
    assert run.lines is not None
    report = run.report
    _record(run, exploration)
    report.coverage = run.lines.report()
    report.coverage.measured_by = run.measured_by
    if measured:
        report.reach = assess_reach(run.impact, catalog, run.lines, exploration.attempts,
                                    compared=exploration.replayed > 0)
    if exploration.candidates.unreadable:
        report.notes.append(f"{exploration.candidates.unreadable} sequence(s) were not compared: an "
                            "observation key of theirs could not be read (a bug of difforacle's).")


def _confirm_and_render(run: _Run, exploration: Exploration, pool: WorkerPool, catalog: Catalog,
                        worker_options: WorkerOptions) -> int:
    """Confirm the candidate differences, shrink their cases and render their tests; the sequences
    left out for showing differences only in ignored targets."""
    run.progress("confirming")
    confirmation, minimization_notes = _confirm_and_minimize(run, exploration, pool, catalog, worker_options)
    run.report.notes.extend(confirmation.notes)
    run.minimization_notes = minimization_notes
    run.found += render_findings(confirmation.findings, catalog.by_id, run.options.floats, catalog.classes)
    run.rendered = True
    return confirmation.ignored


def _carve(run: _Run) -> Carving:
    """Seed sequences from the project's tests, before exploring (when switched on)."""
    if not run.switches.carving:
        return Carving()
    run.progress("carving")
    carving = _carving(run)
    _take_carving(run, carving)
    return carving


def _carving(run: _Run) -> Carving:
    """Run the project's tests to carve, within carving's share of the budget; touches nothing of the
    run (it may run alongside exploring)."""
    return carve(run.changes, run.base, run.head, run.options.python,
                 run.deadline.carving_seconds(run.options.carve_share), examples=run.switches.examples)


def _seeds(carving: Carving | Future[Carving]) -> list[CallSequence] | Future[list[CallSequence]]:
    """The carved sequences, or a future of them while carving runs."""
    if not isinstance(carving, Future):
        return carving.sequences
    sequences: Future[list[CallSequence]] = Future()

    def done(carved: Future[Carving]) -> None:
        if (error := carved.exception()) is not None:
            sequences.set_exception(error)
        else:
            sequences.set_result(carved.result().sequences)

    carving.add_done_callback(done)
    return sequences


def _take_carving(run: _Run, carving: Carving) -> None:
    """What carving found goes into the run (the tests that are evidence) and its report."""
    report = run.report
    report.notes.extend(carving.notes)
    techniques = report.stats.techniques
    techniques.setdefault("carving", {}).update(sequences=len(carving.sequences),
                                                seconds=round(carving.seconds, 3))
    if run.switches.examples:
        techniques["examples"] = {"run": carving.examples}
    run.broken, run.asserting, run.carved = carving.broken, carving.asserting, carving.sources
    run.updated = carving.updated
    run.stated = names_used_by(run.head.root, carving.asserting)
    said = ((carving.broken, "existing test(s) that the pull request leaves unchanged pass on base and fail "
             "on head (again when run alone)"),
            (carving.asserting, "test(s) the pull request adds or changes fail on base and pass on head "
             "(they state the new behaviour)"),
            (carving.updated, "test(s) as base has them, in files the pull request changes, pass on base and "
             "fail on head (the pull request rewrote or removed them)"))
    for tests, what in said:
        names = sorted(tests)
        if names:
            more = ", ..." if len(names) > 5 else ""
            report.notes.append(f"{len(names)} {what}: {', '.join(names[:5])}{more}")


def _confirm_and_minimize(run: _Run, exploration: Exploration, pool: WorkerPool, catalog: Catalog,
                          worker_options: WorkerOptions) -> tuple[Confirmation, list[str]]:
    """Confirmation and minimization share a pair of fresh workers (patient ones)."""
    confirm_options = _confirm_options(worker_options, run.deadline)
    fresh = pool.start((run.base, "base", 2, confirm_options), (run.head, "head", 2, confirm_options))
    floats = run.options.floats
    check = DifferenceCheck(*fresh, floats)
    locate = Locator(run.changes, run.base, run.head, catalog.by_id)
    try:
        confirmation = confirm(exploration.candidates, check, run.deadline, locate, floats, run.options.scope,
                               catalog.by_id, on_progress=run.progress.confirmed, carved=run.carved,
                               classes=catalog.classes)
        minimization = minimize_findings(confirmation.findings, check, run.deadline, catalog.by_id, locate,
                                         catalog.classes)
    finally:
        check.close()
    return confirmation, minimization.notes


def _tables_walked_in_part(catalog: Catalog, changes: ChangeSet, walked: Mapping[str, list]) -> list[str]:
    """Notes on the changed module tables larger than the worker walks whose changed entries the
    diff does not name (a table built by code, not written out as a display): only their first
    MODULE_VALUE_ITEMS entries are compared, and a change past them goes unseen."""
    lines = {f.module: f.base_lines | f.head_lines for f in changes.files if f.module}
    notes = []
    for op in catalog.operations:
        if (op.kind != OperationKind.VALUE or op.size is None or op.size <= MODULE_VALUE_ITEMS
                or op.id in walked or op.line is None):
            continue
        end = op.end or op.line
        if any(op.line <= line <= end for line in lines.get(op.module, ())):
            notes.append(f"`{op.id}` holds {op.size:,} entries and its changed lines name none of them "
                         "(it is not written out as a dict, list or tuple): its first "
                         f"{MODULE_VALUE_ITEMS:,} were compared, and a change past them is not seen.")
    return notes


def _check_imports(catalog: Catalog, changes: ChangeSet, python: str) -> list[str]:
    """Notes on the changed modules base cannot import; a SetupError when none of those that exist
    on base imports (a module the pull request adds has nothing on base to import)."""
    new = changes.added_modules
    errors = {module: error for module, error in catalog.import_errors.items() if module not in new}
    existing = set(changes.modules) - new
    if errors and len(errors) == len(existing):
        module, error = next(iter(errors.items()))
        raise SetupError(f"{python} cannot import {module} on base ({error}); "
                         "pass --python with an interpreter that has the project's dependencies")
    notes = [f"{module} does not import on base ({error}); it was not tested."
             for module, error in errors.items()]
    return notes + [f"{module} is new: base has nothing to compare it with." for module in sorted(new)]


def _record(run: _Run, exploration: Exploration) -> None:
    stats = run.report.stats
    stats.sequences, stats.kept, stats.replayed = (exploration.sequences, exploration.kept,
                                                   exploration.replayed)
    stats.crashed, stats.explore_seconds = exploration.crashed, exploration.seconds
    if run.switches.carving:  # sequences run before the carved seeds came (carving alongside)
        stats.techniques.setdefault("carving", {})["explored_before_seeds"] = exploration.before_seeds
    stats.masked_keys = exploration.candidates.masked_keys
    stats.candidates = len(exploration.candidates)
    stats.techniques.update(exploration.counters)


def _worker_options(options: Options, deadline: Deadline) -> WorkerOptions:
    """The exploring workers' timeouts; their start-up never goes past the budget's end."""
    call = options.call_timeout or call_timeout(options.budget)
    return WorkerOptions(options.python, call_timeout=call, sequence_timeout=sequence_timeout(call),
                         start_timeout=deadline.bounded(WORKER_START_TIMEOUT),
                         request_timeout=WORKER_REQUEST_TIMEOUT, quit_timeout=WORKER_QUIT_TIMEOUT,
                         techniques=options.components.switches.on & set(WORKER_TECHNIQUES))


def _confirm_options(options: WorkerOptions, deadline: Deadline) -> WorkerOptions:
    """Confirmation's fresh workers are patient (see `confirm_timeouts`), and start within the budget."""
    call, sequence = confirm_timeouts(options.call_timeout)
    return replace(options, call_timeout=call, sequence_timeout=sequence,
                   start_timeout=deadline.bounded(WORKER_START_TIMEOUT),
                   techniques=options.techniques - {"divergence"})


class _Progress:
    """Reports the phase, the sequences run and the differences so far, if the caller asked."""

    def __init__(self, options: Options, deadline: Deadline) -> None:
        self.callback, self.deadline = options.progress, deadline
        self.phase, self.sequences, self.differences = "", 0, 0
        self.imports = 0  # changed modules that no longer import on head: found before exploring
        self.candidates = 0  # groups of candidate differences while exploring
        self.exploration: Exploration | None = None  # the latest progress of exploring
        self.lines: ChangedLines | None = None  # the changed lines run so far, once measured

    def __call__(self, phase: str) -> None:
        self.phase = phase
        if self.callback:
            shown = self.differences + (self.candidates if phase == "exploring" else 0)
            changed, covered = self.lines.reached() if self.lines is not None else (0, 0)
            self.callback(Progress(phase, self.sequences, shown, self.deadline.elapsed(), changed, covered))

    def history(self, commits: int) -> None:
        """Reading the git history for the defect scores: `commits` read so far (it can take a while
        on a long history, before anything else shows)."""
        self.phase = READING_HISTORY
        if self.callback:
            self.callback(Progress(READING_HISTORY, elapsed=self.deadline.elapsed(), commits=commits))

    def explored(self, exploration: Exploration) -> None:
        self.exploration = exploration
        self.sequences, self.candidates = exploration.sequences, len(exploration.candidates.groups)
        self("exploring")

    def confirmed(self, findings: int) -> None:
        self.differences = self.imports + findings
        self("confirming")
