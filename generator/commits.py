"""What commits did to Python units, read from git: the input of the defect scores (`generator.risk`).

Each commit on the first-parent line is diffed against its first parent with zero context and
the changed lines are mapped onto the AST units of both sides (`CommitTouches`). A line changed
in `Cache.get` touches `Cache.get`, `Cache` and `<module>`. `CommitReader` reads whole commits
(every Python file) through a per-repository JSON cache keyed by commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from .changes import MODULE, Span, diff_lines, parse_spans, python_path

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
_GIT_CHUNK = 1000  # commits per `git log` call (keeps the command line short)
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
