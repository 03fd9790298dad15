"""Exploration: Randoop's feedback loop, run against the base worker until the deadline.

Each round, the generator (`generator.SequenceGenerator`) proposes a batch of new sequences; the base
worker runs them (hash seed 0, random seed 0) and the generator learns from every result.
Sequences that ended (normally, by an exception, or by a crash) and entered changed code
are *kept*: the replayer runs them on base again and on head, in the background, while the
next batch is generated, and `Candidates` groups those whose replay differs on head.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from ..changes.scope import EVERYTHING, Scope
from ..oracle.leaves import EXACT_ENOUGH, FloatPolicy
from ..planning.deadline import SOLVER_SHARE, Deadline
from ..planning.early_stop import EarlyStop, Progress
from ..planning.operation_plan import OperationPlan
from ..runtime.catalog import Catalog
from ..runtime.sequence import CallSequence, path_origin
from ..runtime.workers import Worker
from ..worker.protocol import Status
from .bloodhound import uncovered_ratios
from .generator import Attempts, SequenceGenerator
from .replay import Candidates, KeptSequence, Replayer
from .search.influence import InfluenceMap
from .search.solver import Solver
from .techniques import DEFAULTS, Switches
from .values.constants import Constants
from .values.primitives import ValueGenerator

EXPLORE_RANDOM_SEED = 0
# Sequences worth replaying. Not "timeout": a hang on base costs a whole timeout again on
# each replay, and a head that hangs where base did not shows up on sequences that ended.
KEPT_STATUSES = (Status.OK, Status.EXCEPTION, Status.CRASH)


@dataclass(frozen=True)
class ExploreSettings:
    """What exploring is asked to do, from the run's options."""

    seed: int = 0  # of the random exploration
    batch_size: int = 50  # sequences per request to the base worker, once past the first small ones
    switches: Switches = DEFAULTS
    floats: FloatPolicy = EXACT_ENOUGH  # when two floats compare equal
    scope: Scope = EVERYTHING  # the targets whose differences are reported


@dataclass
class Exploration:
    """What exploring found, and what it took."""

    candidates: Candidates = field(default_factory=Candidates)
    sequences: int = 0  # executed on base
    kept: int = 0  # entered changed code: replayed on base and head
    replayed: int = 0
    crashed: int = 0  # crashed their process or timed out
    seconds: float = 0.0
    attempts: dict[str, Attempts] = field(default_factory=dict)  # operation id -> what became of its calls
    # technique -> what it did, by counter (its plugin's `counters`; the solver's calls and inputs)
    counters: dict[str, dict[str, float]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # techniques switched off after their plugin raised
    stopped_early: str = ""  # why exploring stopped before its deadline ("": it did not)
    before_seeds: int = 0  # sequences run before the seeds being carved came


def explore(workers: Sequence[Worker], replayer: Replayer, catalog: Catalog, plan: OperationPlan,
            constants: Constants, settings: ExploreSettings, deadline: Deadline, *, replay_all: bool,
            uncovered: Callable[[], set],
            on_progress: Callable[[Exploration], None] = lambda exploration: None,
            seeds: list[CallSequence] | Future[list[CallSequence]] | None = None,
            influence: InfluenceMap | None = None,
            solver: Solver | None = None, early_stop: EarlyStop | None = None) -> Exploration:
    """Generate on base, each batch run by one of `workers` (the explorers, on base); replay each
    batch's kept sequences while the next batches run.

    `replay_all`: the change cannot be detected by calls into changed functions (module-level
    code, class bodies, functions run at import), so every sequence is kept. `uncovered()`
    gives the changed lines and branches not yet covered (for Bloodhound's weights). `seeds`
    (sequences carved from the project's tests) are the first batches: run, learned from and
    replayed like generated ones; still being carved (a future), they are the next batches once they
    come, and exploring is not exhausted before. `influence`: the static influence between operations, for
    Candidate Sequence Search. `solver`: asked once, when due (SOLVER_AFTER of the run), for inputs
    to the changed functions still uncovered; they are the next batches' seeds. `early_stop`: watches
    the progress after each batch, and ends exploring once the change is exhausted.
    """
    rng = random.Random(settings.seed)
    switches = settings.switches
    generator = SequenceGenerator(
        catalog, ValueGenerator(random.Random(rng.random()), constants, switches.structured,
                                switches.callables, switches.failing), rng, plan.focus,
        switches=switches,
        plan=plan, uncovered=lambda: uncovered_ratios(plan.operation_targets, uncovered()),
        timed=not deadline.reproducible, influence=influence)
    exploration = Exploration()
    started = time.monotonic()
    coming = seeds if isinstance(seeds, Future) else None  # seeds carved alongside exploring
    queued: list[CallSequence] = [] if isinstance(seeds, Future) else list(seeds or ())  # the next batches
    solver_seeds = 0  # the solver's inputs still at the front of `queued`

    def compare(replayed: list[KeptSequence]) -> None:
        if replayed:  # the plugins learn the paths they took (the path memo)
            generator.replayed([(kept.statements, kept.path) for kept in replayed],
                               lambda: {target[1:] for target in uncovered() if target[0] == "branch"})
            if switches.divergence:
                generator.distances([(kept.statements, kept.distances()) for kept in replayed])
        if solver is not None:
            solver.credit(replayed)
        exploration.candidates.compare(replayed, settings.floats, settings.scope)

    def exhausted() -> bool:
        return early_stop is not None and early_stop.exhausted()

    def next_batch() -> tuple[list[CallSequence], bool]:
        """The next batch to run on base (empty: nothing more), and whether it is the solver's."""
        nonlocal queued, solver_seeds, coming
        if coming is not None and coming.done():  # after the solver's inputs already queued
            queued, coming = [*queued[:solver_seeds], *coming.result(), *queued[solver_seeds:]], None
            exploration.before_seeds = exploration.sequences
        if solver is not None and solver.due(deadline.share_explored(submitted)):
            differing = {path_origin(key.target) for key in exploration.candidates.groups}
            found = generator.calls_with(solver.solve(uncovered(), deadline.side_seconds(SOLVER_SHARE),
                                                      differing))
            solver.track(found)
            queued, solver_seeds = [*found, *queued], len(found)
            if found:  # what waits for replay goes now, so that the solver's inputs are replayed in
                # rounds of their own: coverage is measured per round, and theirs is credited to them
                compare(replayer.finish())
                replayer.start([], all_waiting=True)
        size = deadline.batch_size(settings.batch_size, submitted)
        solving, size = solver_seeds > 0, min(size, solver_seeds or size)
        solver_seeds -= size if solving else 0
        batch, queued = ((queued[:size], queued[size:]) if queued
                          else (list(generator.candidates(size)), []))
        return batch, solving

    # Each explorer's request runs in a thread of its own, waited for while the host works. Batches
    # are generated as explorers come free and learned from in the order they were sent: for a given
    # count of explorers, a run bound by a count of sequences stays reproducible.
    submitted = 0  # sequences sent to an explorer (run or running)
    idle = list(workers)
    running: deque[tuple[list[CallSequence], bool, Worker, Future]] = deque()
    with ThreadPoolExecutor(len(workers)) as base_run:
        while True:
            while idle and not exhausted() and not deadline.exploration_over(
                    submitted, replayer.last_seconds, bool(exploration.candidates.groups)):
                batch, solving = next_batch()
                if not batch:
                    break
                explorer = idle.pop(0)
                request = base_run.submit(explorer.run, batch, EXPLORE_RANDOM_SEED, fields=switches.novelty,
                                          influence=generator.requests(batch))
                running.append((batch, solving, explorer, request))
                submitted += len(batch)
            if not running:
                break
            # while the explorers run their batches, the previous batch's replays are compared
            compare(replayer.finish())
            batch, solving, explorer, done = running.popleft()
            results = done.result()
            idle.append(explorer)
            kept = []
            for statements, result in zip(batch, results, strict=True):
                # a change no call can be told to enter (module-level code): every sequence is
                # replayed, so every one counts as entering it for the techniques that learn from those
                result.hit = result.hit or replay_all
                generator.feedback(statements, result)
                exploration.crashed += result.status in (Status.CRASH, Status.TIMEOUT)
                if result.status in KEPT_STATUSES and result.hit:
                    kept.append(KeptSequence(statements, result))
            exploration.kept += len(kept)
            replayer.start(kept, all_waiting=solving)
            exploration.sequences += len(batch)
            exploration.seconds = round(time.monotonic() - started, 2)
            on_progress(exploration)
            if early_stop is not None:
                found, searching = generator.progress()
                searching |= solver is not None and not solver.asked  # its inputs are still to come
                early_stop.observe(Progress(len(uncovered()), len(exploration.candidates.groups), found,
                                            searching, waiting=coming is not None or bool(queued)),
                                   len(batch))
    compare(replayer.finish())
    replayer.start([], all_waiting=True)
    compare(replayer.finish())
    if coming is not None:  # the seeds came too late to run
        exploration.before_seeds = exploration.sequences
    exploration.replayed = replayer.replayed
    exploration.attempts = generator.attempts
    exploration.failed = generator.failed
    if early_stop is not None and early_stop.stopped_at is not None:
        exploration.stopped_early = early_stop.why()
    exploration.counters = {plugin.technique: counted for plugin in generator.plugins
                            if (counted := plugin.counters())}
    if solver is not None:
        exploration.counters[solver.technique] = solver.counters()
    return exploration

