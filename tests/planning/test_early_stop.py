"""Tests for `difforacle.generator.planning.early_stop`: when exploring has exhausted the change.
End to end: tests/end_to_end/test_early_stop.py."""

from __future__ import annotations

from difforacle.generator.planning.early_stop import (
    MIN_EXPLORE_SHARE,
    STALE_SECONDS,
    STALE_SEQUENCES,
    UNRUN_STALE_SECONDS,
    EarlyStop,
    Progress,
)

ALL_RUN = Progress(unrun=0, differences=0, found=3, under_way=False)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _watch(progress: Progress, seconds: float, batches: int, clock: Clock, stop: EarlyStop,
           sequences: int = 50) -> bool:
    """`batches` batches of the same progress over `seconds`; whether it said exhausted."""
    for _ in range(batches):
        clock.now += seconds / batches
        stop.observe(progress, sequences)
        if stop.exhausted():
            return True
    return False


def test_exploring_stops_once_nothing_new_comes_for_long_enough() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    stop.observe(ALL_RUN, 50)
    assert not _watch(ALL_RUN, STALE_SECONDS - 1, 20, clock, stop)
    assert _watch(ALL_RUN, 2, 2, clock, stop)
    assert stop.stopped_at is not None and stop.exhausted()  # once said, it stays said
    assert "every changed line and branch out of one had run" in stop.why()


def test_progress_of_any_kind_restarts_the_wait() -> None:
    for progress in (Progress(0, 1, 3, False), Progress(0, 0, 4, False), Progress(0, 0, 3, True)):
        clock = Clock()
        stop = EarlyStop(0.0, clock)
        stop.observe(ALL_RUN, 50)
        assert not _watch(ALL_RUN, STALE_SECONDS - 1, 20, clock, stop)
        stop.observe(progress, 50)
        assert not _watch(progress if progress.under_way else ALL_RUN, STALE_SECONDS - 1, 20, clock, stop)


def test_a_search_under_way_is_never_cut_short() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    assert not _watch(Progress(0, 0, 0, True), 10 * STALE_SECONDS, 200, clock, stop)


def test_the_wait_grows_with_the_time_progress_took_to_come() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    for found in range(30):  # something new every second for 30 s
        clock.now += 1
        stop.observe(Progress(0, 0, found, False), 50)
    # flat for as long as progress took: 30 s, half of the 60 s explored by then
    assert not _watch(Progress(0, 0, 29, False), 29, 29, clock, stop)
    assert _watch(Progress(0, 0, 29, False), 2, 2, clock, stop)


def test_slow_sequences_are_waited_out_by_count_as_well() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    stop.observe(ALL_RUN, 1)
    assert not _watch(ALL_RUN, 3 * STALE_SECONDS, 30, clock, stop, sequences=STALE_SEQUENCES // 60)
    assert _watch(ALL_RUN, 10 * STALE_SECONDS, 100, clock, stop, sequences=STALE_SEQUENCES // 60)


def test_changed_code_not_run_yet_is_waited_for_longer() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    unrun = Progress(unrun=2, differences=0, found=3, under_way=False)
    stop.observe(unrun, 50)
    assert not _watch(unrun, UNRUN_STALE_SECONDS - 1, 40, clock, stop)
    assert _watch(unrun, 20, 40, clock, stop)
    assert "2 changed line(s) or branch(es) had not run" in stop.why()


def test_a_change_no_call_enters_is_waited_out_as_long_as_unrun_lines() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock, blind=True)  # a module-level table: its lines ran at import
    stop.observe(ALL_RUN, 50)
    assert not _watch(ALL_RUN, UNRUN_STALE_SECONDS - 1, 40, clock, stop)
    assert _watch(ALL_RUN, 20, 40, clock, stop)
    assert "the changed lines run at import" in stop.why()


def test_exploring_lasts_a_share_of_the_budget_whatever_the_progress() -> None:
    clock = Clock()
    stop = EarlyStop(60.0, clock)
    stop.observe(ALL_RUN, 50)
    floor = MIN_EXPLORE_SHARE * 60.0
    assert not _watch(ALL_RUN, floor - 1, 40, clock, stop)  # flat all along, but too soon
    assert _watch(ALL_RUN, 2, 2, clock, stop)


def test_seeds_still_to_come_hold_the_stop_without_restarting_the_wait() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    stop.observe(ALL_RUN, 50)
    waiting = Progress(0, 0, 3, False, waiting=True)
    # flat for long enough, but carved seeds are still to come: no stop
    assert not _watch(waiting, 10 * STALE_SECONDS, 400, clock, stop)
    # they came and brought nothing new: the wait was not restarted by them, so exploring stops at once
    assert _watch(ALL_RUN, 0.01, 1, clock, stop)
    assert stop.stopped_at is not None and stop.stopped_at - stop.last_at > 10 * STALE_SECONDS - 1


def test_what_seeds_bring_restarts_the_wait() -> None:
    clock = Clock()
    stop = EarlyStop(0.0, clock)
    stop.observe(ALL_RUN, 50)
    assert not _watch(Progress(0, 0, 3, False, waiting=True), 2 * STALE_SECONDS, 80, clock, stop)
    brought = Progress(0, 0, 5, False)  # new paths through the changed code
    stop.observe(brought, 50)
    assert not _watch(brought, STALE_SECONDS - 1, 20, clock, stop)
