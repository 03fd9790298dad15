"""Tests for `difforacle.generator.changes.tables`: the entries of module-level tables that the
changed lines are in, on either side."""

from __future__ import annotations

from pathlib import Path

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.changes.tables import MAX_CHANGED_ENTRIES, changed_entries

BASE = """\
'''Generated.'''

NAMES = {
    'alpha': (1, 'letter'),
    'beta': (2, 'letter'),
    'gamma': (3,
              'letter'),
    **EXTRA,
}
RULES = [
    ('a', 1),
    ('b', 2),
    *MORE,
    ('c', 3),
]
PAIR: tuple = ('x',
               'y')


def lookup(name):
    return NAMES[name]
"""


def _checkouts(tmp_path: Path, base: str, head: str) -> tuple[Checkout, Checkout]:
    sides = []
    for side, text in (("base", base), ("head", head)):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "table.py").write_text(text, encoding="utf-8")
        sides.append(Checkout(side, side[0] * 40, tmp_path / side, (tmp_path / side,)))
    return sides[0], sides[1]


def _change(base_lines: set[int], head_lines: set[int]) -> ChangeSet:
    change = FileChange("pkg/table.py", "pkg/table.py", "pkg.table", frozenset(base_lines),
                        frozenset(head_lines))
    return ChangeSet("m" * 40, (change,), ())


def test_the_keys_and_indices_of_the_entries_a_changed_line_is_in(tmp_path: Path) -> None:
    base, head = _checkouts(tmp_path, BASE, BASE)
    lines = {5, 7, 11, 17}  # 'beta', the second line of 'gamma', ('a', 1), the second line of PAIR
    assert changed_entries(_change(lines, lines), base, head) == {
        "pkg.table:NAMES": [["str", "beta"], ["str", "gamma"]],
        "pkg.table:RULES": [["int", 0]],
        "pkg.table:PAIR": [["int", 1]],
    }


def test_an_entry_added_on_head_and_one_removed_from_base_are_both_walked(tmp_path: Path) -> None:
    head_text = BASE.replace("    'beta': (2, 'letter'),\n", "    'delta': (4, 'letter'),\n")
    base, head = _checkouts(tmp_path, BASE, head_text)
    assert changed_entries(_change({5}, {5}), base, head) == {"pkg.table:NAMES": [["str", "beta"],
                                                                                  ["str", "delta"]]}


def test_what_names_no_entry_is_left_out(tmp_path: Path) -> None:
    base, head = _checkouts(tmp_path, BASE, BASE)
    # `**EXTRA` has no key; after `*MORE` the indices are unknown; a function is no table; the docstring
    assert changed_entries(_change({1, 8, 9, 14, 22}, set()), base, head) == {}


def test_a_rewritten_table_walks_a_bounded_number_of_entries(tmp_path: Path) -> None:
    big = "T = {\n" + "".join(f"    {i}: {i},\n" for i in range(200)) + "}\n"
    base, head = _checkouts(tmp_path, big, big.replace(": ", ": -"))
    found = changed_entries(_change(set(range(2, 202)), set(range(2, 202))), base, head)
    assert found["pkg.table:T"] == [["int", i] for i in range(MAX_CHANGED_ENTRIES)]
