"""Budget quotas over units: the plan's shares turned into the order in which units are aimed at."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping
from typing import TypeVar

MIN_COST = 5.0  # milliseconds: what any sequence costs besides its own calls (fork, IPC, replay)



K = TypeVar("K", bound=Hashable)



class UnitQuota:
    """Deterministic picks of units in proportion to their shares (units with share 0 never).

    A share is a share of the budget's time. Without measurements each pick costs the same,
    so shares are shares of the picks (reproducible runs). In a run bound by time the
    explorer reports what the sequences aimed at each unit took (`observe`), and a pick is
    charged that unit's mean cost: a unit whose calls take a second each no longer eats the
    time of the units whose calls take a millisecond.
    """

    def __init__(self, shares: Mapping[K, float]) -> None:
        self.shares = {unit: share for unit, share in shares.items() if share > 0}
        self.picks: Counter = Counter()
        self._spent: dict[K, float] = {unit: 0.0 for unit in self.shares}
        self._total = 0.0
        self._cost_sums: Counter = Counter()
        self._cost_counts: Counter = Counter()

    def __bool__(self) -> bool:
        return bool(self.shares)

    def next(self, allowed: set | None = None) -> K | None:
        """The unit furthest below its share (ties: the first in allocation order), among `allowed`."""
        candidates = [u for u in self.shares if allowed is None or u in allowed]
        if not candidates:
            return None
        unit = max(candidates, key=lambda u: self.shares[u] * self._total - self._spent[u])
        cost = self.cost(unit)
        self.picks[unit] += 1
        self._spent[unit] += cost
        self._total += cost
        return unit

    def observe(self, unit: K, cost: float) -> None:
        """What one sequence aimed at `unit` took, in milliseconds."""
        if unit in self.shares:
            self._cost_sums[unit] += max(cost, MIN_COST)
            self._cost_counts[unit] += 1

    def cost(self, unit: K) -> float:
        """The mean observed cost of `unit`; before any observation, the mean over all units."""
        if self._cost_counts[unit]:
            return self._cost_sums[unit] / self._cost_counts[unit]
        counted = sum(self._cost_counts.values())
        return sum(self._cost_sums.values()) / counted if counted else 1.0
