"""The path memo: JTestCraft's Constraint Tree (§3.3) without a solver.

The Constraint Tree remembers every path a concolic run took, so that no path is explored
twice, and holds the unexplored branch of each node as the next thing to solve for. Without
a solver, the memo keeps what carries over to random generation:

- A sequence's *path* is the set of branches out of changed lines its replays took (on base
  and on head; coverage.py's arcs, measured per sequence, carry no order or counts: AFL's
  edge set rather than the tree's ordered path). The memo counts the sequences on each path.
- Paths already seen often are discounted, rare ones favoured (AFL's preference for rare
  paths), relative to how often the average path is seen: the pooled values of a sequence on a
  path taken `n` times, when the mean path is taken `m` times, weigh `sqrt(m / n)` (at most
  MAX_RARITY) times their orienteering weight. A sequence that never entered changed code has
  no path and keeps its weight, and so does a path taken as often as the mean: the discount
  moves extension between paths through changed code, not away from changed code.
- A changed line one of whose branches no sequence has taken is the tree's unexplored node.
  A path that reached such a line is a *near miss*: the state and arguments got there and
  went the other way, so its values weigh FRONTIER_BOOST times more while the branch stays
  untaken, and an influence-search candidate that ran it is run again with other arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...changes.changed_lines import Edge
from ...runtime.sequence import CallSequence
from ...worker.protocol import SequenceResult, Status
from ..plugin import Plugin, PluginContext

if TYPE_CHECKING:
    from ..pools import PoolEntry

PathEdges = frozenset[Edge]  # a path: the branches out of changed lines a sequence took
FRONTIER_BOOST = 4.0  # the weight of a near miss's values, times their path's rarity
MAX_RARITY = 4.0  # the most a rare path multiplies its values' weight by


@dataclass(eq=False)
class PathStat:
    """One path's count, and what it does to the weight of its sequences' pooled values."""

    edges: PathEdges
    count: int = 0
    frontier: bool = False  # reaches a changed line with a branch no sequence has taken
    factor: float = 1.0  # what the weight of its sequences' pooled values is multiplied by

    def update(self, mean: float) -> None:
        """The factor, given how often the mean path is taken."""
        rarity = min(MAX_RARITY, math.sqrt(mean / self.count)) if self.count else 1.0
        self.factor = rarity * (FRONTIER_BOOST if self.frontier else 1.0)


@dataclass
class PathStats:
    recorded: int = 0  # sequences whose path through changed code was measured
    near_misses: int = 0  # of them, on a path that reached a line whose other branch was untaken
    revisited: int = 0  # influence-search candidates run again after a near miss
    distinct: int = 0  # paths seen
    most_common: int = 0  # sequences on the most common path

    @property
    def top_share(self) -> float:
        """The share of the recorded sequences on the most common path."""
        return self.most_common / self.recorded if self.recorded else 0.0


@dataclass
class PathMemo:
    paths: dict[PathEdges, PathStat] = field(default_factory=dict)
    stats: PathStats = field(default_factory=PathStats)
    # (side, path, from line) -> its branches no sequence has taken yet
    _untaken: dict[tuple[str, str, int], set[int]] = field(default_factory=dict)

    def record(self, edges: PathEdges) -> PathStat:
        """Count one more sequence on the path `edges`; its stat, shared by every sequence on the
        path (its factor is brought up to date by `refresh`)."""
        stat = self.paths.get(edges)
        if stat is None:
            stat = self.paths[edges] = PathStat(edges, frontier=self._reaches_untaken(edges))
        stat.count += 1
        self.stats.recorded += 1
        self.stats.near_misses += stat.frontier
        self.stats.distinct = len(self.paths)
        self.stats.most_common = max(self.stats.most_common, stat.count)
        return stat

    def untaken(self, edges: Iterable[Edge]) -> None:
        """The branches out of changed lines no sequence has taken so far: the paths that reach
        their lines are near misses."""
        untaken: dict[tuple[str, str, int], set[int]] = {}
        for side, path, a, b in edges:
            untaken.setdefault((side, path, a), set()).add(b)
        if untaken != self._untaken:
            self._untaken = untaken
            for stat in self.paths.values():
                stat.frontier = self._reaches_untaken(stat.edges)

    def refresh(self) -> None:
        """Every path's factor, after a round of records (the mean moves with each)."""
        mean = self.stats.recorded / len(self.paths) if self.paths else 1.0
        for stat in self.paths.values():
            stat.update(mean)

    def _reaches_untaken(self, edges: PathEdges) -> bool:
        return any((side, path, a) in self._untaken for side, path, a, _ in edges)


class MemoPlugin(Plugin):
    """The technique `paths`: the values a sequence pooled are reweighed by its path through changed
    code once replay has measured it, and the proposal that made a near miss runs again."""

    def __init__(self, context: PluginContext) -> None:
        self.memo = PathMemo()
        self.revisit_proposal = context.revisit
        # id of a sequence that entered changed code -> it (alive while its path is measured) and its
        # pooled entries
        self._awaiting: dict[int, tuple[CallSequence, list[PoolEntry]]] = {}

    def counters(self) -> dict[str, float]:
        stats = self.memo.stats
        return {"recorded": stats.recorded, "distinct": stats.distinct,
                "top_share": round(stats.top_share, 3), "near_misses": stats.near_misses,
                "revisited": stats.revisited}

    def learn(self, statements: CallSequence, result: SequenceResult) -> None:
        if result.hit and result.status in (Status.OK, Status.EXCEPTION):  # its replay measures its path
            self._awaiting[id(statements)] = (statements, [])

    def pooled(self, statements: CallSequence, entries: list[PoolEntry]) -> None:
        waiting = self._awaiting.get(id(statements))
        if waiting is not None:
            waiting[1].extend(entries)

    def found(self) -> int:
        return self.memo.stats.distinct  # a path through changed code not taken before

    def replayed(self, measured: Sequence[tuple[CallSequence, PathEdges | None]],
                 untaken: Callable[[], set]) -> None:
        self.memo.untaken(untaken())
        for statements, edges in measured:
            waiting = self._awaiting.pop(id(statements), None)
            if waiting is None or edges is None:  # it never entered changed code (replayed all the same)
                continue
            stat = self.memo.record(edges)
            for entry in waiting[1]:
                entry.path = stat
            if stat.frontier and self.revisit_proposal(statements):
                self.memo.stats.revisited += 1
        self.memo.refresh()
