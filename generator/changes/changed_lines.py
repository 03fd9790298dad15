"""Changed-code coverage: which executable changed lines and which of their branches ran.

Both sides are measured: on base the lines a pull request removes or modifies, on head the
lines it adds or modifies, each with the branches that leave them (arcs out of lines with
more than one possible exit, by coverage.py's static analysis). The workers report the
raw arcs coverage.py's tracer saw in the changed files; lines the worker ran while
importing a module count as covered (they run before any sequence).

The report's top-level counts are the *primary* side of each file (head when the file
has added or modified lines, base when it only loses lines), so that a modified line
counts once; `sides` gives both, with the uncovered lines and branches by file.
Measuring slows the worker down, so replay asks for coverage only while something is
still uncovered (`pending`). The same measurement can also say which branches out of changed
lines each sequence took (`branching`, `branches_taken`): its path, for the path memo.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..report.model import Coverage, SideCoverage
from ..worker.protocol import ExecutedLines
from .executable_lines import executable_lines
from .model import ChangeSet, Checkout
from .syntax import LARGE_SOURCE, first_line, nodes_on, parsed, spans_line

if TYPE_CHECKING:
    from coverage.parser import PythonParser

SIDES = ("base", "head")
Target = tuple  # ("line", side, path, line) or ("branch", side, path, from, to)
Edge = tuple[str, str, int, int]  # a branch out of a changed line: (side, path, from, to)


@dataclass
class _File:
    side: str
    path: str  # repository-relative, on its side
    primary: bool  # counted in the report's top-level figures
    wanted: list[int]  # executable changed lines, sorted
    branches: dict[int, frozenset[int]]  # changed branching line -> its possible destinations
    parser: PythonParser | None
    covered: set[int] = field(default_factory=set)
    taken: set[tuple[int, int]] = field(default_factory=set)
    # A changed line inside a statement that spans lines (a string literal, a regex, a long call)
    # runs when its statement does: it stands on the statement's first executable line.
    stands_on: dict[int, int] = field(default_factory=dict)
    # the lines the tracer may report an arc out of a changed branching line from (a statement
    # spanning several lines reports any of them)
    sources: frozenset[int] = frozenset()

    def uncovered_lines(self) -> list[int]:
        return [line for line in self.wanted
                if line not in self.covered and self.stands_on.get(line) not in self.covered]

    def uncovered_branches(self) -> list[tuple[int, int]]:
        return [(a, b) for a, ends in sorted(self.branches.items()) for b in sorted(ends)
                if (a, b) not in self.taken]

    def branch_count(self) -> int:
        return sum(len(ends) for ends in self.branches.values())


class ChangedLines:
    def __init__(self, changes: ChangeSet, base: Checkout, head: Checkout) -> None:
        self._files: dict[str, dict[str, _File]] = {side: {} for side in SIDES}  # side -> absolute file
        for change in changes.files:
            if not change.module:
                continue
            primary = "head" if change.head_lines and change.head_path else "base"
            for side, checkout, path, lines in (("base", base, change.base_path, change.base_lines),
                                                ("head", head, change.head_path, change.head_lines)):
                if path and lines:
                    absolute = checkout.root / path
                    self._files[side][str(absolute)] = _measured_file(side, path, absolute, set(lines),
                                                                      side == primary)

    def pending(self, side: str) -> bool:
        """Whether some changed line or branch of `side` is still uncovered."""
        return any(f.uncovered_lines() or f.uncovered_branches() for f in self._files[side].values())

    def add(self, side: str, executed: Iterable[ExecutedLines]) -> None:
        """Credit what the worker says ran (`covered` lines and raw `arcs`)."""
        for lines in executed:
            self.add_lines(side, ((file, line) for _, file, line in lines.covered))
            self.add_arcs(side, lines.arcs)

    def add_lines(self, side: str, lines: Iterable[tuple[str, int]]) -> None:
        """Credit (absolute file, line) pairs."""
        files = self._files[side]
        for file, line in lines:
            if file in files:
                files[file].covered.add(line)

    def add_arcs(self, side: str, arcs: Iterable[Iterable]) -> None:
        """Credit raw (absolute file, from, to) arcs, as coverage.py's tracer records them."""
        for tracked, raw in self._by_file(side, arcs):
            tracked.covered.update(line for arc in raw for line in arc if line > 0)
            if tracked.parser is not None:
                tracked.taken.update(tracked.parser.translate_arcs(raw))

    def branching(self, side: str) -> dict[str, list[int]]:
        """Per absolute file of `side`, the lines whose raw arcs may leave a changed branching line:
        what a worker reports per sequence when asked for paths."""
        return {file: sorted(tracked.sources) for file, tracked in self._files[side].items()
                if tracked.sources}

    def branches_taken(self, side: str, arcs: Iterable[Iterable]) -> frozenset[Edge]:
        """The branches out of changed lines that raw (absolute file, from, to) arcs took."""
        return frozenset((side, tracked.path, a, b) for tracked, raw in self._by_file(side, arcs)
                         if tracked.parser is not None
                         for a, b in tracked.parser.translate_arcs(raw) if b in tracked.branches.get(a, ()))

    def _by_file(self, side: str, arcs: Iterable[Iterable]) -> list[tuple[_File, set[tuple[int, int]]]]:
        files = self._files[side]
        by_file: dict[str, set[tuple[int, int]]] = {}
        for file, a, b in arcs:
            if file in files:
                by_file.setdefault(file, set()).add((a, b))
        return [(files[file], raw) for file, raw in by_file.items()]

    def targets(self) -> list[Target]:
        """Every changed line and branch to cover, in a stable order."""
        found: list[Target] = []
        for side in SIDES:
            for tracked in sorted(self._files[side].values(), key=lambda f: f.path):
                found.extend(("line", side, tracked.path, line) for line in tracked.wanted)
                found.extend(("branch", side, tracked.path, a, b)
                             for a, ends in sorted(tracked.branches.items()) for b in sorted(ends))
        return found

    def run_by(self, side: str, executed: ExecutedLines) -> set[Target]:
        """The changed lines and branches of `side` that one execution ran (nothing is credited)."""
        arcs: dict[str, set[tuple[int, int]]] = {}
        ran: dict[str, set[int]] = {}
        for file, a, b in executed.arcs:
            arcs.setdefault(file, set()).add((a, b))
            ran.setdefault(file, set()).update(line for line in (a, b) if line > 0)
        for _, file, line in executed.covered:
            ran.setdefault(file, set()).add(line)
        found: set[Target] = set()
        for file, lines in ran.items():
            tracked = self._files[side].get(file)
            if tracked is None:
                continue
            found.update(("line", side, tracked.path, line) for line in tracked.wanted
                         if line in lines or tracked.stands_on.get(line) in lines)
            if tracked.parser is not None:
                found.update(("branch", side, tracked.path, a, b)
                             for a, b in tracked.parser.translate_arcs(arcs.get(file, set()))
                             if b in tracked.branches.get(a, ()))
        return found

    def uncovered(self) -> set[Target]:
        found: set[Target] = set()
        for side in SIDES:
            for tracked in self._files[side].values():
                found.update(("line", side, tracked.path, line) for line in tracked.uncovered_lines())
                found.update(("branch", side, tracked.path, a, b) for a, b in tracked.uncovered_branches())
        return found

    def reached(self) -> tuple[int, int]:
        """(changed lines, of them run) as the report's top-level figures count them: cheap enough
        for every progress update, unlike `report()`."""
        primary = [f for side in SIDES for f in self._files[side].values() if f.primary]
        return (sum(len(f.wanted) for f in primary),
                sum(len(f.wanted) - len(f.uncovered_lines()) for f in primary))

    def primary_lines(self) -> list[tuple[str, str, int, bool]]:
        """(side, path, line, run) for every changed line of each file's primary side, in order:
        the lines the report's top-level figures count."""
        found = []
        for side in SIDES:
            for tracked in sorted(self._files[side].values(), key=lambda f: f.path):
                if tracked.primary:
                    missing = set(tracked.uncovered_lines())
                    found.extend((side, tracked.path, line, line not in missing) for line in tracked.wanted)
        return found

    def report(self) -> Coverage:
        coverage = Coverage()
        for side in SIDES:
            detail = SideCoverage()
            for tracked in sorted(self._files[side].values(), key=lambda f: f.path):
                missing, missed = tracked.uncovered_lines(), tracked.uncovered_branches()
                lines, branches = len(tracked.wanted), tracked.branch_count()
                detail.changed_lines += lines
                detail.changed_lines_covered += lines - len(missing)
                detail.changed_branches += branches
                detail.changed_branches_covered += branches - len(missed)
                if missing:
                    detail.uncovered[tracked.path] = missing
                if missed:
                    detail.uncovered_branches[tracked.path] = [list(arc) for arc in missed]
                if tracked.primary:
                    coverage.changed_lines += lines
                    coverage.changed_lines_covered += lines - len(missing)
                    coverage.changed_branches += branches
                    coverage.changed_branches_covered += branches - len(missed)
                    if missing:
                        coverage.uncovered[tracked.path] = missing
            coverage.sides[side] = detail
        return coverage


def _branching_headers(tree: ast.Module | None, lines: set[int]) -> bool:
    """Whether one of `lines` is in the header of a compound statement or clause (the lines from
    its keyword to its body: where a branch may leave), or the source does not parse (then: maybe)."""
    if tree is None:
        return True
    wanted = sorted(lines)
    for node in nodes_on(tree, wanted):
        body = getattr(node, "body", None)
        compound = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
        if compound and not isinstance(node, ast.Module) and spans_line(wanted, first_line(node),
                                                                          body[0].lineno - 1):
            return True
    return False


def _measured_file(side: str, path: str, absolute: Path, changed: set[int], primary: bool) -> _File:
    from coverage.exceptions import CoverageException  # on first use: it takes a while, `--help` needs none
    from coverage.parser import PythonParser

    try:
        source = absolute.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return _File(side, path, primary, [], {}, None)
    executable = executable_lines(source, str(absolute), changed).all
    stands_on = _inside_statements(source, changed - executable, executable)
    wanted = sorted((changed & executable) | set(stands_on))
    if len(source) >= LARGE_SOURCE and not _branching_headers(parsed(source), changed):
        # coverage.py's parser tokenizes the whole file (seconds for a generated table module, and
        # more than a look-up for any large one); its arcs matter only for a changed line that
        # heads a compound statement, which has none here
        return _File(side, path, primary, wanted, {}, None, stands_on=stands_on)
    parser = PythonParser(text=source, filename=str(absolute))
    try:
        parser.parse_source()
    except (CoverageException, SyntaxError, ValueError):
        return _File(side, path, primary, wanted, {}, None, stands_on=stands_on)
    firsts = {parser.first_line(line) for line in changed}
    exits = parser.exit_counts()
    branches: dict[int, set[int]] = {}
    for a, b in parser.arcs():
        if a in firsts and exits.get(a, 0) > 1:
            branches.setdefault(a, set()).add(b)
    sources = frozenset(line for line in range(1, source.count("\n") + 2)
                        if parser.first_line(line) in branches)
    return _File(side, path, primary, wanted, {a: frozenset(ends) for a, ends in branches.items()}, parser,
                 stands_on=stands_on, sources=sources)


def _own_lines(node: ast.stmt) -> tuple[int, int]:
    """The lines of a statement itself: a compound one (`if`, `def`, `with`...) up to its body."""
    end = node.end_lineno or node.lineno
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        end = min(end, body[0].lineno - 1)
    return node.lineno, max(node.lineno, end)


def _inside_statements(source: str, lines: set[int], executable: frozenset[int]) -> dict[int, int]:
    """For each of `lines` (changed, without code of their own) that carries something and lies
    inside a statement spanning several lines, the first executable line of that statement."""
    tree = parsed(source) if lines else None
    if tree is None:
        return {}
    text = source.splitlines()
    spans = sorted((span for node in ast.walk(tree) if isinstance(node, ast.stmt)
                    for span in [_own_lines(node)] if span[1] > span[0]),
                   key=lambda span: span[1] - span[0])  # innermost (shortest) first
    found = {}
    for line in sorted(lines):
        content = text[line - 1].strip() if 0 < line <= len(text) else ""
        if not content or content.startswith("#"):
            continue  # a blank or comment line changes nothing that runs
        for start, end in spans:
            if start <= line <= end:
                first = next((n for n in range(start, end + 1) if n in executable), None)
                if first is not None:
                    found[line] = first
                break
    return found
