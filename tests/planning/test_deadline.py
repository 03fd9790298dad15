"""Tests for `difforacle.generator.planning.deadline`: when exploring, confirming and minimizing
stop, by time or by counts."""

from __future__ import annotations

import math

import pytest

from difforacle.generator.planning.deadline import (
    CONFIRM_OVERRUN,
    REPRODUCE_SECONDS,
    REPRODUCIBLE_MINIMIZE_CHECKS,
    Deadline,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def deadline_at(budget: float, elapsed: float, max_sequences: int | None = None) -> Deadline:
    clock = Clock()
    deadline = Deadline(budget, max_sequences, minimize_share=0.15, clock=clock)
    clock.now += elapsed
    return deadline


@pytest.mark.parametrize(("elapsed", "found_some", "stop"), [
    (10.0, False, False), (10.0, True, False),
    (30.0 - REPRODUCE_SECONDS + 0.1, False, False),  # nothing confirmed yet: keep going past the budget
    (30.0 - REPRODUCE_SECONDS + 0.1, True, True),  # something to report: keep time to reproduce it
    (30.0 + CONFIRM_OVERRUN + 0.1, False, True),  # but never long past the budget
])
def test_confirmation_stops_by_the_budget(elapsed: float, found_some: bool, stop: bool) -> None:
    assert deadline_at(30.0, elapsed).confirmation_over(found_some) is stop


def test_reproducible_runs_confirm_everything_and_minimize_by_checks() -> None:
    deadline = deadline_at(30.0, 100.0, max_sequences=500)
    assert deadline.reproducible and deadline.confirmation_over(True) is False
    assert deadline.minimization_until() == math.inf
    assert deadline.minimization_checks == REPRODUCIBLE_MINIMIZE_CHECKS
    assert deadline_at(30.0, 0.0).minimization_checks is None


@pytest.mark.parametrize(("elapsed", "candidates", "over"), [
    (20.0, False, False),
    (27.0, False, True),  # 10% of the budget (3 s) is kept for confirming and rendering
    (21.0, True, True),  # with something to minimize and reproduce, the reserve grows (to 3 + 6.5 s)
    (20.0, True, False),
])
def test_exploration_keeps_a_reserve_that_grows_once_something_differs(
        elapsed: float, candidates: bool, over: bool) -> None:
    assert deadline_at(30.0, elapsed).exploration_over(0, 0.0, candidates) is over


def test_exploration_counts_the_last_replay_round_it_must_still_wait_for() -> None:
    assert not deadline_at(30.0, 20.0).exploration_over(0, 6.0, False)
    assert deadline_at(30.0, 20.0).exploration_over(0, 7.5, False)


def test_a_reproducible_run_explores_exactly_its_count_in_growing_batches() -> None:
    deadline = deadline_at(1.0, 100.0, max_sequences=125)
    assert not deadline.exploration_over(120, 0.0, True) and deadline.exploration_over(125, 0.0, False)
    assert [deadline.batch_size(50, done) for done in (0, 10, 20, 40, 120)] == [10, 10, 20, 40, 5]
    assert deadline_at(30.0, 0.0).batch_size(50, 1000) == 50


def test_minimization_ends_before_the_time_kept_for_reproduction() -> None:
    early = deadline_at(30.0, 5.0)
    assert early.minimization_until() == early.clock() + 0.15 * 30.0
    late = deadline_at(30.0, 27.0)
    assert late.minimization_until() == late.started + 30.0 - REPRODUCE_SECONDS
