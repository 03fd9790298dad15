"""When exploring has exhausted the change: the budget is a ceiling, not a target.

A fuzzer's saturation rule, made conservative. Exploring stops before its deadline once further
exploring is unlikely to find more:

- nothing has progressed for a while: no changed line or branch out of one newly run, no new
  candidate difference, nothing new for the techniques that watch the change (a path through the
  changed code not taken before, a changed condition come closer to its boundary), and no search
  toward a boundary under way;
- "a while" is both a time and a count of sequences run, and grows with the time already spent:
  the longer progress took to come, the longer its absence is waited out;
- while some changed line or branch has not run, much longer (it may yet be reached): that
  window is the second tier; so is a change no call enters (module- or class-level code, run at
  import: a table, a compiled pattern), or one whose every line the imports ran (a decorator, a
  default value), whose lines say nothing of what exploring has reached;
- and never before exploring has had a quarter of the budget: a change whose lines all run in the
  first batch may still differ only on an input the thousandth batch draws (measured: two real
  regressions found after 6 s of flat exploring were lost with no such floor);
- nor while seeds are still to come (carved alongside): their wait does not restart the while,
  only what they bring does, so that a carving that brings nothing new costs no extra time.

A run bound by a count of sequences never stops early (it would no longer be reproducible), nor
does one asked not to (`--no-early-stop`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# every changed line and branch out of one run: flat for this long, this share of the time explored
# so far, and this many sequences
STALE_SECONDS = 6.0
STALE_SHARE = 0.5
STALE_SEQUENCES = 500
# some not run: flat for longer, and for most of the time explored so far
UNRUN_STALE_SECONDS = 20.0
UNRUN_STALE_SHARE = 0.67
UNRUN_STALE_SEQUENCES = 1000
MIN_EXPLORE_SHARE = 0.25  # of the budget, explored before any early stop


@dataclass(frozen=True)
class Progress:
    """What exploring has found so far; a change of any count is progress."""

    unrun: int  # changed lines, and branches out of them, no sequence has run yet
    differences: int  # candidate difference groups
    found: int  # the techniques' own count of something new (paths, distances come closer)
    under_way: bool  # a technique is in the middle of a search that should not be cut short
    # seeds are still to come: no stop before they have, but no progress either (not compared)
    waiting: bool = field(default=False, compare=False)


@dataclass
class EarlyStop:
    """Watches exploring's progress after each batch, and says when it is exhausted."""

    budget: float  # the run's, in seconds: exploring lasts at least MIN_EXPLORE_SHARE of it
    clock: Callable[[], float] = time.monotonic
    blind: bool = False  # the change's lines ran at import (or no call enters it): they give no progress
    started: float = field(default=float("nan"))
    last: Progress | None = None
    last_at: float = 0.0  # seconds into exploring of the last progress
    sequences_since: int = 0  # sequences run since the last progress
    stopped_at: float | None = None  # seconds into exploring when it said exhausted

    def __post_init__(self) -> None:
        if math.isnan(self.started):
            self.started = self.clock()

    def observe(self, progress: Progress, sequences: int) -> None:
        """A batch of `sequences` ran and its replays were compared: `progress` is where exploring
        stands."""
        if progress != self.last or progress.under_way:
            self.last_at, self.sequences_since = self._now(), 0
        else:
            self.sequences_since += sequences
        self.last = progress

    def exhausted(self) -> bool:
        """Whether exploring should stop now (once said, it stays said)."""
        if self.stopped_at is not None:
            return True
        if self.last is None or self.last.waiting:
            return False
        now = self._now()
        if now < MIN_EXPLORE_SHARE * self.budget:
            return False
        seconds, share, sequences = (
            (STALE_SECONDS, STALE_SHARE, STALE_SEQUENCES) if self.last.unrun == 0 and not self.blind
            else (UNRUN_STALE_SECONDS, UNRUN_STALE_SHARE, UNRUN_STALE_SEQUENCES))
        flat = now - self.last_at
        if flat >= max(seconds, share * now) and self.sequences_since >= sequences:
            self.stopped_at = now
            return True
        return False

    def why(self) -> str:
        """What the report says of the stop."""
        assert self.stopped_at is not None and self.last is not None
        what = ("the changed lines run at import, so what exploring reached is not seen in them"
                if self.blind and self.last.unrun == 0
                else "every changed line and branch out of one had run" if self.last.unrun == 0
                else f"{self.last.unrun} changed line(s) or branch(es) had not run, and no progress came")
        return (f"{what}, and nothing new was found in the last {self.stopped_at - self.last_at:.0f} s and "
                f"{self.sequences_since} sequences")

    def _now(self) -> float:
        return self.clock() - self.started
