"""Tests for generator.guidance: Bloodhound's coverage weights and the budget quota over units."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from difforacle.generator.generation.bloodhound import ALPHA, REFRESH_EVERY, Bloodhound, P, uncovered_ratios
from difforacle.generator.planning.quota import MIN_COST, UnitQuota

# ---------------------------------------------------------------- Bloodhound


def test_fresh_weights_follow_the_uncovered_share_of_each_operation() -> None:
    hound = Bloodhound(operation_count=3)
    hound.refresh({"a": 1.0, "b": 0.0})
    # no success yet: the rarity term is 1 for everyone; c reaches no target: Randoop's 0.5
    assert hound.weight("a") == pytest.approx(ALPHA + (1 - ALPHA))
    assert hound.weight("b") == pytest.approx(1 - ALPHA)
    assert hound.weight("c") == pytest.approx(ALPHA * 0.5 + (1 - ALPHA))


def test_successful_operations_weigh_less_at_the_next_refresh() -> None:
    hound = Bloodhound(operation_count=2)
    for _ in range(4):
        hound.success("a")
    hound.success("b")
    hound.refresh({"a": 0.0, "b": 0.0})
    assert hound.weight("a") == pytest.approx(0.0)  # the most successful one
    assert hound.weight("b") == pytest.approx((1 - ALPHA) * (1 - 1 / 4))


def test_each_pick_decays_the_weight_until_the_floor() -> None:
    hound = Bloodhound(operation_count=10)
    hound.refresh({"a": 1.0})
    rng = random.Random(0)
    before = hound.weight("a")
    hound.choose(["a"], rng)
    assert hound.weight("a") == pytest.approx(max(-3 / math.log(1 - P) * P, 1 / math.log(13)) * before)
    for _ in range(50):
        hound.choose(["a"], rng)
    assert hound.weight("a") == pytest.approx(before / math.log(13))  # the floor
    hound.refresh({"a": 1.0})
    assert hound.weight("a") == pytest.approx(before)  # picks are forgotten at a refresh


def test_a_refresh_is_due_after_a_fixed_number_of_kept_sequences() -> None:
    hound = Bloodhound(operation_count=1)
    due = [hound.success("a") for _ in range(REFRESH_EVERY)]
    assert due == [False] * (REFRESH_EVERY - 1) + [True]
    hound.refresh({})
    assert hound.success("a") is False


def test_choice_favours_uncovered_operations_and_is_reproducible() -> None:
    def picks(seed: int) -> list[str]:
        hound = Bloodhound(operation_count=2)
        hound.refresh({"covered": 0.0, "uncovered": 1.0})
        rng = random.Random(seed)
        chosen = []
        for _ in range(200):
            chosen.append(hound.choose(["covered", "uncovered"], rng))
            if len(chosen) % 20 == 0:
                hound.refresh({"covered": 0.0, "uncovered": 1.0})
        return chosen

    assert picks(3) == picks(3)
    counts = Counter(picks(3))
    assert counts["uncovered"] > 3 * counts["covered"]


def test_uncovered_ratios_per_operation() -> None:
    reach = {"a": {1, 2, 3, 4}, "b": {4}, "c": set()}
    assert uncovered_ratios(reach, {2, 4}) == {"a": 0.5, "b": 1.0}


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
