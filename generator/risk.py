"""Schwa-style defect scores per unit (function, method, class, module) from the git history before base.

A regression is most likely where code changed often and recently, where bugs were fixed
recently, and where authors new to the code worked recently (Schwa; Perera et al., "Defect
Prediction Guided Search-Based Software Testing", ASE 2020). The scores rank the units a
pull request changes so the test budget goes first to the likely-defective ones
(`generator.allocation`).

Pipeline, each step usable on its own:

- `read_history`: the last `window` commits reachable from base on the first-parent line,
  each diffed against its first parent with zero context and mapped to AST units
  (`CommitTouches`). Per-commit results are cached in a JSON file per repository, so a later
  run only reads commits it has not seen.
- `fold_in_pr`: the pull request's own commits appended as the newest revisions (t = 1).
- `score`: time-weighted revisions, fixes and new authors per unit, following renames.
- `score_history`: all three, timed, as a `RiskTable` that ranks units.

Units are `(path, qualname)` as in `generator.model.Unit`; `<module>` is the whole file (a
roll-up, as Schwa's file level), and a class includes its methods: a line changed in
`Cache.get` touches `Cache.get`, `Cache` and `<module>`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import tempfile
import time
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from .changes import MODULE, Span, diff_lines, parse_spans, python_path
from .model import Unit

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

UnitKey = tuple[str, str]  # (repository-relative posix path, qualname)
_U = TypeVar("_U", Unit, UnitKey)

WINDOW = 500  # commits; the paper found 500 the most accurate of 50, 100, 500, 1000 and all
TIME_RANGE = 0.4  # Schwa's default TR: the sigmoid's midpoint sits at t = 2/3

# Word-bounded, unlike Schwa's raw substring search (which counts "prefix", "debugger",
# "closest"): fix/fixes/fixed/fixing, bug(s), bugfix, defect, regression, hotfix, a
# conventional-commit `fix:` / `fix(scope)!:` subject, and reverts.
FIX_PATTERN = re.compile(
    r"""
      \b(?: fix(?:e[sd]|ing)? | bugs? | bugfix(?:es)? | defects? | regressions? | hotfix(?:es)? )\b
    | \A\s*fix(?:\([^)\n]*\))?!?:
    | \A\s*revert\b
    | \bthis\ reverts\ commit\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

_CACHE_FORMAT = 1  # bump when the record layout, the unit mapping or FIX_PATTERN changes
_CACHE_MIN_ENTRIES = 5000  # the cache keeps at least this many commits before pruning to the last run's
_GIT_CHUNK = 1000  # commits per `git log` call (keeps the command line short)
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
_BRANCH_SEPARATORS = re.compile(r"[/_.\-+]+")


# ---------------------------------------------------------------- formulas


def is_fix(message: str) -> bool:
    """True when a commit message (or PR title) says it fixes a bug or reverts a commit."""
    return bool(FIX_PATTERN.search(message))


def branch_is_fix(branch: str) -> bool:
    """`fix/parser`, `bugfix-12`, `hotfix_login`: branch separators count as word breaks."""
    return is_fix(_BRANCH_SEPARATORS.sub(" ", branch))


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
class CommitTouches:
    """What one commit did to Python units: the cacheable, parameter-free part of the analysis.

    `touches` are paths on the commit's side with the qualnames changed there (always
    including `<module>`); `renames` are (old, new) paths; `deleted` are removed files.
    """

    sha: str
    time: int  # committer time, seconds since the epoch
    email: str  # author email (after .mailmap), lowercased
    fix: bool
    touches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    deleted: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "time": self.time,
            "email": self.email,
            "fix": self.fix,
            "touches": {path: list(qualnames) for path, qualnames in self.touches},
            "renames": [list(pair) for pair in self.renames],
            "deleted": list(self.deleted),
        }

    @staticmethod
    def from_json(sha: str, data: dict) -> CommitTouches:
        """Raises (KeyError, TypeError, ValueError, AttributeError) on a malformed record."""
        touches = tuple((str(path), tuple(map(str, names))) for path, names in data["touches"].items())
        renames = tuple((str(old), str(new)) for old, new in data["renames"])
        if not isinstance(data["fix"], bool):
            raise TypeError("fix")
        return CommitTouches(
            sha, int(data["time"]), str(data["email"]), data["fix"], touches, renames,
            tuple(map(str, data["deleted"])),
        )


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
) -> RiskTable:
    """Defect scores of every unit touched in the window before base (and by the PR, if given)."""
    started = time.perf_counter()
    reader = CommitReader(repo, cache_dir=cache_dir, cache=cache)
    history = read_history(repo, base_sha, window=window, reader=reader)
    if pr is not None:
        history = fold_in_pr(history, repo, base_sha, pr, reader=reader)
    reader.save()
    units = score(history, weights=weights, time_range=time_range)
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
    if window is not None and window < 1:
        raise ValueError(f"window must be at least 1 commit, not {window}")
    own_reader = reader is None
    reader = reader or CommitReader(repo)
    limit = [f"--max-count={window}"] if window is not None else []
    shas = repo.git.rev_list("--first-parent", *limit, base_sha).split()[::-1]  # oldest first
    read_before, cached_before = reader.read_count, reader.cached_count
    commits = reader.read(shas)
    if own_reader:
        reader.save()
    times = [commit.time for commit in commits]
    oldest, newest = min(times, default=0), max(times, default=0)
    span = newest - oldest
    entries = [
        HistoryEntry(commit, (commit.time - oldest) / span if span > 0 else 1.0, commit.fix)
        for commit in commits
    ]
    return History(
        entries, reader.read_count - read_before, reader.cached_count - cached_before, len(entries)
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
    bases = repo.merge_base(base_sha, pr.head_sha)
    if not bases:
        raise ValueError(f"{base_sha[:12]} and {pr.head_sha[:12]} have no merge base")
    shas = repo.git.rev_list(
        "--first-parent", "--no-merges", "--reverse", f"{bases[0].hexsha}..{pr.head_sha}"
    ).split()
    read_before, cached_before = reader.read_count, reader.cached_count
    commits = reader.read(shas)
    if own_reader:
        reader.save()
    pr_fix = is_fix(pr.title) or branch_is_fix(pr.branch)
    entries = [HistoryEntry(commit, 1.0, commit.fix or pr_fix) for commit in commits]
    return History(
        [*history.entries, *entries],
        history.commits_read + reader.read_count - read_before,
        history.commits_cached + reader.cached_count - cached_before,
        history.window_commits,
        history.pr_commits + len(entries),
    )


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


# ---------------------------------------------------------------- reading commits


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/difforacle`, else `~/.cache/difforacle`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "difforacle"


class CommitReader:
    """Reads commits' unit touches from git in batches, through a per-repository JSON cache.

    The cache is keyed by commit sha, which fixes both the content and the first parent, so
    an entry never goes stale; `_CACHE_FORMAT` invalidates it when the analysis changes. An
    unreadable or malformed cache is ignored (and rewritten); a cache that cannot be written
    only costs time on the next run.
    """

    def __init__(self, repo: git.Repo, *, cache_dir: Path | None = None, cache: bool = True) -> None:
        self.repo = repo
        self.path: Path | None = None
        if cache:
            folder = cache_dir if cache_dir is not None else default_cache_dir()
            identity = str(Path(repo.common_dir).resolve()).encode("utf-8", "surrogateescape")
            self.path = folder / f"risk-{hashlib.sha256(identity).hexdigest()[:16]}.json"
        self._cached: dict[str, dict] = self._load()
        self._used: dict[str, CommitTouches] = {}
        self._new = 0
        self._spans: dict[str, tuple[Span, ...] | None] = {}  # by blob sha: each blob parsed once
        self.read_count = 0
        self.cached_count = 0

    def read(self, shas: Sequence[str]) -> list[CommitTouches]:
        """The commits' touches in the given order: from the cache when there, else from git."""
        found: dict[str, CommitTouches] = {}
        missing: dict[str, None] = {}  # ordered set
        for sha in shas:
            if sha in found or sha in missing:
                continue
            record = self._from_cache(sha)
            if record is None:
                missing[sha] = None
            else:
                found[sha] = record
        self.cached_count += len(found)
        pending = list(missing)
        for start in range(0, len(pending), _GIT_CHUNK):
            chunk = pending[start : start + _GIT_CHUNK]
            found.update(self._from_git(chunk))
        self.read_count += len(missing)
        self._new += len(missing)
        self._used.update(found)
        return [found[sha] for sha in shas]

    def save(self) -> None:
        """Write the cache atomically (temporary file + rename) when commits were read from git."""
        if self.path is None or not self._new:
            return
        commits = {**self._cached, **{sha: record.to_json() for sha, record in self._used.items()}}
        if len(commits) > max(_CACHE_MIN_ENTRIES, 4 * len(self._used)):
            commits = {sha: record.to_json() for sha, record in self._used.items()}
        data = json.dumps({"format": _CACHE_FORMAT, "commits": commits}, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(data)
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError:
            return  # read-only home, full disk: the analysis is still right, only slower next time
        self._cached, self._new = commits, 0

    # -- cache

    def _load(self) -> dict[str, dict]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT:
            return {}
        commits = data.get("commits")
        return commits if isinstance(commits, dict) else {}

    def _from_cache(self, sha: str) -> CommitTouches | None:
        if sha in self._used:
            return self._used[sha]
        data = self._cached.get(sha)
        if not isinstance(data, dict):
            return None
        try:
            return CommitTouches.from_json(sha, data)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # one bad record: read that commit again

    # -- git

    def _from_git(self, shas: Sequence[str]) -> Iterator[tuple[str, CommitTouches]]:
        """Two git calls for many commits: their metadata, then their first-parent diffs (-M, zero context).

        `git diff-tree --stdin` is given each commit with its first parent explicitly, so no
        history simplification can hide a commit (`git log -- '*.py'` drops commits that leave
        Python files alone, and merges identical to their second parent).
        """
        raw = self.repo.git.log(
            "--no-walk=unsorted",
            "--no-show-signature",
            "--format=%x00%x01%H%x00%P%x00%ct%x00%aE%x00%B",
            *shas,
            stdout_as_string=False,
        )
        metadata: dict[str, tuple[str, int, str, bool]] = {}
        for chunk in raw.decode("utf-8", errors="surrogateescape").split("\x00\x01")[1:]:
            sha, parents, committed, email, message = chunk.split("\x00", 4)
            first_parent = parents.split()[0] if parents.split() else ""
            metadata[sha] = (first_parent, int(committed), email.strip().lower(), is_fix(message))
        patches = self._patches([(sha, metadata[sha][0]) for sha in shas])
        for sha in shas:
            _, committed, email, fix = metadata[sha]
            touches, renames, deleted = self._map_patch(patches.get(sha, ""))
            yield sha, CommitTouches(sha, committed, email, fix, touches, renames, deleted)

    def _patches(self, pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
        """The zero-context diff of each commit against the given parent (none: the root), Python only."""
        with tempfile.TemporaryFile() as stdin:
            stdin.write("".join(f"{sha} {parent}".rstrip() + "\n" for sha, parent in pairs).encode())
            stdin.seek(0)
            raw = self.repo.git(c="core.quotepath=off").diff_tree(
                "--stdin",
                "--root",
                "--patch",
                "-M",
                "--unified=0",
                "--full-index",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-relative",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                "--format=%x00%x01%H%x00",
                "--",
                "*.py",
                istream=stdin,
                stdout_as_string=False,
                strip_newline_in_stdout=False,
            )
        patches: dict[str, str] = {}
        for chunk in raw.decode("utf-8", errors="surrogateescape").split("\x00\x01")[1:]:
            sha, patch = chunk.split("\x00", 1)
            patches[sha] = patch
        return patches

    def _map_patch(
        self, patch: str
    ) -> tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, str], ...], tuple[str, ...]]:
        """Added lines map to units of the commit's blob, removed lines to units of the parent's."""
        try:
            patched_files = PatchSet(patch)
        except UnidiffParseError:
            return (), (), ()
        touches: dict[str, set[str]] = {}
        renames: list[tuple[str, str]] = []
        deleted: list[str] = []
        for patched in patched_files:
            old, new = python_path(patched.source_file), python_path(patched.target_file)
            if new is None:
                if old is not None:
                    deleted.append(old)
                continue
            if old is not None and old != new:
                renames.append((old, new))
            if patched.is_binary_file:
                continue
            removed, added = diff_lines(patched)
            if not removed and not added:
                continue  # pure rename or mode change
            blobs = _INDEX.search("".join(patched.patch_info))
            if blobs is None:
                continue
            new_spans = self._spans_of(blobs.group(2))
            if new_spans is None:
                continue  # the commit's side does not parse: skip the file
            qualnames = {MODULE, *_hit(new_spans, added)}
            if removed and old is not None:
                qualnames.update(_hit(self._spans_of(blobs.group(1)) or (), removed))
            touches.setdefault(new, set()).update(qualnames)
        return (
            tuple((path, tuple(sorted(names))) for path, names in sorted(touches.items())),
            tuple(renames),
            tuple(deleted),
        )

    def _spans_of(self, blob: str) -> tuple[Span, ...] | None:
        import git

        if blob not in self._spans:
            try:
                source = self.repo.odb.stream(bytes.fromhex(blob)).read()
            except (ValueError, OSError, git.GitCommandError, git.BadObject):
                self._spans[blob] = None
            else:
                self._spans[blob] = parse_spans(source)
        return self._spans[blob]


def _hit(spans: Iterable[Span], lines: Iterable[int]) -> set[str]:
    """Qualnames of every span containing a changed line: the unit and its enclosing classes."""
    ordered = sorted(lines)
    hit: set[str] = set()
    for span in spans:
        index = bisect_left(ordered, span.start)
        if index < len(ordered) and ordered[index] <= span.end:
            hit.add(span.qualname)
    return hit
