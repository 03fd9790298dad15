"""Exploration: Randoop's feedback loop, run against the base worker until the deadline.

Each round, the generator (`generate.SequenceGenerator`) proposes a batch of new sequences; the base
worker runs them (hash seed 0, random seed 0) and the generator learns from every result.
Sequences that ended (normally, by an exception, or by a crash) and entered changed code
are *kept*: the replayer runs them on base again and on head, in the background, while the
next batch is generated, and `Candidates` groups those whose replay differs on head.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .aim import Aim
from .candidate_search import SearchStats
from .catalog import Catalog
from .constants import Constants
from .deadline import Deadline
from .executor import Worker
from .generate import Attempts, SequenceGenerator
from .guidance import uncovered_ratios
from .influence import InfluenceMap
from .options import Options
from .paths import PathStats
from .replay import Candidates, KeptSequence, Replayer
from .values import ValueGenerator
from .worker.protocol import Status

EXPLORE_RANDOM_SEED = 0
# Sequences worth replaying. Not "timeout": a hang on base costs a whole timeout again on
# each replay, and a head that hangs where base did not shows up on sequences that ended.
KEPT_STATUSES = (Status.OK, Status.EXCEPTION, Status.CRASH)


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
    search: SearchStats = field(default_factory=SearchStats)  # Candidate Sequence Search's figures
    paths: PathStats = field(default_factory=PathStats)  # the path memo's figures


def explore(worker: Worker, replayer: Replayer, catalog: Catalog, aim: Aim, constants: Constants,
            options: Options, deadline: Deadline, *, replay_all: bool, uncovered: Callable[[], set],
            on_progress: Callable[[Exploration], None] = lambda exploration: None,
            seeds: list[list[dict]] | None = None, influence: InfluenceMap | None = None) -> Exploration:
    """Generate on base; replay each batch's kept sequences while the next batch is generated.

    `replay_all`: the change cannot be detected by calls into changed functions (module-level
    code, class bodies, functions run at import), so every sequence is kept. `uncovered()`
    gives the changed lines and branches not yet covered (for Bloodhound's weights). `seeds`
    (sequences carved from the project's tests) are the first batches: run, learned from and
    replayed like generated ones. `influence`: the static influence between operations, for
    Candidate Sequence Search.
    """
    rng = random.Random(options.seed)
    switches = options.components.switches
    generator = SequenceGenerator(
        catalog, ValueGenerator(random.Random(rng.random()), constants, switches.structured,
                                switches.callables, switches.failing), rng, aim.focus,
        switches=switches,
        aim=aim, uncovered=lambda: uncovered_ratios(aim.operation_targets, uncovered()),
        timed=not deadline.reproducible, influence=influence)
    exploration = Exploration()
    started = time.monotonic()
    seeds = list(seeds or ())
    # the base worker's request runs in this thread, waited for while the host works
    with ThreadPoolExecutor(1) as base_run:
        while not deadline.exploration_over(exploration.sequences, replayer.last_seconds,
                                            bool(exploration.candidates.groups)):
            size = deadline.batch_size(options.batch_size, exploration.sequences)
            batch, seeds = (seeds[:size], seeds[size:]) if seeds else (list(generator.candidates(size)), [])
            if not batch:
                break
            running = base_run.submit(worker.run, batch, EXPLORE_RANDOM_SEED, fields=switches.novelty,
                                      influence=generator.influence_requests(batch))
            # while the worker runs this batch, the previous batch's replays are compared
            exploration.candidates.compare(_replayed(replayer, generator, uncovered), options.floats,
                                           options.scope)
            results = running.result()
            kept = []
            for statements, result in zip(batch, results, strict=True):
                generator.feedback(statements, result)
                exploration.crashed += result.status in (Status.CRASH, Status.TIMEOUT)
                if result.status in KEPT_STATUSES and (result.hit or replay_all):
                    kept.append(KeptSequence(statements, result))
            exploration.kept += len(kept)
            replayer.start(kept)
            exploration.sequences += len(batch)
            exploration.seconds = round(time.monotonic() - started, 2)
            on_progress(exploration)
    exploration.candidates.compare(replayer.finish(), options.floats, options.scope)
    replayer.start([], all_waiting=True)
    exploration.candidates.compare(replayer.finish(), options.floats, options.scope)
    exploration.replayed = replayer.replayed
    exploration.attempts = generator.attempts
    if generator.search is not None:
        exploration.search = generator.search.stats
    if generator.memo is not None:
        exploration.paths = generator.memo.stats
    return exploration


def _replayed(replayer: Replayer, generator: SequenceGenerator,
              uncovered: Callable[[], set]) -> list[KeptSequence]:
    """The round of replays in flight, finished; the path memo learns the paths they took."""
    replayed = replayer.finish()
    if replayed and generator.memo is not None:
        untaken = {target[1:] for target in uncovered() if target[0] == "branch"}
        generator.paths_taken([(kept.statements, kept.path) for kept in replayed], untaken)
    return replayed
