"""What a run is asked to do (`Options`), and what it tells the caller while it works (`Progress`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from .changes.scope import EVERYTHING, Scope
from .generation.techniques import ALL, Components
from .oracle.leaves import EXACT_ENOUGH, FloatPolicy
from .planning.deadline import CARVE_SHARE, MINIMIZE_SHARE
from .planning.defect_scores import WINDOW

READING_HISTORY = "reading history"  # the phase of the defect scores' git history, before importing


@dataclass
class Progress:
    phase: str  # reading history, importing, carving, exploring, confirming, reproducing
    sequences: int = 0
    differences: int = 0  # candidate groups while exploring, confirmed differences after
    elapsed: float = 0.0
    # the report's top-level changed lines, and how many of them ran so far; 0 and 0 until they are
    # measured (once importing is done), and throughout when coverage is not measured
    changed_lines: int = 0
    changed_lines_covered: int = 0
    commits: int = 0  # commits of history read so far, while reading history


@dataclass
class Options:
    budget: float = 60.0
    seed: int = 0
    python: str = field(default_factory=lambda: sys.executable)
    batch_size: int = 50
    call_timeout: float | None = None  # seconds per call; default scales with the budget
    max_sequences: int | None = None  # stop exploring after this many: reproducible, bound by counts
    minimize_share: float = MINIMIZE_SHARE  # of the budget, for shrinking the tests of confirmed differences
    show_unreproduced: bool = False  # also report differences whose pytest test did not reproduce
    allocation: str = "defect"  # how focused generation is shared over units: "defect" or "uniform"
    history_window: int = WINDOW  # commits before base read for the defect scores
    pr_title: str = ""  # a title saying "fix" makes the PR's commits count as fixes; its words are evidence
    pr_body: str = ""  # the pull request's description: evidence of what it means to change
    components: Components = ALL  # generation techniques on (switch one off to measure it)
    floats: FloatPolicy = EXACT_ENOUGH  # when two floats are the same value
    scope: Scope = EVERYTHING  # the files whose changes are tested, the targets whose differences are not
    carve_share: float = CARVE_SHARE  # of the budget, at most, for running the project's tests to carve seeds
    build: tuple[str, ...] = ()  # shell commands that build compiled extensions in each checkout
    pass_env: tuple[str, ...] = ()  # environment variables the project's code may see (`changes.environment`)
    early_stop: bool = True  # exploring may end before its deadline once the change is exhausted
    jobs: int | None = None  # workers exploring on base (None: the usable cores; 1 when reproducible)
    progress: Callable[[Progress], None] | None = None
