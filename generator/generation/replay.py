"""Replay and compare: the kept sequences again on base and on head, and what differs.

Each kept sequence runs on base a second time, in another process with another hash seed
and random seed: what differs from the exploring run varies by itself and is *masked*.
It also runs on head; the first unmasked observation that differs there makes the sequence
a candidate, grouped with the others by its `DifferenceKey`. Replay happens in the
background while the explorer generates the next batch, so nothing waits for the end.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from ..changes.changed_lines import SIDES, ChangedLines
from ..changes.scope import Scope
from ..oracle.compare import Mismatch, first_mismatch, unstable_keys
from ..oracle.difference_key import DifferenceKey
from ..oracle.leaves import FloatPolicy
from ..runtime.sequence import CallSequence, call_path, origin
from ..runtime.workers import Worker
from ..worker.protocol import MalformedKey, ObservationKey, SequenceResult, Status

REPLAY_RANDOM_SEED = 1  # the exploring run used 0: what depends on the random seed is masked


@dataclass
class KeptSequence:
    """A sequence worth replaying, its exploring run, then its replays on base and head."""

    statements: CallSequence
    explored: SequenceResult
    replayed_base: SequenceResult | None = None
    replayed_head: SequenceResult | None = None
    # The replay runs a round's sequences one after the other in one process: what ran before this
    # one there (`round[:position]`) may have left state (a cache, a registry) that it shows.
    round: list[KeptSequence] = field(default_factory=list, repr=False)
    position: int = 0
    # the branches out of changed lines its replays took (see the path memo); None when not measured
    path: frozenset | None = None

    def distances(self) -> dict[str, float]:
        """The least branch distance per changed condition its replays reached, on both commits
        (keys "base:<site>", "head:<site>"; empty when not measured)."""
        return {f"{side}:{site}": found for side, result in (("base", self.replayed_base),
                                                             ("head", self.replayed_head))
                if result is not None for site, found in result.distances.items()}

    def history(self) -> list[CallSequence]:
        """The sequences that ran before this one in its replay round and ended normally on both
        commits (one that raised stopped part way, and would stop a joined sequence too)."""
        return [k.statements for k in self.round[:self.position]
                if k.replayed_base is not None and k.replayed_base.status == Status.OK
                and k.replayed_head is not None and k.replayed_head.status == Status.OK]


@dataclass
class Candidates:
    """Sequences whose replay on head differs from base, grouped by difference, in order found."""

    groups: dict[DifferenceKey, list[tuple[KeptSequence, Mismatch]]] = field(default_factory=dict)
    masked_keys: int = 0  # observations that varied between the two runs on base
    ignored: int = 0  # mismatches in targets the project ignores, left out
    unreadable: int = 0  # sequences left out because an observation key could not be read

    def __len__(self) -> int:
        return sum(len(members) for members in self.groups.values())

    def compare(self, replayed: list[KeptSequence], policy: FloatPolicy, scope: Scope) -> None:
        """Mask what varied between the two base runs, then group what differs on head (unless in a
        target the scope ignores).

        Observations are dropped afterwards: only the mismatching sequences keep theirs. A
        sequence that could not be compared costs itself, never the run: one a replay skipped
        (it calls an operation that hung earlier in that batch) has nothing to compare, and
        one with a key no builder writes (a bug of ours) is counted in `unreadable`.
        """
        for kept in replayed:
            base, head = kept.replayed_base, kept.replayed_head
            assert base is not None and head is not None
            try:
                found = self._difference(kept, base, head, policy)
            except MalformedKey:
                self.unreadable += 1
                found = None
            if found is None:
                for result in (kept.explored, base, head):
                    result.forget_observations()
                continue
            mismatch, statement = found
            if scope.ignores(origin(kept.statements, statement)):
                self.ignored += 1
                continue
            # grouped by the operation called; a returned callable's call by its origin and the calls
            # in between, so that a decorator's and its wrapper's differences stay apart
            key = DifferenceKey.of(mismatch, call_path(kept.statements, statement))
            self.groups.setdefault(key, []).append((kept, mismatch))

    def _difference(self, kept: KeptSequence, base: SequenceResult, head: SequenceResult,
                    policy: FloatPolicy) -> tuple[Mismatch, int] | None:
        """The first mismatch on head and the index of its statement, or None."""
        if Status.SKIPPED in (base.status, head.status):
            return None
        masked = unstable_keys(kept.explored.observations, base.observations, policy)
        self.masked_keys += len(masked)
        mismatch = first_mismatch(base, head, masked, policy)
        if mismatch is None:
            return None
        return mismatch, ObservationKey.parse(mismatch.key).statement


class Replayer:
    """Replays kept sequences on base (another process and hash seed) and on head, in the
    background; one round in flight at a time.

    Kept sequences wait until a round of at least ROUND_MIN has gathered (or the explorer
    asks for the rest): each round costs each worker a forked child and a coverage
    measurement whatever its size, and an exploration batch often keeps only a few."""

    ROUND_MIN = 20

    def __init__(self, base: Worker, head: Worker, lines: ChangedLines | None, *,
                 paths: bool = False, distances: bool = False) -> None:
        """`lines` None: coverage cannot be measured, and is not asked for. `paths`: while coverage
        is measured, each sequence's branches out of changed lines are too (its path). `distances`:
        each sequence's branch distances on changed conditions (workers started with `divergence`)."""
        self.base, self.head, self.lines = base, head, lines
        self.distances = distances
        self._branching = ({side: lines.branching(side) for side in SIDES}
                           if lines is not None and paths else {})
        self._pool = ThreadPoolExecutor(2)
        self._pending: tuple[list[KeptSequence], Future, Future, float] | None = None
        self._waiting: list[KeptSequence] = []
        self.last_seconds = 0.0  # how long the latest round took: the time the final one needs
        self.replayed = 0

    def start(self, kept: list[KeptSequence], *, all_waiting: bool = False) -> None:
        """Add `kept` to the sequences waiting for replay; start a round of them once there are
        ROUND_MIN (`all_waiting`: whatever is waiting). Call `finish` first: one round at a time."""
        self._waiting.extend(kept)
        if not self._waiting or (len(self._waiting) < self.ROUND_MIN and not all_waiting):
            return
        kept, self._waiting = self._waiting, []
        batch = [k.statements for k in kept]
        for position, item in enumerate(kept):
            item.round, item.position = kept, position
        # coverage is measured only while something is still uncovered (tracing is slow)
        wanted = {side: self.lines is not None and self.lines.pending(side) for side in SIDES}
        base = self._pool.submit(self.base.run, batch, REPLAY_RANDOM_SEED, lines=wanted["base"],
                                 paths=self._branching.get("base"), distances=self.distances)
        head = self._pool.submit(self.head.run, batch, REPLAY_RANDOM_SEED, lines=wanted["head"],
                                 paths=self._branching.get("head"), distances=self.distances)
        self._pending = (kept, base, head, time.monotonic())

    def finish(self) -> list[KeptSequence]:
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
            self._paths(kept, {"base": base_results, "head": head_results})
        for item, b, h in zip(kept, base_results, head_results, strict=True):
            item.replayed_base, item.replayed_head = b, h
        self.replayed += len(kept)
        return kept

    def _paths(self, kept: list[KeptSequence], results: dict[str, list[SequenceResult]]) -> None:
        """Each sequence's path: the branches out of changed lines it took on the sides measured.
        A forked process reports its sequences' arcs with its last result, so the sequences of a
        process that died have none (their path stays unknown)."""
        assert self.lines is not None
        for side, side_results in results.items():
            process: list[KeptSequence] = []
            for item, result in zip(kept, side_results, strict=True):
                if result.lost:  # its process died: the next one measures the sequences after it
                    process = []
                    continue
                process.append(item)
                paths = result.lines.paths
                if paths is None:
                    continue
                for member in process:
                    taken = self.lines.branches_taken(side, paths.get(member.position, ()))
                    member.path = taken if member.path is None else member.path | taken
                process = []

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
