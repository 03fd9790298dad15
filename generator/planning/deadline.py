"""When each phase of a run stops: by the time budget, or (reproducible runs) by a count of sequences.

A run bound by time explores while the budget lasts, keeping a reserve for confirming,
minimizing and reproducing what it found. A run bound by a count of sequences
(`--max-sequences N`) explores exactly N sequences and then confirms every group and
shrinks each test by a fixed number of checks: the same inputs give the same report
whatever the machine's speed. Every such decision is made here, in one place.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

REPRODUCE_SECONDS = 2.0  # kept for running the suggested tests with pytest on both commits
CONFIRM_OVERRUN = 5.0  # seconds past the budget that confirming may take while nothing is confirmed yet
REPRODUCIBLE_MINIMIZE_CHECKS = 120  # candidates per finding when the run is bound by sequences
EXPLORE_RESERVE = 0.1  # of the budget, for confirmation and rendering (at least 1.5 s)
MINIMIZE_RESERVE_CAP = 0.25  # of the budget: a short budget keeps exploring


@dataclass
class Deadline:
    budget: float  # seconds for the whole run
    max_sequences: int | None = None  # reproducible runs: explore exactly this many sequences
    minimize_share: float = 0.15  # of the budget, for shrinking the tests of confirmed differences
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=math.nan)

    def __post_init__(self) -> None:
        if math.isnan(self.started):
            self.started = self.clock()

    @property
    def reproducible(self) -> bool:
        """Bound by a count of sequences (and of minimization checks), not by time."""
        return self.max_sequences is not None

    def elapsed(self) -> float:
        return self.clock() - self.started

    def set_aside(self, seconds: float) -> None:
        """Time the budget does not pay for (building the project's extensions before testing it)."""
        self.started += seconds

    # ------------------------------------------------------------ exploring

    def batch_size(self, preferred: int, sequences: int) -> int:
        """Small batches first (the explorer learns which operations hang or fail before it
        commits a full batch to them), never past the count of a reproducible run."""
        left = self.max_sequences - sequences if self.max_sequences is not None else preferred
        return min(preferred, max(10, sequences), left)

    def exploration_over(self, sequences: int, replay_seconds: float, have_candidates: bool) -> bool:
        """Stop exploring: the count is reached, or what remains is the reserve for the later phases
        (larger once something differs: minimizing and reproducing it)."""
        if self.max_sequences is not None:
            return sequences >= self.max_sequences
        reserve = max(1.5, EXPLORE_RESERVE * self.budget)
        if have_candidates:
            reserve += min(self.minimize_share * self.budget + REPRODUCE_SECONDS,
                           MINIMIZE_RESERVE_CAP * self.budget)
        return self.elapsed() + replay_seconds + reserve >= self.budget

    def share_explored(self, sequences: int) -> float:
        """How far the run has got: its sequences of a reproducible run's count, else its time."""
        if self.max_sequences is not None:
            return sequences / self.max_sequences if self.max_sequences else 1.0
        return self.elapsed() / self.budget if self.budget > 0 else 1.0

    def side_seconds(self, share: float) -> float | None:
        """Seconds for a side task of exploring (`share` of the budget, never the reserve of the later
        phases); None in a reproducible run, whose side tasks do fixed work instead."""
        if self.max_sequences is not None:
            return None
        left = self.budget - self.elapsed() - max(1.5, EXPLORE_RESERVE * self.budget)
        return max(0.0, min(share * self.budget, left))

    # ------------------------------------------------------------ confirming and minimizing

    def confirmation_over(self, found_some: bool) -> bool:
        """Confirmation goes on while the budget lasts (keeping time to reproduce), and past it
        only until a first finding, and never more than CONFIRM_OVERRUN seconds past it.
        A reproducible run confirms everything, however long it takes."""
        if self.reproducible:
            return False
        elapsed = self.elapsed()
        return (elapsed >= self.budget + CONFIRM_OVERRUN
                or (found_some and elapsed >= self.budget - REPRODUCE_SECONDS))

    def minimization_until(self) -> float:
        """The clock time by which all minimization must end (infinite for a reproducible run)."""
        if self.reproducible:
            return math.inf
        return min(self.clock() + self.minimize_share * self.budget,
                   self.started + self.budget - REPRODUCE_SECONDS)

    @property
    def minimization_checks(self) -> int | None:
        """Candidates checked per finding at most (None: bound by time only)."""
        return REPRODUCIBLE_MINIMIZE_CHECKS if self.reproducible else None
