"""Changed-line coverage: which executable changed lines the generated calls ran.

Lines are counted on head (added or modified) for files with head-side changes, and on
base (removed) for files with deletions only. Only lines that carry code count (see
generator.lines); lines that run at import time are credited when the module imported.
Tracing lines slows the worker down, so replay asks for lines only while some are still
uncovered (`pending`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .lines import ExecutableLines, executable_lines
from .model import ChangeSet, Checkout, Coverage


@dataclass
class _File:
    path: str  # repository-relative, on its side
    wanted: list[int]  # executable changed lines, sorted
    covered: set[int] = field(default_factory=set)


class ChangedLines:
    def __init__(self, changes: ChangeSet, base: Checkout, head: Checkout,
                 import_errors: dict[str, set[str]]) -> None:
        """`import_errors`: side -> modules that failed to import there."""
        self._files: dict[str, dict[str, _File]] = {"base": {}, "head": {}}
        for change in changes.files:
            side = "head" if change.head_lines and change.head_path else "base"
            path = change.head_path if side == "head" else change.base_path
            if not path or not change.module:
                continue
            checkout = head if side == "head" else base
            absolute = checkout.root / path
            lines = _executable(absolute)
            wanted = sorted(set(change.head_lines if side == "head" else change.base_lines) & lines.all)
            tracked = _File(path, wanted)
            if change.module not in import_errors.get(side, set()):
                tracked.covered.update(line for line in wanted if line in lines.at_import)
            self._files[side][str(absolute)] = tracked

    def pending(self, side: str) -> bool:
        return any(len(f.covered) < len(f.wanted) for f in self._files[side].values())

    def add(self, side: str, results: list[dict]) -> None:
        files = self._files[side]
        for result in results:
            for _, file, line in result.get("covered", ()):
                if file in files:
                    files[file].covered.add(line)

    def report(self) -> Coverage:
        coverage = Coverage()
        for files in self._files.values():
            for tracked in files.values():
                hit = [line for line in tracked.wanted if line in tracked.covered]
                coverage.changed_lines += len(tracked.wanted)
                coverage.changed_lines_covered += len(hit)
                missing = [line for line in tracked.wanted if line not in tracked.covered]
                if missing:
                    coverage.uncovered[tracked.path] = missing
        return coverage


def _executable(path: Path) -> ExecutableLines:
    try:
        return executable_lines(path.read_text(encoding="utf-8", errors="replace"), str(path))
    except OSError:
        return ExecutableLines(frozenset(), frozenset())
