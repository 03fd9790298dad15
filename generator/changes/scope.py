"""What a run tests: the files it takes changes from and the targets whose differences it reports.

A project narrows a run with `[tool.difforacle]` (`include`, `exclude`, `ignore-targets`) or
`diff --include/--exclude`. The scope is applied before anything runs, so no budget goes to
code left out: changed files outside it are not imported, planned or explored, and
differences whose target is ignored are dropped from the candidates as they appear and from
what confirmation finds.

Path patterns (`include`, `exclude`) are globs on repository-relative POSIX paths, anchored at
the repository root: `*` and `?` stay within one path segment, `**` spans any number of
segments, and a pattern that matches a folder covers everything below it (`src/pkg`,
`**/tests`). Target patterns (`ignore-targets`) are `fnmatch` patterns on targets as the report
names them, `pkg.mod:Class.method`, where `*` matches anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cache
from pathlib import PurePath

from .model import ChangeSet

OUTSIDE = "outside the include/exclude settings: not tested"


@dataclass(frozen=True)
class Scope:
    include: tuple[str, ...] = ()  # empty: every path
    exclude: tuple[str, ...] = ()
    ignore_targets: tuple[str, ...] = ()

    def covers(self, path: str | PurePath) -> bool:
        """Whether a repository-relative path is to be tested: included (all by default) and not excluded."""
        normal = _normal_path(path)
        if self.include and not any(_glob(pattern).match(normal) for pattern in self.include):
            return False
        return not any(_glob(pattern).match(normal) for pattern in self.exclude)

    def ignores(self, target: str) -> bool:
        """Whether differences in `target` (`pkg.mod:Class.method`) are left out."""
        return any(fnmatchcase(target, pattern) for pattern in self.ignore_targets)

    def restrict(self, changes: ChangeSet) -> ChangeSet:
        """The changes of the files in scope; the others are listed as skipped, with why."""
        if not self.include and not self.exclude:
            return changes
        files = tuple(f for f in changes.files if self.covers(f.head_path or f.base_path or ""))
        outside = [f"{f.head_path or f.base_path}: {OUTSIDE}" for f in changes.files if f not in files]
        units = tuple(u for u in changes.units if self.covers(u.path))
        return replace(changes, files=files, units=units, skipped=(*changes.skipped, *outside))


EVERYTHING = Scope()


def _normal_path(path: str | PurePath) -> str:
    text = str(path).replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text.strip("/")


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """The regex of a path glob (see the module docstring); cached, patterns repeat for every path."""
    pattern = _normal_path(pattern)
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := _class_end(pattern, i)) is not None:
            body = pattern[i + 1 : end]
            negate = body.startswith(("!", "^"))
            body = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + re.sub(r"([\\\]\[^&~|])", r"\\\1", body) + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")(?:/.*)?\Z")


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the `]` closing the character class opened at `start`, or None (then `[` is literal)."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a leading ] is a member, as in fnmatch
        i += 1
    end = pattern.find("]", i)
    return None if end == -1 or "/" in pattern[start:end] else end
