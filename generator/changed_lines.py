"""Changed-line coverage: which executable changed lines the generated calls ran.

Lines are counted on head (added or modified) for files with head-side changes, and on
base (removed) for files with deletions only. Only lines that carry code count (see
generator.lines); lines the worker ran while importing the module count as covered.
Tracing lines slows the worker down, so replay asks for lines only while some are still
uncovered (`pending`).
"""

from __future__ import annotations

from collections.abc import Iterable
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
    def __init__(self, changes: ChangeSet, base: Checkout, head: Checkout) -> None:
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
            self._files[side][str(absolute)] = _File(path, wanted)

    def pending(self, side: str) -> bool:
        return any(len(f.covered) < len(f.wanted) for f in self._files[side].values())

    def add(self, side: str, results: list[dict]) -> None:
        for result in results:
            self.add_lines(side, ((file, line) for _, file, line in result.get("covered", ())))

    def add_lines(self, side: str, lines: Iterable[tuple[str, int]]) -> None:
        """Credit (absolute file, line) pairs, e.g. the lines a worker ran while importing."""
        files = self._files[side]
        for file, line in lines:
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
