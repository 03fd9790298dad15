"""A small, deterministic example repository for ``difforacle demo``.

``build_demo_repo`` creates a git repository holding a pure-Python package ``durations``:
a base commit on ``main`` and a branch ``feature`` with one commit on top that introduces
two real regressions and one behaviour-preserving edit.  Commit dates, author and
committer are fixed, so the same code always produces the same commit shas.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

DEMO_DESCRIPTION = (
    "A tiny package `durations` (parse_duration/format_duration and a sliding-window RateMeter).\n"
    "The `feature` commit makes '1h' parse as 3660 seconds and lets RateMeter keep one sample too\n"
    "many; it also renames a local variable in format_duration, which changes no behaviour."
)

BASE_BRANCH = "main"
HEAD_BRANCH = "feature"

_AUTHOR = ("Demo Author", "demo@example.invalid")  # name, email
# Git's internal date format (unix time and UTC offset): 2024-01-15 10:00 and 2024-01-16 15:30 UTC.
_BASE_DATE = "1705312800 +0000"
_HEAD_DATE = "1705419000 +0000"


def _edit(text: str, *replacements: tuple[str, str]) -> str:
    """Apply exact one-occurrence replacements (fails loudly if the base text drifts)."""
    for old, new in replacements:
        if text.count(old) != 1:
            raise AssertionError(f"demo edit does not match exactly once: {old!r}")
        text = text.replace(old, new)
    return text


_INIT_PY = '''\
"""Compact durations ("2h30m") and a sliding-window rate meter."""

from durations.meter import RateMeter
from durations.parse import format_duration, parse_duration

__all__ = ["RateMeter", "format_duration", "parse_duration"]
'''

_PARSE_BASE = '''\
"""Parse and format compact durations such as "90s", "15m", "1h", "2h30m" or "1d"."""

import re

_UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}
_DURATION = re.compile(r"(?:\\d+[smhd])+")
_PART = re.compile(r"(\\d+)([smhd])")


def _unit_seconds(unit: str) -> int:
    """Number of seconds in one ``unit`` (one of the keys of ``_UNITS``)."""
    if unit not in _UNITS:
        raise ValueError(f"unknown unit: {unit!r}")
    if unit == "s":
        return 1
    if unit == "m":
        return 60
    if unit == "h":
        return 60 * 60
    return 24 * 60 * 60


def parse_duration(text: str) -> int:
    """Return the number of seconds in ``text``, e.g. ``parse_duration("2h30m") == 9000``."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__}")
    compact = text.strip().lower()
    if not _DURATION.fullmatch(compact):
        raise ValueError(f"invalid duration: {text!r}")
    return sum(int(count) * _unit_seconds(unit) for count, unit in _PART.findall(compact))


def format_duration(seconds: int) -> str:
    """Inverse of ``parse_duration``: ``format_duration(9000) == "2h30m"``."""
    if seconds < 0:
        raise ValueError(f"negative duration: {seconds}")
    if seconds == 0:
        return "0s"
    # Largest unit first; units with a zero count are left out.
    parts = []
    rest = seconds
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
'''

# Regression 1: one hour is computed as 60 * 61 seconds (parse_duration("1h") == 3660).
# Behaviour-preserving edit: a local variable renamed and a comment reworded in format_duration.
_PARSE_HEAD = _edit(
    _PARSE_BASE,
    ("        return 60 * 60\n", "        return 60 * 61\n"),
    (
        "    # Largest unit first; units with a zero count are left out.\n",
        "    # Emit units from largest to smallest, skipping those with a zero count.\n",
    ),
    ("    parts = []\n", "    pieces = []\n"),
    ("            parts.append(", "            pieces.append("),
    ('    return "".join(parts)\n', '    return "".join(pieces)\n'),
)

_METER_BASE = '''\
"""A meter that keeps the most recent samples of a rate (e.g. bytes per tick)."""


class RateMeter:
    """Keeps the last ``window`` samples and reports their total and mean."""

    def __init__(self, window: int = 10) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.window = window
        self._samples: list[int] = []

    def add(self, amount: int) -> None:
        """Record one sample, dropping the oldest one when the window is full."""
        if amount < 0:
            raise ValueError(f"negative amount: {amount}")
        if len(self._samples) >= self.window:
            del self._samples[0]
        self._samples.append(amount)

    def reset(self) -> None:
        """Forget all samples."""
        self._samples.clear()

    def size(self) -> int:
        """Number of samples currently in the window."""
        return len(self._samples)

    @property
    def total(self) -> int:
        """Sum of the samples in the window."""
        return sum(self._samples)

    def mean(self) -> float:
        """Mean of the samples in the window (0.0 when there are none)."""
        if not self._samples:
            return 0.0
        return self.total / len(self._samples)
'''

# Regression 2: the trim condition is off by one, so the window keeps window + 1 samples.
_METER_HEAD = _edit(
    _METER_BASE,
    ("        if len(self._samples) >= self.window:\n", "        if len(self._samples) > self.window:\n"),
)

_BASE_FILES = {
    "durations/__init__.py": _INIT_PY,
    "durations/parse.py": _PARSE_BASE,
    "durations/meter.py": _METER_BASE,
}
_HEAD_FILES = {
    "durations/parse.py": _PARSE_HEAD,
    "durations/meter.py": _METER_HEAD,
}

_BASE_MESSAGE = "Add durations: parse/format compact durations and a RateMeter\n"
_HEAD_MESSAGE = (
    "Tidy durations helpers\n"
    "\n"
    "Simplify the hour conversion, streamline RateMeter.add and clarify format_duration.\n"
)


def _write_and_commit(repo: git.Repo, files: dict[str, str], message: str, date: str) -> str:
    import git

    author = git.Actor(*_AUTHOR)
    root = Path(repo.working_tree_dir)
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="\n")
    repo.index.add(sorted(files))
    commit = repo.index.commit(
        message,
        author=author,
        committer=author,
        author_date=date,
        commit_date=date,
        skip_hooks=True,
    )
    return commit.hexsha


def build_demo_repo(path: Path) -> tuple[str, str]:
    """Create the demo repository at ``path`` and return ``(base_sha, head_sha)``.

    ``main`` points at the base commit, ``feature`` at the head commit (one commit on top of
    base); ``main`` is left checked out.  ``path`` must not exist or be an empty folder.
    """
    import git

    path = Path(path)
    if path.exists() and any(path.iterdir()):
        raise FileExistsError(f"demo repository path is not empty: {path}")
    path.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(path)
    # Independent of the git version's default branch and of any global configuration.
    repo.git.symbolic_ref("HEAD", f"refs/heads/{BASE_BRANCH}")
    with repo.config_writer() as config:
        config.set_value("user", "name", _AUTHOR[0])
        config.set_value("user", "email", _AUTHOR[1])
        config.set_value("commit", "gpgsign", "false")
        config.set_value("core", "autocrlf", "false")

    base_sha = _write_and_commit(repo, _BASE_FILES, _BASE_MESSAGE, _BASE_DATE)

    feature = repo.create_head(HEAD_BRANCH, base_sha)
    feature.checkout()
    head_sha = _write_and_commit(repo, _HEAD_FILES, _HEAD_MESSAGE, _HEAD_DATE)

    repo.heads[BASE_BRANCH].checkout()
    repo.close()
    return base_sha, head_sha
