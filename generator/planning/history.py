"""What commits did to Python units, read from git: the input of the defect scores (`defect_scores`).

Each commit on the first-parent line is diffed against its first parent with zero context and
the changed lines are mapped onto the AST units of both sides (`CommitTouches`). A line changed
in `Cache.get` touches `Cache.get`, `Cache` and `<module>`. Parsing the blobs is what costs, so
there are two readers:

- `CommitReader` reads whole commits (every Python file), through a per-repository JSON cache
  keyed by commit: for ranking every unit of a repository.
- `PathReader` reads only what commits did to a few files (a pull request's), following
  renames back, through a cache keyed by the commits and files read: its cost follows the pull
  request, not the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from ..changes.units import MODULE, Span, diff_lines, parse_spans, python_path
from ..report.files import write_atomic

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

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
_CACHE_CHUNKS = 2000  # chunks kept in a path cache: those the last runs used (a KB or so each)
_CHUNK = 25  # a chunk of commits starts at a commit whose sha's first 8 hex digits divide by it
_GIT_CHUNK = 1000  # commits per `git log` call (keeps the command line short)
_PROGRESS_EVERY = 100  # commits between two progress calls
_SECTION = re.compile(r"^(?=diff --git )", re.MULTILINE)
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
_BRANCH_SEPARATORS = re.compile(r"[/_.\-+]+")


def is_fix(message: str) -> bool:
    """True when a commit message (or PR title) says it fixes a bug or reverts a commit."""
    return bool(FIX_PATTERN.search(message))


def branch_is_fix(branch: str) -> bool:
    """`fix/parser`, `bugfix-12`, `hotfix_login`: branch separators count as word breaks."""
    return is_fix(_BRANCH_SEPARATORS.sub(" ", branch))


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



def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/difforacle`, else `~/.cache/difforacle`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "difforacle"


@dataclass(frozen=True)
class ListedCommit:
    """A commit as `git rev-list` lists it, before its diff is read."""

    sha: str
    parent: str  # the first parent; "" for a root commit
    time: int  # committer time, seconds since the epoch


def list_commits(repo: git.Repo, *arguments: str) -> list[ListedCommit]:
    """`git rev-list ARGUMENTS` in the order it lists them, each with its first parent and committer time."""
    listed = []
    for line in repo.git.rev_list("--parents", "--timestamp", *arguments).splitlines():
        committed, sha, *parents = line.split()
        listed.append(ListedCommit(sha, parents[0] if parents else "", int(committed)))
    return listed


class CommitReader:
    """Reads commits' unit touches from git in batches, through a per-repository JSON cache.

    The cache is keyed by commit sha, which fixes both the content and the first parent, so
    an entry never goes stale; `_CACHE_FORMAT` invalidates it when the analysis changes. An
    unreadable or malformed cache is ignored (and rewritten); a cache that cannot be written
    only costs time on the next run.
    """

    def __init__(self, repo: git.Repo, *, cache_dir: Path | None = None, cache: bool = True) -> None:
        self.repo = repo
        self.path = _cache_file(repo, cache_dir, "risk") if cache else None
        self._cached: dict[str, dict] = _load_cache(self.path, "commits")
        self._used: dict[str, CommitTouches] = {}
        self._new = 0
        self._mapper = _UnitMapper(repo)
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
        if _save_cache(self.path, "commits", commits):
            self._cached, self._new = commits, 0

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

    def _from_git(self, shas: Sequence[str]) -> Iterator[tuple[str, CommitTouches]]:
        """Two git calls for many commits: their first parents, then their diffs against them (-M)."""
        raw = self.repo.git.log("--no-walk=unsorted", "--no-show-signature", "--format=%H %P", *shas)
        parents = {sha: (rest.split() or [""])[0] for sha, _, rest in
                   (line.partition(" ") for line in raw.splitlines())}
        for diff in _diff_tree(self.repo, [(sha, parents[sha]) for sha in shas], ["*.py"], renames=True):
            mapped = self._mapper.map(diff.patch)
            yield diff.sha, CommitTouches(diff.sha, diff.time, diff.email, diff.fix, mapped.touches,
                                          mapped.renames, mapped.deleted)


@dataclass(frozen=True)
class Segment:
    """What a stretch of history did to a few files: the commits that changed them (oldest first),
    and the files followed at its oldest end (those files, and the files renamed into them)."""

    commits: tuple[CommitTouches, ...]
    followed: frozenset[str]


class PathReader:
    """Reads what commits did to a few files only, following renames back; cached by what was read.

    One `git diff-tree --stdin` pass over the commits, limited to the files (literal paths, no
    rename detection): its cost grows with the commits and those files, not with the
    repository. A commit that adds one of the files is read again over every Python file with
    rename detection, exactly as `CommitReader` reads it, since only the whole commit says
    whether the file is new or renamed, and from where; a rename's source is then followed
    through the older commits, by another pass. Each record keeps only the files followed at
    its commit, which leaves their units' scores as the whole record gives them: a file's
    units gather nothing but its own history and that of the files renamed into it.

    The cache holds chunks of commits, each under its commits and the files followed at its
    newest end (what was read). Chunks end where the commits' shas say (`_CHUNK`), not where
    a window does, so the window of a later base shares all but its newest and oldest chunks
    with an earlier one's, and reads only those. A malformed entry is read again; a cache that
    cannot be written only costs time on the next run. `progress`, if given, is called with
    the count of commits read so far.
    """

    def __init__(self, repo: git.Repo, *, cache_dir: Path | None = None, cache: bool = True,
                 progress: Callable[[int], None] | None = None) -> None:
        self.repo = repo
        self.path = _cache_file(repo, cache_dir, "paths") if cache else None
        self._cached: dict[str, dict] = _load_cache(self.path, "chunks")
        self._used: dict[str, dict] = {}  # the chunks this reader used or read, last used last
        self._new = 0
        self._mapper = _UnitMapper(repo)
        self.progress = progress
        self._streamed = 0  # commits whose diffs have been read, for `progress`
        self.read_count = 0
        self.cached_count = 0

    def read(self, commits: Sequence[ListedCommit], paths: frozenset[str]) -> Segment:
        """The commits' (oldest first) records cut to `paths`, the files at the newest end, and to
        the files renamed into them; chunk by chunk from the newest, a run of chunks the cache
        lacks in one reading."""
        chunks = _chunks(commits)
        followed, parts = paths, []
        newest = len(chunks) - 1
        while newest >= 0:
            cached = self._cached_chunk(commits, chunks[newest], followed)
            if cached is not None:
                parts.append(cached.commits)
                followed = cached.followed
                self.cached_count += chunks[newest][1] - chunks[newest][0]
                newest -= 1
                continue
            oldest = newest  # the run of chunks to read reaches back to the next one the cache has
            while oldest > 0 and self._cached_chunk(commits, chunks[oldest - 1], followed) is None:
                oldest -= 1
            start, stop = chunks[oldest][0], chunks[newest][1]
            found, limit = self._follow(commits[start:stop], followed)
            for first, last in reversed(chunks[oldest:newest + 1]):
                at_end = frozenset(path for path, bound in limit.items() if bound >= last - start)
                at_start = frozenset(path for path, bound in limit.items() if bound >= first - start)
                records = tuple(found[i] for i in range(first - start, last - start) if i in found)
                chunk = Segment(records, at_start)
                self._keep(_chunk_key(commits[first:last], at_end), chunk)
                parts.append(chunk.commits)
            followed = frozenset(limit)
            self.read_count += stop - start
            self._new += 1
            newest = oldest - 1
        return Segment(tuple(record for part in reversed(parts) for record in part), followed)

    def save(self) -> None:
        """Write the cache atomically when chunks were read from git; the chunks used last are kept."""
        if self.path is None or not self._new:
            return
        others = [(key, data) for key, data in self._cached.items() if key not in self._used]
        room = max(0, _CACHE_CHUNKS - len(self._used))
        chunks = dict(others[max(0, len(others) - room):] if room else [])
        chunks.update(self._used)
        if _save_cache(self.path, "chunks", chunks):
            self._cached, self._new = chunks, 0

    def _cached_chunk(self, commits: Sequence[ListedCommit], chunk: tuple[int, int],
                      followed: frozenset[str]) -> Segment | None:
        first, last = chunk
        key = _chunk_key(commits[first:last], followed)
        data = self._used.get(key) or self._cached.get(key)
        segment = _segment_from_json(data, commits[first:last])
        if segment is not None:
            self._keep(key, segment)
        return segment

    def _keep(self, key: str, segment: Segment) -> None:
        self._used.pop(key, None)
        self._used[key] = _segment_to_json(segment)

    def _follow(self, commits: Sequence[ListedCommit],
                paths: frozenset[str]) -> tuple[dict[int, CommitTouches], dict[str, int]]:
        """Pass after pass over the commits, each for the files still to follow in its range: the
        records by index, and each followed file's limit (it is followed in the commits before)."""
        limit = dict.fromkeys(paths, len(commits))
        pending = {path: (0, len(commits)) for path in paths}
        found: dict[int, _Events] = {}
        counted = True  # the first pass reads every commit once: it is the one progress counts
        while pending:
            following, pending = _Following(pending), {}
            start, stop = following.bounds()
            diffs = _diff_tree(self.repo, [(c.sha, c.parent) for c in commits[start:stop]],
                               sorted(following.ranges), renames=False, literal=True)
            added: list[int] = []
            for index, diff in enumerate(self._counted(diffs) if counted else diffs, start):
                mapped = self._mapper.map(diff.patch, following.at(index))
                if mapped.added:
                    added.append(index)  # read again whole, below: new, or renamed from where?
                elif mapped.touches or mapped.renames or mapped.deleted:
                    found.setdefault(index, _Events(diff)).add(mapped)
            counted = False
            again = _diff_tree(self.repo, [(commits[i].sha, commits[i].parent) for i in added], ["*.py"],
                               renames=True)
            for index, diff in zip(added, again, strict=True):
                keep = following.at(index)
                mapped = self._mapper.map(following.sections(diff.patch), keep)
                found.setdefault(index, _Events(diff)).add(mapped)
                for old, new in mapped.renames:
                    if not keep(new):
                        continue  # a followed file renamed away: as good as deleted
                    current = limit.setdefault(old, 0)
                    if current < index:  # follow the source through the commits before this one
                        pending[old] = (pending[old][0] if old in pending else current, index)
                        limit[old] = index
        records = {index: events.record() for index, events in found.items()}
        return {index: record for index, record in records.items() if record is not None}, limit

    def _counted(self, diffs: Iterator[_Diff]) -> Iterator[_Diff]:
        for diff in diffs:
            self._streamed += 1
            if self.progress is not None and self._streamed % _PROGRESS_EVERY == 0:
                self.progress(self._streamed)
            yield diff
        if self.progress is not None and self._streamed % _PROGRESS_EVERY:
            self.progress(self._streamed)


class _Following:
    """The files one pass follows, each in its range [start, stop) of the segment's commits."""

    def __init__(self, ranges: dict[str, tuple[int, int]]) -> None:
        self.ranges = ranges

    def bounds(self) -> tuple[int, int]:
        return min(start for start, _ in self.ranges.values()), max(stop for _, stop in self.ranges.values())

    def at(self, index: int) -> Callable[[str], bool]:
        """Whether a file is followed in the commit at `index`."""
        def followed(path: str) -> bool:
            span = self.ranges.get(path)
            return span is not None and span[0] <= index < span[1]
        return followed

    def sections(self, patch: str) -> str:
        """The file sections of a whole commit's patch that may concern the followed files (a cheap
        superset, so that unidiff parses only those; a quoted path is always kept)."""
        kept = []
        for section in _SECTION.split(patch):
            header = section.partition("\n")[0]
            if header.startswith('diff --git "') or any(path in header for path in self.ranges):
                kept.append(section)
        return "".join(kept)


@dataclass
class _Events:
    """One commit's events on followed files, gathered over the passes that read it."""

    diff: _Diff
    touches: dict[str, set[str]] = field(default_factory=dict)
    renames: dict[tuple[str, str], None] = field(default_factory=dict)  # ordered sets
    deleted: dict[str, None] = field(default_factory=dict)

    def add(self, mapped: _Mapped) -> None:
        for path, qualnames in mapped.touches:
            self.touches.setdefault(path, set()).update(qualnames)
        self.renames.update(dict.fromkeys(mapped.renames))
        self.deleted.update(dict.fromkeys(mapped.deleted))

    def record(self) -> CommitTouches | None:
        """None when nothing happened to a followed file. A file that a pass without rename
        detection saw deleted, and a later pass saw renamed, was renamed."""
        sources = {old for old, _ in self.renames}
        deleted = tuple(path for path in self.deleted if path not in sources)
        if not (self.touches or self.renames or deleted):
            return None
        touches = tuple((path, tuple(sorted(names))) for path, names in sorted(self.touches.items()))
        diff = self.diff
        return CommitTouches(diff.sha, diff.time, diff.email, diff.fix, touches, tuple(self.renames), deleted)


def _chunks(commits: Sequence[ListedCommit]) -> list[tuple[int, int]]:
    """[start, stop) index ranges over the commits (oldest first), each starting at the first commit
    or at one whose sha says so: the same commits make the same chunks, whatever the window."""
    starts = [index for index, commit in enumerate(commits)
              if index == 0 or int(commit.sha[:8], 16) % _CHUNK == 0]
    return list(zip(starts, [*starts[1:], len(commits)], strict=True)) if commits else []


def _chunk_key(commits: Sequence[ListedCommit], followed: frozenset[str]) -> str:
    """What a chunk's reading depends on: its commits and the files followed at its newest end."""
    read = [[commit.sha for commit in commits], sorted(followed)]
    return hashlib.sha256(json.dumps(read).encode()).hexdigest()


def _segment_to_json(segment: Segment) -> dict:
    return {"followed": sorted(segment.followed),
            "commits": {record.sha: record.to_json() for record in segment.commits}}


def _segment_from_json(data: object, commits: Sequence[ListedCommit]) -> Segment | None:
    """The cached segment, in the commits' order; None when missing or malformed (read it again)."""
    if not isinstance(data, dict):
        return None
    try:
        records, followed = data["commits"], data["followed"]
        if not isinstance(records, dict) or not isinstance(followed, list):
            return None
        order = {commit.sha: index for index, commit in enumerate(commits)}
        if not set(records) <= set(order):
            return None
        touched = tuple(CommitTouches.from_json(sha, records[sha]) for sha in sorted(records, key=order.get))
        return Segment(touched, frozenset(map(str, followed)))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


# ---------------------------------------------------------------- git and the cache files


@dataclass(frozen=True)
class _Diff:
    """One commit's header and its patch, as `git diff-tree` wrote them."""

    sha: str
    time: int
    email: str
    fix: bool
    patch: str


def _diff_tree(repo: git.Repo, pairs: Sequence[tuple[str, str]], pathspecs: Sequence[str], *,
               renames: bool, literal: bool = False) -> Iterator[_Diff]:
    """Each commit's zero-context diff against the given parent (none: the root), streamed in order.

    `git diff-tree --stdin` is given each commit with its first parent explicitly, so no
    history simplification can hide a commit (`git log -- PATH` drops merges identical to their
    second parent); `--always` writes a header for every commit, so there is one `_Diff` per
    pair, even for a commit that leaves the paths alone. The pathspecs are paths (`literal`) or
    globs, whatever `GIT_LITERAL_PATHSPECS` the caller's environment has.
    """
    if not pairs:
        return
    with tempfile.TemporaryFile() as stdin:
        stdin.write("".join(f"{sha} {parent}".rstrip() + "\n" for sha, parent in pairs).encode())
        stdin.seek(0)
        process = repo.git(c="core.quotepath=off").diff_tree(
            "--stdin", "--root", "--always", "--patch", "-M" if renames else "--no-renames",
            "--unified=0", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative",
            "--src-prefix=a/", "--dst-prefix=b/", "--format=%x00%x01%H%x00%ct%x00%aE%x00%B%x00",
            "--", *pathspecs, istream=stdin, as_process=True,
            env={"GIT_LITERAL_PATHSPECS": "1" if literal else "0"},
        )
        chunk: list[bytes] = []
        for line in process.stdout:
            if line.startswith(b"\x00\x01") and chunk:
                yield _parse_diff(b"".join(chunk))
                chunk = []
            chunk.append(line)
        process.wait()
    if chunk:
        yield _parse_diff(b"".join(chunk))


def _parse_diff(raw: bytes) -> _Diff:
    text = raw.decode("utf-8", errors="surrogateescape")
    sha, committed, email, message, patch = text[text.index("\x00\x01") + 2:].split("\x00", 4)
    return _Diff(sha, int(committed), email.strip().lower(), is_fix(message), patch)


@dataclass(frozen=True)
class _Mapped:
    """A patch on units: what a `CommitTouches` holds, and the kept files it adds (no source here)."""

    touches: tuple[tuple[str, tuple[str, ...]], ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    deleted: tuple[str, ...] = ()
    added: tuple[str, ...] = ()


class _UnitMapper:
    """Maps patches onto units, parsing each blob once whichever commits show it."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self._spans: dict[str, tuple[Span, ...] | None] = {}  # by blob sha

    def map(self, patch: str, keep: Callable[[str], bool] = lambda path: True) -> _Mapped:
        """Added lines map to units of the commit's blob, removed lines to units of the parent's.

        Only kept files count: a deletion of a kept file, a rename from or to one, the touches of
        one (no blob of another file is parsed).
        """
        try:
            patched_files = PatchSet(patch)
        except UnidiffParseError:
            return _Mapped()
        touches: dict[str, set[str]] = {}
        renames: list[tuple[str, str]] = []
        deleted: list[str] = []
        added_files: list[str] = []
        for patched in patched_files:
            old, new = python_path(patched.source_file), python_path(patched.target_file)
            if new is None:
                if old is not None and keep(old):
                    deleted.append(old)
                continue
            if old is not None and old != new and (keep(old) or keep(new)):
                renames.append((old, new))
            if not keep(new):
                continue
            if old is None:
                added_files.append(new)
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
        return _Mapped(
            tuple((path, tuple(sorted(names))) for path, names in sorted(touches.items())),
            tuple(renames), tuple(deleted), tuple(added_files),
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


def _cache_file(repo: git.Repo, cache_dir: Path | None, kind: str) -> Path:
    """`<cache>/<kind>-<hash of the repository's git folder>.json`: a file per repository and reader."""
    folder = cache_dir if cache_dir is not None else default_cache_dir()
    identity = str(Path(repo.common_dir).resolve()).encode("utf-8", "surrogateescape")
    return folder / f"{kind}-{hashlib.sha256(identity).hexdigest()[:16]}.json"


def _load_cache(path: Path | None, section: str) -> dict[str, dict]:
    """The file's `section`; empty when there is no file, or it is unreadable or of another format."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != _CACHE_FORMAT:
        return {}
    entries = data.get(section)
    return entries if isinstance(entries, dict) else {}


def _save_cache(path: Path, section: str, entries: dict) -> bool:
    """Write atomically; False when that fails (read-only home, full disk: the analysis is still
    right, only slower next time)."""
    try:
        write_atomic(path, json.dumps({"format": _CACHE_FORMAT, section: entries}, separators=(",", ":")))
    except OSError:
        return False
    return True


def _hit(spans: Iterable[Span], lines: Iterable[int]) -> set[str]:
    """Qualnames of every span containing a changed line: the unit and its enclosing classes."""
    ordered = sorted(lines)
    hit: set[str] = set()
    for span in spans:
        index = bisect_left(ordered, span.start)
        if index < len(ordered) and ordered[index] <= span.end:
            hit.add(span.qualname)
    return hit
