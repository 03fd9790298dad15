"""When each phase of a run stops: by the time budget, or (reproducible runs) by a count of sequences.

A run bound by time explores while the budget lasts, keeping a reserve for confirming,
minimizing and reproducing what it found. A run bound by a count of sequences
(`--max-sequences N`) explores exactly N sequences and then confirms every group and
shrinks each test by a fixed number of checks: the same inputs give the same report
whatever the machine's speed. Every such decision is made here, and every share of the budget
and every timeout of the host is declared here, in one place (the stages below this one are
handed theirs by the engine).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# ---------------------------------------------------------------- shares of the budget

EXPLORE_RESERVE = 0.1  # kept from exploring for confirmation and rendering (at least 1.5 s)
MINIMIZE_SHARE = 0.15  # by default, for shrinking the tests of confirmed differences (`--minimize-share`)
MINIMIZE_RESERVE_CAP = 0.25  # at most this is kept from exploring for it: a short budget keeps exploring
CARVE_SHARE = 0.2  # at most, for running the project's tests to carve seed sequences
SOLVER_AFTER = 0.3  # of exploration (its time, or its sequences) before the solver is asked
SOLVER_SHARE = 0.15  # wall time for all of the solver's calls, in a run bound by time
SOLVER_CPU_SHARE = 0.3  # of a solver call's wall time, CrossHair's analysis (CPU seconds): the rest starts it

# ---------------------------------------------------------------- seconds

REPRODUCE_SECONDS = 2.0  # kept for running the suggested tests with pytest on both commits
CONFIRM_OVERRUN = 5.0  # past the budget that confirming may take while nothing is confirmed yet
CALL_TIMEOUT = (0.25, 1.0)  # a call that runs longer hangs: a sixtieth of the budget, within these
SEQUENCE_CALLS = 5  # a sequence may take this many call timeouts ...
SEQUENCE_TIMEOUT = 2.0  # ... and at least this long
CONFIRM_CALL_TIMEOUT = 2.0  # confirmation waits at least this long (and 4 call timeouts) for a call ...
CONFIRM_SEQUENCE_TIMEOUT = 4.0  # ... and this long for a sequence: a slow call on a loaded machine is no hang
WORKER_START_TIMEOUT = 120.0  # for a worker to import the changed modules and list the catalog
WORKER_REQUEST_TIMEOUT = 60.0  # for a request, plus the per-sequence watchdog of each of its sequences
WORKER_QUIT_TIMEOUT = 5.0  # for a worker to end when asked, before it is killed
OVERRUN_LIMIT = 10.0  # no phase of a run bound by time goes past its budget by more than this
BUILD_TIMEOUT = 600.0  # per command that builds compiled extensions: a Rust crate's first build takes minutes
CARVE_TEST_TIMEOUT = 2.0  # per test run to carve: a slow test is cut, the others still run
REPRODUCIBLE_CARVE_SECONDS = 120.0  # a reproducible run's bound on carving, which otherwise has no time limit
REPRODUCE_TEST_TIMEOUT = 10.0  # per suggested test, in the reproduction check
REPRODUCE_RUN_TIMEOUT = 120.0  # for the reproduction check's whole pytest run on one commit
SOLVER_CALL_SECONDS = (2.0, 20.0)  # wall seconds per function asked about: at least (else none), at most
SOLVER_REPRODUCIBLE_CALL_SECONDS = 12.0  # per function in a run bound by a count of sequences
SOLVER_PATH_SECONDS = 1.0  # CPU seconds per path, at most: one hard path must not eat the call

# ---------------------------------------------------------------- counts (reproducible runs)

REPRODUCIBLE_MINIMIZE_CHECKS = 120  # candidates per finding when the run is bound by sequences


def call_timeout(budget: float) -> float:
    """A call that runs longer is a hang: 1 s (Randoop uses 5 s) but no more than a sixtieth of
    the budget, down to 0.25 s, so that a few hanging operations cannot eat a short budget."""
    low, high = CALL_TIMEOUT
    return min(high, max(low, budget / 60))


def sequence_timeout(call: float) -> float:
    """How long a sequence may run, given the per-call timeout."""
    return max(SEQUENCE_TIMEOUT, SEQUENCE_CALLS * call)


def confirm_timeouts(call: float) -> tuple[float, float]:
    """The call and sequence timeouts of confirmation, given exploration's call timeout: patient,
    so that a call that merely ran slow on a loaded machine does not become a "hang" difference."""
    timeout = max(CONFIRM_CALL_TIMEOUT, 4 * call)
    return timeout, max(CONFIRM_SEQUENCE_TIMEOUT, SEQUENCE_CALLS * timeout)


@dataclass
class Deadline:
    budget: float  # seconds for the whole run
    max_sequences: int | None = None  # reproducible runs: explore exactly this many sequences
    minimize_share: float = MINIMIZE_SHARE  # of the budget, for shrinking the tests of confirmed differences
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

    def carving_seconds(self, share: float) -> float:
        """Seconds for carving: `share` of the budget; a reproducible run carves all the selected
        tests, under a generous bound only (where a time limit cut them short, the seeds, and so
        the report, would depend on the machine's speed)."""
        seconds = self.budget * share
        return max(seconds, REPRODUCIBLE_CARVE_SECONDS) if self.reproducible else seconds

    def seconds_to_end(self) -> float | None:
        """What a phase may still take: the budget and OVERRUN_LIMIT past it, less what went (at
        least a second); None in a reproducible run, which is bound by counts, not by time."""
        if self.reproducible:
            return None
        return max(1.0, self.budget + OVERRUN_LIMIT - self.elapsed())

    def bounded(self, timeout: float) -> float:
        """`timeout`, but never past OVERRUN_LIMIT after the budget in a run bound by time."""
        left = self.seconds_to_end()
        return timeout if left is None else min(timeout, left)

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
