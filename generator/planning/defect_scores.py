"""Schwa-style defect scores per unit (function, method, class, module) from the git history before base.

A regression is most likely where code changed often and recently, where bugs were fixed
recently, and where authors new to the code worked recently (Schwa; Perera et al., "Defect
Prediction Guided Search-Based Software Testing", ASE 2020). The scores rank the units a
pull request changes so the test budget goes first to the likely-defective ones
(`allocation`).

Pipeline, each step usable on its own:

- `read_history`: the last `window` commits reachable from base on the first-parent line,
  each diffed against its first parent with zero context and mapped to AST units
  (`history`). Per-commit results are cached in a JSON file per repository, so a
  later run only reads commits it has not seen.
- `fold_in_pr`: the pull request's own commits appended as the newest revisions (t = 1).
- `follow_history`: both, for the units of a few files only (a pull request's), reading only
  those files' history; their scores are the same.
- `score`: time-weighted revisions, fixes and new authors per unit, following renames.
- `score_history`: reading and scoring, timed, as a `RiskTable` that ranks units.

Units are `(path, qualname)` as in the changes' `Unit`; `<module>` is the whole file (a
roll-up, as Schwa's file level), and a class includes its methods: a line changed in
`Cache.get` touches `Cache.get`, `Cache` and `<module>`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..changes.model import Unit
from .history import (
    CommitReader,
    CommitTouches,
    ListedCommit,
    PathReader,
    branch_is_fix,
    is_fix,
    list_commits,
)

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

UnitKey = tuple[str, str]  # (repository-relative posix path, qualname)
_U = TypeVar("_U", Unit, UnitKey)

WINDOW = 500  # commits; the paper found 500 the most accurate of 50, 100, 500, 1000 and all
TIME_RANGE = 0.4  # Schwa's default TR: the sigmoid's midpoint sits at t = 2/3


# ---------------------------------------------------------------- formulas


def twr(t: float, time_range: float = TIME_RANGE) -> float:
    """Time-weighted risk of an event at normalized time t (0 oldest, 1 newest), Schwa's Eq. (1)."""
    return 1.0 / (1.0 + math.exp(-12.0 * t + 2.0 + (1.0 - time_range) * 10.0))


@dataclass(frozen=True)
class Weights:
    """Weights of revisions, fixes and new authors in the score (Schwa's defaults)."""

    revisions: float = 0.25
    fixes: float = 0.5
    authors: float = 0.25


# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class HistoryEntry:
    """A commit placed in the model: its normalized time and whether it counts as a fix."""

    commit: CommitTouches
    t: float
    fix: bool


@dataclass
class History:
    """Commits oldest first, ready for `score`; plus how many were read from git vs. the cache."""

    entries: list[HistoryEntry] = field(default_factory=list)
    commits_read: int = 0
    commits_cached: int = 0
    window_commits: int = 0
    pr_commits: int = 0


@dataclass(frozen=True)
class PullRequestInfo:
    """The pull request to fold in: its head, and the title and branch that may say "fix"."""

    head_sha: str
    title: str = ""
    branch: str = ""


@dataclass(frozen=True)
class UnitRisk:
    """Counts (revisions, fix commits, new authors) and the time-weighted score and probability."""

    revisions: int = 0
    fixes: int = 0
    new_authors: int = 0
    score: float = 0.0
    probability: float = 0.0


_NO_RISK = UnitRisk()


@dataclass
class RiskTable:
    """Unit risks plus the cost of computing them (the engine charges `seconds` to the budget)."""

    units: dict[UnitKey, UnitRisk]
    seconds: float = 0.0
    commits_read: int = 0
    commits_cached: int = 0
    window_commits: int = 0
    pr_commits: int = 0

    def get(self, unit: Unit | UnitKey) -> UnitRisk:
        """The unit's risk; a unit without history (new code) has zero risk."""
        return self.units.get(_key(unit), _NO_RISK)

    def rank(self, units: Iterable[_U]) -> list[_U]:
        """Most likely defective first; ties by (path, qualname) so the order is reproducible."""
        return sorted(units, key=lambda unit: (-self.get(unit).score, _key(unit)))

    def ranked(self) -> list[tuple[UnitKey, UnitRisk]]:
        """Every unit with history, most likely defective first."""
        return sorted(self.units.items(), key=lambda item: (-item[1].score, item[0]))

    def to_json(self) -> dict:
        return {
            "seconds": self.seconds,
            "commits_read": self.commits_read,
            "commits_cached": self.commits_cached,
            "window_commits": self.window_commits,
            "pr_commits": self.pr_commits,
            "units": [
                {"path": path, "qualname": qualname, "revisions": risk.revisions, "fixes": risk.fixes,
                 "new_authors": risk.new_authors, "score": risk.score, "probability": risk.probability}
                for (path, qualname), risk in self.ranked()
            ],
        }


def _key(unit: Unit | UnitKey) -> UnitKey:
    return (unit.path, unit.qualname) if isinstance(unit, Unit) else unit


# ---------------------------------------------------------------- entry points


def score_history(
    repo: git.Repo,
    base_sha: str,
    *,
    window: int | None = WINDOW,
    cache_dir: Path | None = None,
    cache: bool = True,
    pr: PullRequestInfo | None = None,
    weights: Weights = Weights(),
    time_range: float = TIME_RANGE,
    paths: Collection[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> RiskTable:
    """Defect scores of the units touched in the window before base (and by the PR, if given).

    With `paths`, only the history of those files (as they are at the end: head's paths when
    the PR is folded in) is read, and the table holds their units only, scored as the whole
    history scores them (`follow_history`); `progress` is called with the commits read so far.
    Without, every Python file's (`read_history`, for ranking a whole repository).
    """
    started = time.perf_counter()
    if paths is None:
        reader = CommitReader(repo, cache_dir=cache_dir, cache=cache)
        history = read_history(repo, base_sha, window=window, reader=reader)
        if pr is not None:
            history = fold_in_pr(history, repo, base_sha, pr, reader=reader)
        reader.save()
        units = score(history, weights=weights, time_range=time_range)
    else:
        followed = frozenset(paths)
        path_reader = PathReader(repo, cache_dir=cache_dir, cache=cache, progress=progress)
        history = follow_history(repo, base_sha, followed, window=window, pr=pr, reader=path_reader)
        path_reader.save()
        units = {key: risk for key, risk in score(history, weights=weights, time_range=time_range).items()
                 if key[0] in followed}
    return RiskTable(
        units, time.perf_counter() - started, history.commits_read, history.commits_cached,
        history.window_commits, history.pr_commits,
    )


def read_history(
    repo: git.Repo, base_sha: str, *, window: int | None = WINDOW, reader: CommitReader | None = None
) -> History:
    """The window's commits oldest first, with t normalized over the window's commit times.

    Follows the first parent only: a merged side branch counts once, as its merge commit
    (diffed against the first parent), which is how the change landed on the main line.
    """
    own_reader = reader is None
    reader = reader or CommitReader(repo)
    shas = [commit.sha for commit in _window(repo, base_sha, window)]
    read_before, cached_before = reader.read_count, reader.cached_count
    commits = reader.read(shas)
    if own_reader:
        reader.save()
    return History(
        _placed(commits, [commit.time for commit in commits]), reader.read_count - read_before,
        reader.cached_count - cached_before, len(commits),
    )


def fold_in_pr(
    history: History,
    repo: git.Repo,
    base_sha: str,
    pr: PullRequestInfo,
    *,
    reader: CommitReader | None = None,
) -> History:
    """The history with the PR's commits (merge-base..head, first parent, no merges) appended at t = 1.

    The PR is about to land, so its commits are the newest revisions; their authors count as
    new authors of units they had not touched; when the PR's title or branch says "fix",
    every PR commit counts as a fix of the units it changes. Merges inside the PR are
    skipped: merging base into the branch brings base's changes, not the PR's.
    """
    own_reader = reader is None
    reader = reader or CommitReader(repo)
    shas = [commit.sha for commit in _pr_commits(repo, base_sha, pr)]
    read_before, cached_before = reader.read_count, reader.cached_count
    commits = reader.read(shas)
    if own_reader:
        reader.save()
    entries = _pr_entries(commits, pr)
    return History(
        [*history.entries, *entries],
        history.commits_read + reader.read_count - read_before,
        history.commits_cached + reader.cached_count - cached_before,
        history.window_commits,
        history.pr_commits + len(entries),
    )


def follow_history(
    repo: git.Repo,
    base_sha: str,
    paths: frozenset[str],
    *,
    window: int | None = WINDOW,
    pr: PullRequestInfo | None = None,
    reader: PathReader | None = None,
) -> History:
    """`read_history` and `fold_in_pr` for the units of `paths` alone, reading only what they need.

    The pull request's commits are read first, for `paths` (the files at its head); the window
    then for the files they came from (renames followed back, `PathReader`). Only the commits
    that changed those files are entries, but t is normalized over every commit of the window,
    as `read_history` does, so their units score exactly as the whole history scores them.
    """
    own_reader = reader is None
    reader = reader or PathReader(repo)
    listed = _window(repo, base_sha, window)
    proposed = _pr_commits(repo, base_sha, pr) if pr is not None else []
    read_before, cached_before = reader.read_count, reader.cached_count
    if reader.progress is not None:
        reader.progress(0)
    pr_part = reader.read(proposed, paths)
    window_part = reader.read(listed, pr_part.followed)
    if own_reader:
        reader.save()
    entries = _placed(window_part.commits, [commit.time for commit in listed])
    if pr is not None:
        entries += _pr_entries(pr_part.commits, pr)
    return History(entries, reader.read_count - read_before, reader.cached_count - cached_before,
                   len(listed), len(proposed))


def _window(repo: git.Repo, base_sha: str, window: int | None) -> list[ListedCommit]:
    """The last `window` commits of base's first-parent line (all of it for None), oldest first."""
    if window is not None and window < 1:
        raise ValueError(f"window must be at least 1 commit, not {window}")
    limit = [f"--max-count={window}"] if window is not None else []
    return list_commits(repo, "--first-parent", *limit, base_sha)[::-1]


def _pr_commits(repo: git.Repo, base_sha: str, pr: PullRequestInfo) -> list[ListedCommit]:
    """The PR's own commits, oldest first: merge-base..head on the first-parent line, no merges."""
    bases = repo.merge_base(base_sha, pr.head_sha)
    if not bases:
        raise ValueError(f"{base_sha[:12]} and {pr.head_sha[:12]} have no merge base")
    return list_commits(repo, "--first-parent", "--no-merges", "--reverse",
                        f"{bases[0].hexsha}..{pr.head_sha}")


def _placed(commits: Iterable[CommitTouches], times: Sequence[int]) -> list[HistoryEntry]:
    """The commits at t normalized over `times`, the window's commit times (t = 1 for a window
    whose commits all share one time)."""
    oldest, newest = min(times, default=0), max(times, default=0)
    span = newest - oldest
    return [HistoryEntry(commit, (commit.time - oldest) / span if span > 0 else 1.0, commit.fix)
            for commit in commits]


def _pr_entries(commits: Iterable[CommitTouches], pr: PullRequestInfo) -> list[HistoryEntry]:
    """The PR's commits at t = 1; all fixes when its title or branch says "fix"."""
    pr_fix = is_fix(pr.title) or branch_is_fix(pr.branch)
    return [HistoryEntry(commit, 1.0, commit.fix or pr_fix) for commit in commits]


# ---------------------------------------------------------------- scoring


@dataclass
class _Tally:
    revisions: int = 0
    fixes: int = 0
    new_authors: int = 0
    revisions_twr: float = 0.0
    fixes_twr: float = 0.0
    authors_twr: float = 0.0
    emails: set[str] = field(default_factory=set)

    def merge(self, other: _Tally) -> None:
        """Two files' histories joined by a rename onto an existing path."""
        self.revisions += other.revisions
        self.fixes += other.fixes
        self.new_authors += other.new_authors
        self.revisions_twr += other.revisions_twr
        self.fixes_twr += other.fixes_twr
        self.authors_twr += other.authors_twr
        self.emails |= other.emails


def score(
    history: History,
    *,
    weights: Weights = Weights(),
    time_range: float = TIME_RANGE,
) -> dict[UnitKey, UnitRisk]:
    """Schwa's Eq. (2) and (3) per unit, replaying the history oldest first.

    Renames move a file's history to its new path (merged if the path exists), deletions drop
    it (as Schwa does), so the keys are the paths at the last commit of the history.
    """
    files: dict[str, dict[str, _Tally]] = {}
    for entry in history.entries:
        commit = entry.commit
        for path in commit.deleted:
            files.pop(path, None)
        for old, new in commit.renames:
            moved = files.pop(old, None)
            if moved is None:
                continue
            target = files.setdefault(new, {})
            for qualname, tally in moved.items():
                target.setdefault(qualname, _Tally()).merge(tally)
        weight = twr(entry.t, time_range)
        for path, qualnames in commit.touches:
            units = files.setdefault(path, {})
            for qualname in qualnames:
                tally = units.setdefault(qualname, _Tally())
                tally.revisions += 1
                tally.revisions_twr += weight
                if entry.fix:
                    tally.fixes += 1
                    tally.fixes_twr += weight
                if commit.email not in tally.emails:
                    tally.emails.add(commit.email)
                    tally.new_authors += 1
                    tally.authors_twr += weight
    risks: dict[UnitKey, UnitRisk] = {}
    for path, units in sorted(files.items()):
        for qualname, tally in sorted(units.items()):
            value = (
                weights.revisions * tally.revisions_twr
                + weights.fixes * tally.fixes_twr
                + weights.authors * tally.authors_twr
            )
            risks[(path, qualname)] = UnitRisk(
                tally.revisions, tally.fixes, tally.new_authors, value, 1.0 - math.exp(-value)
            )
    return risks
