"""Split a time budget over units: two tiers by defect score (BADS, 2-Tier), or uniformly.

After Perera et al. (ASE 2020): tier 1 (the units a pull request changed) gets 90 % of the
budget and tier 2 (impacted but unchanged units) 10 %. Within a tier, each unit gets a
minimum share, so a unit with score 0 is still tested (recall matters more than precision
for a defect predictor guiding test generation), and the rest in proportion to its score.
Unlike the reference implementation there is no grouping, a tier may hold one unit, and the
shares sum to the budget exactly: `sum(allocation.values()) == budget` in floating point,
so no second is lost or overspent whatever the number of units.

The time spent on the history analysis is the caller's to subtract from `budget` first.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

TIER1_SHARE = 0.9
MINIMUM_SHARE = 0.5  # of a tier's equal split; the paper's t_min1 / tier-1 average is 15 s / 27 s


def allocate(
    budget: float,
    tier1: Sequence[tuple[K, float]],
    tier2: Sequence[tuple[K, float]] = (),
    *,
    tier1_share: float = TIER1_SHARE,
    minimum_share: float = MINIMUM_SHARE,
) -> dict[K, float]:
    """Seconds per unit key: tier 1 first, then tier 2, each ranked by score (ties by key).

    `tier1_share` of the budget goes to tier 1 and the rest to tier 2, or everything to the
    one non-empty tier. Within a tier of n units, every unit gets `minimum_share` of the
    tier's equal split (tier budget / n); the remaining `1 - minimum_share` of the tier budget
    is shared in proportion to score (equally when all scores are 0). Scores can be
    probabilities or raw Schwa scores: only their ratios matter.
    """
    _check_budget(budget)
    if not 0.0 <= tier1_share <= 1.0:
        raise ValueError(f"tier1_share must be within [0, 1], not {tier1_share}")
    if not 0.0 <= minimum_share <= 1.0:
        raise ValueError(f"minimum_share must be within [0, 1], not {minimum_share}")
    first, second = _ranked(tier1), _ranked(tier2)
    if duplicates := {key for key, _ in first} & {key for key, _ in second}:
        raise ValueError(f"units in both tiers: {sorted(map(repr, duplicates))}")
    if not first and not second:
        return {}
    share1 = 1.0 if not second else 0.0 if not first else tier1_share
    budget1 = budget * share1
    budget2 = budget - budget1
    values = _tier(budget1, first, minimum_share) + _tier(budget2, second, minimum_share)
    keys = [key for key, _ in first] + [key for key, _ in second]
    return dict(zip(keys, _exact(values, budget), strict=True))


def uniform(budget: float, keys: Iterable[K]) -> dict[K, float]:
    """Equal seconds per key, in key order, summing exactly to `budget` (`--allocation uniform`)."""
    _check_budget(budget)
    ordered = _ranked([(key, 0.0) for key in keys])
    if not ordered:
        return {}
    values = [budget / len(ordered)] * len(ordered)
    return dict(zip([key for key, _ in ordered], _exact(values, budget), strict=True))


# ---------------------------------------------------------------- helpers


def _check_budget(budget: float) -> None:
    if not math.isfinite(budget) or budget < 0:
        raise ValueError(f"the budget must be a finite number of seconds >= 0, not {budget}")


def _ranked(tier: Iterable[tuple[K, float]]) -> list[tuple[K, float]]:
    """Highest score first, ties by key (by repr when keys do not compare); scores checked."""
    entries = list(tier)
    keys = [key for key, _ in entries]
    if len(set(keys)) != len(keys):
        raise ValueError("a unit appears twice in one tier")
    for key, score in entries:
        if not math.isfinite(score) or score < 0:
            raise ValueError(f"the score of {key!r} must be finite and >= 0, not {score}")
    try:
        return sorted(entries, key=lambda entry: (-entry[1], entry[0]))
    except TypeError:  # keys of mixed or unordered types
        return sorted(entries, key=lambda entry: (-entry[1], repr(entry[0])))


def _tier(budget: float, tier: list[tuple[K, float]], minimum_share: float) -> list[float]:
    """Minimum plus score-proportional shares of one tier's budget (before exact rounding)."""
    if not tier:
        return []
    count = len(tier)
    total = math.fsum(score for _, score in tier)
    if total == 0.0:
        return [budget / count] * count
    floor = budget * minimum_share / count
    variable = budget * (1.0 - minimum_share)
    return [floor + variable * (score / total) for _, score in tier]


def _exact(values: list[float], budget: float) -> list[float]:
    """`values` rounded onto the grid of `ulp(budget)`, the last one taking the remainder.

    Floating-point shares rarely add up to the budget, and nudging one share cannot always
    fix that (ties-to-even can step over the budget). On the grid every share and every
    partial sum up to the budget is representable, so any summation (left to right,
    compensated, `math.fsum`) is exact and gives the budget itself. Each share moves by less
    than one ulp of the budget (about 2e-16 of it).
    """
    quantum = math.ulp(budget)  # a power of two: the divisions and products below are exact
    total = int(budget / quantum)
    steps = [int(max(0.0, value) / quantum) for value in values]
    excess = sum(steps[:-1]) - total
    while excess > 0:  # the others' float shares overshoot by rounding: the largest gives back
        largest = max(range(len(steps) - 1), key=lambda index: steps[index])
        taken = min(excess, steps[largest])
        steps[largest] -= taken
        excess -= taken
    steps[-1] = total - sum(steps[:-1])
    return [step * quantum for step in steps]
