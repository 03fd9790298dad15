"""The value pools: earlier sequences whose values (or mutated receivers) later calls reuse.

Randoop extends sequences from a pool of earlier ones; GRT's *elephant brain* keys the pool by
each value's exact runtime type and indexes it by the type's MRO, so a value also serves
every supertype; GRT's *orienteering* prefers cheap entries, by measured time and length;
the path memo (`search.path_memo`) discounts entries whose sequence took a path through changed code
that many others took, and favours those that came near an untaken branch.
A candidate is assembled by splicing the pooled sequences it needs before its new call
(`SequenceBuilder`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..runtime.sequence import CallSequence, shift
from ..worker.protocol import Statement

if TYPE_CHECKING:
    from .search.path_memo import PathStat

POOL_LIMIT = 400  # values per type; older entries are replaced at random past this


@dataclass(eq=False)
class PoolEntry:
    """A sequence and the index of the statement whose value (or mutated receiver) it offers.

    `cost` is what running the sequence took (milliseconds; 1 when runs must be reproducible)
    and `picks` how often it was chosen as an input: orienteering prefers cheap entries.
    `path`: the sequence's path through changed code, once its replay measured it (the memo
    keeps its factor up to date).
    """

    statements: tuple[Statement, ...]
    index: int
    cost: float = 1.0
    picks: int = 0
    path: PathStat | None = None
    # 1 / (t * sqrt(size)), fixed at creation: a pick weighs every entry of a bucket (up to
    # POOL_LIMIT), thousands of times a second
    _unpicked_weight: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._unpicked_weight = 1.0 / (max(self.cost, 1e-3) * math.sqrt(len(self.statements)))

    def weight(self) -> float:
        """GRT's orienteering weight, as Randoop computes it: 1 / (k * t * sqrt(size)), times the
        path memo's factor."""
        weight = self._unpicked_weight / (self.picks + 1)
        return weight if self.path is None else weight * self.path.factor


@dataclass
class Pools:
    by_type: dict[str, list[PoolEntry]] = field(default_factory=dict)
    seen_states: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=random.Random)
    by_mro: bool = True  # elephant brain: a value also serves every supertype of its runtime type
    orienteering: bool = True  # cheap entries first (else uniformly)

    def add(self, entry: PoolEntry, mro: list[str], digest: str | None) -> bool:
        """Add `entry` under every type of its MRO unless an equal state is already pooled
        (`digest` None: the caller has judged it new by field coverage)."""
        if digest is not None:
            key = f"{mro[0] if mro else '?'}:{digest}"
            if key in self.seen_states:
                return False
            self.seen_states.add(key)
        for name in mro if self.by_mro else mro[:1]:
            bucket = self.by_type.setdefault(name, [])
            if len(bucket) < POOL_LIMIT:
                bucket.append(entry)
            else:
                bucket[self.rng.randrange(POOL_LIMIT)] = entry
        return True

    def pick(self, type_names: tuple[str, ...] | list[str], rng: random.Random) -> PoolEntry | None:
        buckets = [self.by_type[t] for t in type_names if self.by_type.get(t)]
        if not buckets:
            return None
        bucket = rng.choice(buckets)
        if not self.orienteering:
            if not any(e.path for e in bucket):
                return bucket[rng.randrange(len(bucket))]
            return rng.choices(bucket, [e.path.factor if e.path else 1.0 for e in bucket])[0]
        entry = rng.choices(bucket, [e.weight() for e in bucket])[0]
        entry.picks += 1
        return entry

    def pick_any(self, rng: random.Random) -> PoolEntry | None:
        names = [t for t, bucket in self.by_type.items() if bucket and not t.startswith("builtins.")]
        return self.pick([rng.choice(names)], rng) if names else None


class SequenceBuilder:
    """Assembles one candidate: pooled sequences spliced in, each once, then the new calls."""

    def __init__(self) -> None:
        self.statements: CallSequence = []
        self._included: list[tuple[PoolEntry, int]] = []  # (entry, offset); identity, not equality

    def include(self, entry: PoolEntry) -> dict:
        """Splice `entry`'s statements in (once) and return a reference to its value."""
        offset = next((o for e, o in self._included if e is entry), None)
        if offset is None:
            offset = len(self.statements)
            self._included.append((entry, offset))
            self.statements.extend(shift(s, offset) for s in entry.statements)
        return {"ref": entry.index + offset}

    def entry(self, cost: float = 1.0) -> PoolEntry:
        """The sequence built so far, offering the value of its last statement."""
        return PoolEntry(tuple(self.statements), len(self.statements) - 1, cost)


