"""Tests for `difforacle.generator.generation.bloodhound`: Bloodhound's coverage weights over
operations (the budget quota over units is `planning.quota`'s)."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from difforacle.generator.generation.bloodhound import ALPHA, REFRESH_EVERY, Bloodhound, P, uncovered_ratios

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
