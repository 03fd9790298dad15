"""Where the explorer aims: GRT's Bloodhound weights over operations, and budget quotas over units.

Bloodhound (GRT, section III-F; constants as in Randoop's re-implementation): an
operation's weight is

    w(m, 0) = ALPHA * uncovered(m) + (1 - ALPHA) * (1 - succ(m) / max succ)
    w(m, k) = max(-3 / ln(1 - P) * P**k / k, 1 / ln(|M| + 3)) * w(m, 0)    (k >= 1)

with `uncovered(m)` the fraction of the changed lines and branches `m` can reach that no
sequence has covered yet (0.5 when it reaches none, as Randoop does for methods without
coverage data), `succ(m)` the kept sequences ending with `m`, and `k` the times `m` was
chosen since the last refresh. Weights are refreshed after every REFRESH_EVERY kept
sequences, not every T seconds, so that a run with a fixed seed and sequence count is
reproducible (Randoop's deterministic mode).

UnitQuota turns a budget allocation over units (two tiers by defect score, or uniform)
into the order in which units are aimed at: each pick goes to the unit furthest below its
share of the picks so far (stride scheduling). Picks stand in for seconds because the
number of sequences is reproducible and the time they take is not.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence

ALPHA = 0.9
P = 0.99
REFRESH_EVERY = 100
NO_TARGETS = 0.5



class Bloodhound:
    def __init__(self, operation_count: int) -> None:
        self.succeeded: Counter[str] = Counter()
        self._picked: Counter[str] = Counter()
        self._base: dict[str, float] = {}
        self._uncovered: Mapping[str, float] = {}
        self._floor = 1.0 / math.log(operation_count + 3)
        self._since_refresh = 0

    def weight(self, op_id: str) -> float:
        base = self._base.get(op_id)
        if base is None:
            base = self._base[op_id] = self._base_weight(op_id)
        k = self._picked[op_id]
        if k == 0:
            return base
        return max(-3.0 / math.log(1.0 - P) * P ** k / k, self._floor) * base

    def choose(self, op_ids: Sequence[str], rng: random.Random) -> str:
        weights = [self.weight(op) for op in op_ids]
        chosen = rng.choices(op_ids, weights)[0] if sum(weights) > 0 else rng.choice(op_ids)
        self._picked[chosen] += 1
        return chosen

    def success(self, op_id: str) -> bool:
        """Count a kept sequence ending with `op_id`; True when the weights are due for a refresh."""
        self.succeeded[op_id] += 1
        self._since_refresh += 1
        return self._since_refresh >= REFRESH_EVERY

    def refresh(self, uncovered: Mapping[str, float]) -> None:
        """New coverage: recompute every weight and forget the picks since the last refresh."""
        self._uncovered = uncovered
        self._base.clear()
        self._picked.clear()
        self._since_refresh = 0

    def _base_weight(self, op_id: str) -> float:
        most = max(self.succeeded.values(), default=0)
        rarity = 1.0 - self.succeeded[op_id] / most if most else 1.0
        return ALPHA * self._uncovered.get(op_id, NO_TARGETS) + (1 - ALPHA) * rarity




def uncovered_ratios(reach: Mapping[str, set], uncovered: set) -> dict[str, float]:
    """Per operation, the fraction of the targets it reaches that are still uncovered."""
    return {op: len(targets & uncovered) / len(targets) for op, targets in reach.items() if targets}
