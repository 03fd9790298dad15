"""Figures the benchmark scripts share: one definition of a percentile for every table."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile: the smallest value with at least `share` of the values at or below it
    (NaN for no values). The rank is rounded before its ceiling, so that 0.07 * 100 is rank 7, not 8."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(round(share * len(ordered), 9)))
    return ordered[min(rank, len(ordered)) - 1]
