"""The path memo end to end: a lock whose changed branch needs its code pressed in order is
recorded as a rare path and found (over seeds 0-11 at 600 sequences the memo finds it 7 times,
without it 8: no gain shown there)."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.engine_parts import WITH_PATHS
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components

LOCK = '''\
class Lock:
    """A combination lock: 7, 3 and 5, in that order, open it."""

    CODE = (7, 3, 5)

    def __init__(self) -> None:
        self.entered = 0

    def press(self, digit: int) -> str:
        if self.entered >= len(self.CODE):
            return "open"
        if digit == self.CODE[self.entered]:
            self.entered += 1
            return "click"
        self.entered = 0
        return "reset"
'''


@pytest.mark.slow
def test_a_rare_path_through_a_changed_branch_is_recorded_and_found(builder: RepoBuilder) -> None:
    """Head opens the lock one digit later: only a lock given the whole code tells them apart."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/lock.py": LOCK},
            {"pkg/lock.py": LOCK.replace("self.entered >= len", "self.entered > len")})
    # a configured lock (`lock.entered = 3`) opens without its code, and volume calls (`press(7 + i)`
    # 129 times) reach nothing here but take a share of the 600 sequences: both left out, the memo is
    # what is measured
    components = Components.without(["configured", "volume"], enabled=WITH_PATHS.enabled)
    report = run_analyze(builder, max_sequences=600, seed=2, budget=30, components=components)
    [difference] = report.differences  # head reads past the code where base opens
    assert difference.target == "pkg.lock:Lock.press" and "IndexError" in difference.head
    stats = report.stats
    paths = stats.techniques["paths"]
    assert paths["recorded"] > 300 and paths["distinct"] >= 2
    assert 0 < paths["top_share"] < 1 and paths["near_misses"] > 0 and paths["revisited"] > 0
