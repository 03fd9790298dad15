"""Tests for `difforacle.generator.planning.quota`: the budget quota over units, picked by their
shares and by the time their sequences measurably cost."""

from __future__ import annotations

from collections import Counter

import pytest

from difforacle.generator.planning.quota import MIN_COST, UnitQuota

# ---------------------------------------------------------------- UnitQuota


@pytest.mark.parametrize("shares", [
    {"only": 1.0},
    {"a": 0.5, "b": 0.5},
    {"a": 0.9 * 0.7, "b": 0.9 * 0.3, "c": 0.05, "d": 0.05},
    {f"u{i}": (i + 1) / 55 for i in range(10)},
])
def test_picks_follow_the_shares_within_one_pick(shares: dict[str, float]) -> None:
    quota = UnitQuota(shares)
    total = 1000
    counts = Counter(quota.next() for _ in range(total))
    for unit, share in shares.items():
        assert abs(counts[unit] - share * total) <= 1, (unit, counts[unit], share * total)


def test_units_without_share_are_never_picked_and_allowed_restricts_the_choice() -> None:
    quota = UnitQuota({"a": 0.8, "b": 0.2, "none": 0.0})
    assert "none" not in {quota.next() for _ in range(50)}
    assert {quota.next({"b"}) for _ in range(10)} == {"b"}
    assert quota.next({"none"}) is None
    assert not UnitQuota({"x": 0.0})


def test_measured_costs_share_time_not_picks() -> None:
    """Equal shares, but `slow` costs 100 times what `fast` costs: once measured, `fast` gets
    about 100 picks for each of `slow`'s, so that both spend about the same time."""
    quota = UnitQuota({"fast": 0.5, "slow": 0.5})
    spent: Counter = Counter()
    for _ in range(2020):
        unit = quota.next()
        cost = 1000.0 if unit == "slow" else 10.0
        quota.observe(unit, cost)
        spent[unit] += cost
    assert quota.picks["fast"] > 50 * quota.picks["slow"], quota.picks
    assert 0.8 < spent["fast"] / spent["slow"] < 1.25, spent


def test_costs_below_the_per_sequence_floor_count_as_the_floor() -> None:
    quota = UnitQuota({"a": 0.5, "b": 0.5})
    quota.observe("a", 0.0)
    quota.observe("b", MIN_COST)
    quota.observe("ghost", 1e9)  # a unit without a share is ignored
    assert quota.cost("a") == quota.cost("b") == MIN_COST
    counts = Counter(quota.next() for _ in range(100))
    assert counts == {"a": 50, "b": 50}
