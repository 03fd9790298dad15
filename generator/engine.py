"""The pipeline: (repo, base, head, budget) -> Report. No network, no GitHub.

`analyze` runs the stages in order, each a call with a typed result:

    changes    the diff merge-base..head mapped onto modules and units      changes.py
               (compiled extensions declared, built when configured)           extensions.py
    impact     which code reaches the changed units (static, parsed once)   impact.py
    plan       units in two tiers, their shares by defect score            plan.py, risk.py, commits.py,
                                                                            allocation.py
    catalog    what the changed modules offer, listed by a base worker     catalog.py
    aim        the plan and impact over the catalog: focus, quotas, targets aim.py
    carve      seed sequences from the calls of the project's own tests    carve.py (worker/carving.py)
    explore    feedback-directed generation on base, with replay on base    explore.py, generate.py
               and head and comparison in the background                   (selection.py, building.py,
                                                                            pools.py, learning.py),
                                                                            replay.py, compare.py
    reach      per changed unit: its changed lines run, and why not the rest reach.py
    confirm    one representative per group, in fresh processes             confirm.py
    minimize   each finding's sequence shrunk while it shows the same      minimize.py
    render     two pytest tests per finding                                 render.py
    reproduce  the tests run by pytest on both commits                      reproduce.py
    merge      one difference per changed line and values, whatever the    difference.py
               entry point that showed it
    report     the Report, with coverage, allocation and notes              model.py (report.py: its forms)

One `Deadline` (deadline.py) decides when each phase stops: by time, or by a count of
sequences in a reproducible run. A failure of ours once exploring has begun raises
`InternalError` with the partial report: what was found by then, and where the run stopped.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .changes.changed_lines import ChangedLines
from .changes.checkout import checkouts, open_repo, resolve
from .changes.extensions import Extensions, build_extensions, declared_extensions, extension_note
from .changes.importers import importers
from .changes.model import ChangeSet, Checkout
from .changes.units import compute_changes
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
from .generation.search.influence import influence_map
from .generation.search.solver import Solver
from .generation.seeds.carving import Carving, carve
from .generation.values.constants import Constants, mine_change
from .options import READING_HISTORY, Options, Progress
from .planning.deadline import Deadline
from .planning.impact import Impact, analyze_impact
from .planning.operation_plan import aim_at
from .planning.plan import HistoryOptions, Plan, plan_change
from .report.model import NOT_MEASURED, Difference, Report, RunError
from .runtime.catalog import Catalog
from .runtime.workers import WorkerOptions, WorkerPool

REPRODUCIBLE_CARVE_SECONDS = 120.0  # a reproducible run's bound on carving (see _carve)
CONFIRM_CALL_TIMEOUT = 2.0  # seconds: at least this long before a call counts as hanging in confirmation

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
        known = _Known(progress)
        try:
            _test_change(changes, impact, plan, base, head, options, deadline, report, known, extensions)
            reproduced = reproduce(known.found, base, head, options.python,
                                   show_unreproduced=options.show_unreproduced)
        except SetupError:
            raise
        except Exception as exc:
            if known.progress.phase in ("", "importing"):
                raise
            raise _stopped(report, known, deadline, exc) from exc
        report.differences, merged = merge_repeats(reproduced.differences)
        report.notes.extend([*reproduced.notes, *known.minimization_notes, *merged])
    _finish(report, deadline)
    return report


def _finish(report: Report, deadline: Deadline) -> None:
    """Number the differences; the run's time and rate."""
    for number, difference in enumerate(report.differences, 1):
        difference.id = f"D{number}"
    report.stats.seconds = deadline.elapsed()
    if report.stats.seconds > 0:
        report.stats.sequences_per_second = report.stats.sequences / report.stats.seconds


class _Known:
    """What the stages that run the project's code found so far: the differences before the
    reproduction check, and what a partial report needs if a later stage fails."""

    def __init__(self, progress: _Progress) -> None:
        self.progress = progress  # its phase is where the run is; its exploration, how far it got
        self.found: list[Difference] = []
        self.minimization_notes: list[str] = []
        self.lines: ChangedLines | None = None
        self.measured_by = NOT_MEASURED
        self.rendered = False  # the confirmed findings are in `found`


def _stopped(report: Report, known: _Known, deadline: Deadline, exc: Exception) -> InternalError:
    """The partial report of a run that failed in `known.progress.phase`, in an InternalError."""
    phase = known.progress.phase
    message = f"{type(exc).__name__}: {exc}".splitlines()[0]
    report.error = RunError(phase, message)
    exploration = known.progress.exploration
    if exploration is not None and not report.stats.sequences:
        _record(report, exploration)
    if known.lines is not None and not report.coverage.measured_by:
        try:
            report.coverage = known.lines.report()
            report.coverage.measured_by = known.measured_by
        except Exception:  # the coverage may be what failed: the report goes without it
            report.notes.append("Changed-line coverage is missing: it could not be computed.")
    report.differences = known.found
    if known.rendered:
        report.notes.extend(known.minimization_notes)
    report.notes.append(f"The run stopped on an internal error while {phase} ({message}): this report is "
                        "partial. It shows what was found until then; its tests were not checked by "
                        "pytest unless marked reproduced.")
    if exploration is not None and exploration.candidates.groups and not known.rendered:
        report.notes.append(f"{len(exploration.candidates.groups)} group(s) of candidate differences were "
                            "found but not confirmed.")
    _finish(report, deadline)
    return InternalError(report, phase, exc)


def _prepare_extensions(base: Checkout, head: Checkout, options: Options, deadline: Deadline,
                        report: Report) -> Extensions | None:
    """The extensions head's build declares; built in both checkouts when the project says how."""
    extensions = declared_extensions(head)
    if options.build:
        outcome = build_extensions(options.build, (("base", base), ("head", head)), options.python)
        deadline.set_aside(outcome.seconds)
        report.notes.append(outcome.note)
    return extensions


def _test_change(changes: ChangeSet, impact: Impact, plan: Plan, base: Checkout, head: Checkout,
                 options: Options, deadline: Deadline, report: Report, known: _Known,
                 extensions: Extensions | None = None) -> None:
    """Catalog, explore, confirm, minimize and render: everything that needs worker processes.
    What they find goes into `known` as soon as it is known."""
    progress = known.progress
    progress("importing")
    worker_options = _worker_options(options)
    with WorkerPool(changes) as workers:
        explorer_worker, head_worker, replay_worker = workers.start(
            (base, "base", 0, worker_options), (head, "head", 1, worker_options),
            (base, "base", 1, worker_options))
        catalog = Catalog.from_json(explorer_worker.catalog, head_worker.catalog)
        switches = options.components.switches
        catalog = catalog.without(protocols=not switches.protocols, values=not switches.values,
                                  commands=not switches.cli)
        report.notes.extend(_check_imports(catalog, changes, options.python))
        if extensions is not None:
            report.notes.append(extension_note(extensions, catalog.compiled, bool(options.build)))
        known.found = [import_difference(m, e, changes) for m, e in catalog.broken_on_head().items()]
        progress.imports = progress.differences = len(known.found)
        if not catalog.importable_on_both(changes.modules):
            report.notes.append("No changed module imports on both commits: nothing to replay.")
            return
        lines = known.lines = ChangedLines(changes, base, head)
        lines.add("base", [explorer_worker.at_import])
        lines.add("head", [head_worker.at_import])
        # A worker without changed lines on its side measures nothing and reports no error.
        error = replay_worker.coverage_error or head_worker.coverage_error
        measured = error is None
        if not measured:
            report.notes.append(f"Changed-line coverage was not measured: {error}.")
        version = head_worker.coverage_version or replay_worker.coverage_version
        progress.lines = lines if measured else None
        known.measured_by = (NOT_MEASURED if not measured else f"coverage.py {version}" if version
                             else "nothing to measure")
        aim = aim_at(plan, catalog, impact, lines)
        report.allocation = plan.allocation()
        report.stats.history_seconds = plan.history_seconds
        constants = mine_change(changes, base, head) if options.components.switches.constants else Constants()
        replay_all = (bool(explorer_worker.unwrapped) or bool(impact.at_import)
                      or any(u.kind in ("module", "class") for u in changes.units))
        carving = _carve(changes, base, head, options, deadline, report, progress)
        influence = influence_map(impact.sources, catalog) if switches.influence else None
        solver = (Solver(catalog.by_id, impact, {"base": base, "head": head}, options.python,
                         lines=lines if measured else None) if switches.solver else None)
        progress("exploring")
        with Replayer(replay_worker, head_worker, lines if measured else None,
                      paths=switches.paths) as replayer:
            settings = ExploreSettings(options.seed, options.batch_size, switches, options.floats,
                                       options.scope)
            exploration = explore(explorer_worker, replayer, catalog, aim, constants, settings, deadline,
                                  replay_all=replay_all, uncovered=lines.uncovered,
                                  on_progress=progress.explored, seeds=carving.sequences,
                                  influence=influence, solver=solver)
        progress.exploration = exploration
        if solver is not None:
            report.notes.extend(solver.notes)
        _record(report, exploration)
        report.coverage = lines.report()
        report.coverage.measured_by = known.measured_by
        if measured:
            report.reach = assess_reach(impact, catalog, lines, exploration.attempts,
                                        compared=exploration.replayed > 0)
        if exploration.candidates.unreadable:
            report.notes.append(f"{exploration.candidates.unreadable} sequence(s) were not compared: an "
                                "observation key of theirs could not be read (a bug of difforacle's).")
        ignored = exploration.candidates.ignored
        if exploration.candidates.groups:
            progress("confirming")
            confirmation, minimization_notes = _confirm_and_minimize(
                exploration, workers, changes, (base, head), catalog, worker_options, options, deadline,
                progress)
            report.notes.extend(confirmation.notes)
            known.minimization_notes = minimization_notes
            project = frozenset(module.split(".")[0] for module in changes.modules)
            known.found += render_findings(confirmation.findings, catalog.by_id, options.floats, project)
            known.rendered = True
            ignored += confirmation.ignored
        if ignored:
            report.notes.append(f"{ignored} sequence(s) showed differences in targets the project ignores "
                                "(ignore-targets); they were left out.")
    if known.found:
        progress.differences = len(known.found)
        progress("reproducing")


def _carve(changes: ChangeSet, base: Checkout, head: Checkout, options: Options, deadline: Deadline,
           report: Report, progress: _Progress) -> Carving:
    """Seed sequences from the project's tests, within their share of the budget (when switched on).
    A reproducible run carves all the selected tests, under a generous bound only: where a time
    limit cut them short, the seeds, and so the report, would depend on the machine's speed."""
    if not options.components.switches.carving:
        return Carving()
    progress("carving")
    seconds = options.budget * options.carve_share
    if deadline.reproducible:
        seconds = max(seconds, REPRODUCIBLE_CARVE_SECONDS)
    carving = carve(changes, base, head, options.python, seconds)
    report.notes.extend(carving.notes)
    report.stats.carve_seconds, report.stats.carved = carving.seconds, len(carving.sequences)
    return carving


def _confirm_and_minimize(exploration: Exploration, workers: WorkerPool, changes: ChangeSet,
                          sides: tuple[Checkout, Checkout], catalog: Catalog, worker_options: WorkerOptions,
                          options: Options, deadline: Deadline,
                          progress: _Progress) -> tuple[Confirmation, list[str]]:
    """Confirmation and minimization share a pair of fresh workers (patient ones)."""
    base, head = sides
    confirm_options = _confirm_options(worker_options)
    fresh = workers.start((base, "base", 2, confirm_options), (head, "head", 2, confirm_options))
    check = DifferenceCheck(*fresh, options.floats)
    locate = Locator(changes, base, head, catalog.by_id)
    try:
        confirmation = confirm(exploration.candidates, check, deadline, locate, options.floats, options.scope,
                               on_progress=progress.confirmed)
        minimization = minimize_findings(confirmation.findings, check, deadline, catalog.by_id, locate)
    finally:
        check.close()
    return confirmation, minimization.notes


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


def _record(report: Report, exploration: Exploration) -> None:
    stats = report.stats
    stats.sequences, stats.kept, stats.replayed = (exploration.sequences, exploration.kept,
                                                   exploration.replayed)
    stats.crashed, stats.explore_seconds = exploration.crashed, exploration.seconds
    stats.masked_keys = exploration.candidates.masked_keys
    stats.candidates = len(exploration.candidates)
    search = exploration.search
    stats.influence_candidates, stats.influence_checked = search.built, search.checked
    stats.influence_redundant = search.redundant
    stats.influence_pruned, stats.influence_pruned_share = search.pruned, round(search.pruned_share, 3)
    stats.influence_longest_prefix, stats.influence_reduced = search.longest_prefix, search.reduced
    solved = exploration.solver
    stats.solver_calls, stats.solver_seconds = solved.calls, solved.seconds
    stats.solver_inputs, stats.solver_skipped = solved.inputs, solved.skipped
    stats.solver_new_coverage = solved.new_coverage
    paths = exploration.paths
    stats.paths_recorded, stats.paths_distinct = paths.recorded, paths.distinct
    stats.paths_top_share, stats.paths_near_misses = round(paths.top_share, 3), paths.near_misses
    stats.paths_revisited = paths.revisited


def _worker_options(options: Options) -> WorkerOptions:
    call_timeout = options.call_timeout or _call_timeout(options.budget)
    return WorkerOptions(options.python, call_timeout=call_timeout,
                         sequence_timeout=max(2.0, 5 * call_timeout))


def _confirm_options(options: WorkerOptions) -> WorkerOptions:
    """Confirmation is patient: a call that merely ran slow on a loaded machine must not become a
    "hang" difference, so the fresh workers wait several times longer."""
    timeout = max(CONFIRM_CALL_TIMEOUT, 4 * options.call_timeout)
    return replace(options, call_timeout=timeout, sequence_timeout=max(4.0, 5 * timeout))


def _call_timeout(budget: float) -> float:
    """A call that runs longer is a hang: 1 s (Randoop uses 5 s) but no more than a sixtieth of
    the budget, down to 0.25 s, so that a few hanging operations cannot eat a short budget."""
    return min(1.0, max(0.25, budget / 60))


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
