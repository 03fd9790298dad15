"""Budget allocation (`difforacle.generator.planning.allocation`): exact sums for any number of
units, the 90/10 tiers, minimum shares, uniform."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from difforacle.generator.planning.allocation import allocate, uniform

budgets = st.floats(min_value=0.0, max_value=1e7, allow_nan=False, allow_infinity=False)
scores = st.floats(min_value=0.0, max_value=50.0, allow_nan=False, allow_infinity=False)


def tiers(max_size: int) -> st.SearchStrategy[list[tuple[str, float]]]:
    return st.lists(st.tuples(st.text("abcdef", min_size=1, max_size=4), scores), max_size=max_size,
                    unique_by=lambda entry: entry[0])


@pytest.mark.parametrize("count", [1, 2, 3, 7, 100, 1000])
@pytest.mark.parametrize("budget", [30.0, 0.1, 1.0, 7.3, 1e6 / 3, 2.0**-20])
def test_the_sum_is_exact_for_one_two_and_many_units(count: int, budget: float) -> None:
    tier1 = [(f"u{i:04}", (i * 0.37) % 1.0) for i in range(count)]
    tier2 = [(f"v{i:04}", (i * 0.11) % 1.0) for i in range(count // 2)]
    assert sum(allocate(budget, tier1, tier2).values()) == budget
    assert sum(allocate(budget, tier1).values()) == budget
    assert sum(uniform(budget, [key for key, _ in tier1 + tier2]).values()) == budget


@settings(max_examples=300, deadline=None)
@given(budget=budgets, tier1=tiers(40), tier2=tiers(40),
       tier1_share=st.floats(0.0, 1.0), minimum_share=st.floats(0.0, 1.0))
def test_the_sum_is_exact_for_random_budgets_and_tiers(
    budget: float, tier1: list[tuple[str, float]], tier2: list[tuple[str, float]], tier1_share: float,
    minimum_share: float,
) -> None:
    tier2 = [("2" + key, score) for key, score in tier2]  # distinct from tier 1's keys
    allocation = allocate(budget, tier1, tier2, tier1_share=tier1_share, minimum_share=minimum_share)
    assert set(allocation) == {key for key, _ in tier1 + tier2}
    if allocation:
        assert sum(allocation.values()) == budget
        assert math.fsum(allocation.values()) == budget  # exact whatever the summation
    assert all(value >= 0 for value in allocation.values())
    share = uniform(budget, [key for key, _ in tier1 + tier2])
    if share:
        assert sum(share.values()) == budget
        assert max(share.values()) - min(share.values()) <= 1e-9 * max(budget, 1.0)


@settings(max_examples=200, deadline=None)
@given(budget=st.floats(min_value=1.0, max_value=1e6), tier1=tiers(30).filter(bool))
def test_every_unit_gets_its_minimum_share(budget: float, tier1: list[tuple[str, float]]) -> None:
    allocation = allocate(budget, tier1, minimum_share=0.5)
    floor = 0.5 * budget / len(tier1)
    assert all(value >= floor * (1 - 1e-9) for value in allocation.values())


def test_one_unit_gets_the_whole_budget() -> None:
    assert allocate(30.0, [("f", 0.0)]) == {"f": 30.0}
    assert allocate(30.0, [], [("g", 0.7)]) == {"g": 30.0}
    assert uniform(30.0, ["f"]) == {"f": 30.0}


def test_ninety_percent_goes_to_changed_units_and_ten_to_impacted_ones() -> None:
    allocation = allocate(100.0, [("a", 0.9), ("b", 0.1)], [("c", 0.5), ("d", 0.0), ("e", 0.2)])
    assert allocation["a"] + allocation["b"] == pytest.approx(90.0)
    assert allocation["c"] + allocation["d"] + allocation["e"] == pytest.approx(10.0)
    custom = allocate(100.0, [("a", 1.0)], [("c", 1.0)], tier1_share=0.75)
    assert custom == pytest.approx({"a": 75.0, "c": 25.0})


def test_shares_follow_scores_above_the_minimum() -> None:
    allocation = allocate(90.0, [("a", 3.0), ("b", 1.0), ("c", 0.0)], [], minimum_share=0.5)
    # 45 s split equally (15 each), 45 s by score 3:1:0
    assert allocation == pytest.approx({"a": 15.0 + 33.75, "b": 15.0 + 11.25, "c": 15.0})
    equal = allocate(90.0, [("a", 0.0), ("b", 0.0), ("c", 0.0)])
    assert equal == pytest.approx({"a": 30.0, "b": 30.0, "c": 30.0})
    everything_by_score = allocate(90.0, [("a", 2.0), ("b", 1.0)], minimum_share=0.0)
    assert everything_by_score == pytest.approx({"a": 60.0, "b": 30.0})
    flat = allocate(90.0, [("a", 2.0), ("b", 1.0)], minimum_share=1.0)
    assert flat == pytest.approx({"a": 45.0, "b": 45.0})


def test_empty_tiers() -> None:
    assert allocate(10.0, [], []) == {}
    assert uniform(10.0, []) == {}
    only_tier2 = allocate(10.0, [], [("x", 1.0), ("y", 1.0)])
    assert only_tier2 == {"x": 5.0, "y": 5.0}
    only_tier1 = allocate(10.0, [("x", 1.0), ("y", 3.0)], [])
    assert sum(only_tier1.values()) == 10.0 and only_tier1["y"] > only_tier1["x"]


def test_order_is_by_tier_then_score_then_key() -> None:
    allocation = allocate(10.0, [("b", 0.5), ("a", 0.5), ("c", 0.9)], [("z", 0.0), ("y", 0.0)])
    assert list(allocation) == ["c", "a", "b", "y", "z"]
    assert allocation["a"] == allocation["b"]
    keys = [("pkg/m.py", "g"), ("pkg/m.py", "<module>"), ("a.py", "f")]
    assert list(uniform(9.0, keys)) == sorted(keys)
    assert allocate(1.0, [(("a.py", "f"), 0.2), (("a.py", "e"), 0.2)]) == allocate(
        1.0, [(("a.py", "e"), 0.2), (("a.py", "f"), 0.2)])


def test_zero_budget_and_invalid_input() -> None:
    assert allocate(0.0, [("a", 1.0), ("b", 0.0)]) == {"a": 0.0, "b": 0.0}
    for budget in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="budget"):
            allocate(budget, [("a", 1.0)])
        with pytest.raises(ValueError, match="budget"):
            uniform(budget, ["a"])
    with pytest.raises(ValueError, match="score"):
        allocate(1.0, [("a", -0.1)])
    with pytest.raises(ValueError, match="score"):
        allocate(1.0, [("a", math.nan)])
    with pytest.raises(ValueError, match="both tiers"):
        allocate(1.0, [("a", 1.0)], [("a", 1.0)])
    with pytest.raises(ValueError, match="twice"):
        allocate(1.0, [("a", 1.0), ("a", 0.5)])
    with pytest.raises(ValueError, match="tier1_share"):
        allocate(1.0, [("a", 1.0)], tier1_share=1.5)
    with pytest.raises(ValueError, match="minimum_share"):
        allocate(1.0, [("a", 1.0)], minimum_share=-0.1)
