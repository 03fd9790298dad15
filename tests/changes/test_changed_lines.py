"""Tests for `difforacle.generator.changes.changed_lines`: which executable changed lines the calls ran."""

from __future__ import annotations

from pathlib import Path

from difforacle.generator.changes.changed_lines import ChangedLines
from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.worker.protocol import ExecutedLines

SOURCE = '''\
"""Module."""
LIMIT = 3


def f(x):
    # a comment
    if x > LIMIT:
        return 1
    return 0
'''


def _setup(tmp_path: Path, base_lines: set[int], head_lines: set[int]) -> tuple[ChangedLines, str]:
    for side in ("base", "head"):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "mod.py").write_text(SOURCE)
    base = Checkout("base", "a" * 40, tmp_path / "base", (tmp_path / "base",))
    head = Checkout("head", "b" * 40, tmp_path / "head", (tmp_path / "head",))
    change = FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset(base_lines), frozenset(head_lines))
    return ChangedLines(ChangeSet("c" * 40, (change,), ()), base, head), str(tmp_path / "head" / "pkg/mod.py")


def test_only_executable_head_lines_count_and_runs_cover_them(tmp_path: Path) -> None:
    lines, head_file = _setup(tmp_path, {7}, {1, 6, 7, 8})  # docstring and comment do not count
    assert lines.pending("head") and lines.pending("base")  # base: the modified line 7
    assert lines.report().changed_lines == 2  # each file once, on head (its primary side)
    assert lines.report().sides["base"].uncovered == {"pkg/mod.py": [7]}
    lines.add("head", [ExecutedLines(covered=[(0, head_file, 7)])])
    report = lines.report()
    assert (report.changed_lines_covered, report.uncovered) == (1, {"pkg/mod.py": [8]})
    lines.add_lines("head", [(head_file, 8)])  # e.g. run while importing
    assert lines.report().uncovered == {}
    assert lines.pending("head")  # the branches out of line 7 are not taken yet
    assert lines.report().sides["head"].uncovered_branches == {"pkg/mod.py": [[7, 8], [7, 9]]}
    lines.add("head", [ExecutedLines(arcs=[(head_file, 7, 8), (head_file, 7, 9)])])
    assert not lines.pending("head")
    assert lines.report().changed_branches_covered == lines.report().changed_branches == 2


def test_reached_counts_what_the_report_counts_as_lines_run(tmp_path: Path) -> None:
    """Progress shows the report's top-level figures: each file once, on its primary side."""
    lines, head_file = _setup(tmp_path, {7}, {1, 6, 7, 8})
    assert lines.reached() == (2, 0)
    lines.add("head", [ExecutedLines(covered=[(0, head_file, 7)])])
    lines.add_lines("base", [(str(tmp_path / "base" / "pkg/mod.py"), 7)])  # not the file's primary side
    report = lines.report()
    assert lines.reached() == (report.changed_lines, report.changed_lines_covered) == (2, 1)


def test_deletions_only_are_counted_on_base(tmp_path: Path) -> None:
    lines, _ = _setup(tmp_path, {2, 9}, set())
    assert lines.pending("base") and not lines.pending("head")
    assert lines.report().uncovered == {"pkg/mod.py": [2, 9]}


MULTILINE = '''\
import re

PATTERN = re.compile(
    r"""
    (?P<h>\\d+)h   # hours
    """,
    re.VERBOSE,
)


def f(x):
    """One line."""
    return {
        "a": 1,
        # a comment
        "b": 2,
    }
'''


def test_changed_lines_inside_a_statement_count_and_run_with_it(tmp_path: Path) -> None:
    """A change inside a regex literal or a long call counts, and runs when its statement runs;
    a changed docstring or comment line still does not count."""
    for side in ("base", "head"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "mod.py").write_text(MULTILINE)
    checkouts = [Checkout(side, side[0] * 40, tmp_path / side, (tmp_path / side,))
                 for side in ("base", "head")]
    regex, docstring, closing, comment = 5, 12, 17, 15
    changed = frozenset({regex, docstring, closing, comment})
    change = FileChange("mod.py", "mod.py", "mod", frozenset(), changed)
    lines = ChangedLines(ChangeSet("c" * 40, (change,), ()), *checkouts)
    head_file = str(tmp_path / "head" / "mod.py")
    assert lines.report().changed_lines == 2 and lines.report().uncovered == {"mod.py": [regex, closing]}
    lines.add_lines("head", [(head_file, 3)])  # the import ran the assignment
    assert lines.report().uncovered == {"mod.py": [closing]}
    lines.add_lines("head", [(head_file, 13)])  # the call ran the return statement
    assert lines.report().uncovered == {} and lines.report().changed_lines_covered == 2


def test_what_one_execution_ran_is_read_without_crediting_it(tmp_path: Path) -> None:
    """The solver's inputs are credited with the changed lines and branches their replays ran."""
    lines, head_file = _setup(tmp_path, {7}, {7, 8})
    executed = ExecutedLines(arcs=[(head_file, 7, 8), (head_file, 6, 7)])
    assert lines.run_by("head", executed) == {("line", "head", "pkg/mod.py", 7),
                                              ("line", "head", "pkg/mod.py", 8),
                                              ("branch", "head", "pkg/mod.py", 7, 8)}
    assert lines.run_by("base", executed) == set()  # another side's file
    assert lines.report().changed_lines_covered == 0  # nothing credited


def test_a_large_module_has_its_branches_only_where_a_changed_line_heads_one(tmp_path: Path) -> None:
    """coverage.py's parser reads a whole module; for a large one it runs only when a changed line
    is in the header of a compound statement, where a branch may leave (here: `if`, not a table)."""
    table = "TABLE = {\n" + "".join(f"    'k{i}': {i},\n" for i in range(6000)) + "}\n"
    source = table + "\n\ndef f(x):\n    if x in TABLE:\n        return 1\n    return 0\n"
    first_if = source.splitlines().index("    if x in TABLE:") + 1
    for side in ("base", "head"):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "mod.py").write_text(source)
    base = Checkout("base", "a" * 40, tmp_path / "base", (tmp_path / "base",))
    head = Checkout("head", "b" * 40, tmp_path / "head", (tmp_path / "head",))
    head_file = str(tmp_path / "head" / "pkg/mod.py")

    def measured(lines: set[int]) -> ChangedLines:
        change = FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset(lines), frozenset(lines))
        return ChangedLines(ChangeSet("c" * 40, (change,), ()), base, head)

    entry = measured({3001})  # one entry of the table
    assert entry.report().changed_lines == 1 and entry.report().changed_branches == 0
    assert entry._files["head"][head_file].parser is None  # the whole file was not tokenized
    entry.add("head", [ExecutedLines(arcs=[(head_file, -1, 1), (head_file, 1, 3001)])])
    assert entry.report().changed_lines_covered == 1 and not entry.pending("head")
    condition = measured({first_if})
    assert condition.report().changed_branches == 2  # measured as in any module
    assert condition.report().sides["head"].uncovered_branches == {"pkg/mod.py": [[first_if, first_if + 1],
                                                                                 [first_if, first_if + 2]]}
