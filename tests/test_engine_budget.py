"""How the engine splits its budget between exploring, confirming, minimizing and reproducing."""

from __future__ import annotations

import time

import pytest

from difforacle.generator.engine import CONFIRM_OVERRUN, REPRODUCE_SECONDS, Options, _Session
from difforacle.generator.model import Report


def _session(budget: float, elapsed: float, max_sequences: int | None = None) -> _Session:
    options = Options(budget=budget, max_sequences=max_sequences)
    return _Session(None, None, None, options, time.monotonic() - elapsed, Report("a", "b"))  # type: ignore[arg-type]


@pytest.mark.parametrize(("elapsed", "found_some", "stop"), [
    (10.0, False, False), (10.0, True, False),
    (30.0 - REPRODUCE_SECONDS + 0.1, False, False),  # nothing confirmed yet: keep going past the budget
    (30.0 - REPRODUCE_SECONDS + 0.1, True, True),  # something to report: keep time to reproduce it
    (30.0 + CONFIRM_OVERRUN + 0.1, False, True),  # but never long past the budget
])
def test_confirmation_stops_by_the_budget(elapsed: float, found_some: bool, stop: bool) -> None:
    assert _session(30.0, elapsed)._out_of_time(found_some) is stop


def test_reproducible_runs_confirm_everything() -> None:
    assert _session(30.0, 100.0, max_sequences=500)._out_of_time(True) is False
