"""The entries of module-level tables that the changed lines are in.

The worker walks a module's table (`KEYWORDS = {...}`, `RULES = [...]`) to its first
`MODULE_VALUE_ITEMS` entries, so that a difference anywhere in a hand-written table shows. A
generated table (a Unicode or locale table of tens of thousands of entries) is walked only that
far, and the entry a pull request changed lies beyond it as often as not. The diff says which
entries changed: the dict keys and list indices whose entry spans a changed line, on either side,
are walked too, wherever they are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..worker.literals import encode
from .model import ChangeSet, Checkout
from .syntax import changed_trees, first_line, spans_line

MAX_CHANGED_ENTRIES = 50  # entries of one table walked for the change: more is a rewrite, not an edit


def changed_entries(changes: ChangeSet, base: Checkout, head: Checkout) -> dict[str, list[list]]:
    """Per table (`module:NAME`), the literals of the keys (a dict's) or indices (a list's or a
    tuple's) of its entries that a changed line is in, on base or on head: both sides walk them all."""
    found: dict[str, list[list]] = {}
    for change, tree, lines in changed_trees(changes, base, head):
        for name, keys in _entries_on(tree, lines):
            table = found.setdefault(f"{change.module}:{name}", [])
            table += [key for key in keys if key not in table][:MAX_CHANGED_ENTRIES - len(table)]
    return found


def _entries_on(tree: ast.Module | None, lines: list[int]) -> Iterable[tuple[str, list[list]]]:
    """(name, entry literals) of each top-level `NAME = {...}` (or list, or tuple) that `lines` hold."""
    for statement in tree.body if tree is not None else ():
        if not spans_line(lines, first_line(statement), statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, ast.Assign):
            names = [t.id for t in statement.targets if isinstance(t, ast.Name)]
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names = [statement.target.id]
        else:
            continue
        keys = _keys_on(statement.value, lines) if statement.value is not None else []
        for name in names if keys else ():
            yield name, keys


def _keys_on(display: ast.expr, lines: list[int]) -> list[list]:
    """The literals of the entries of a dict, list or tuple display that `lines` hold."""
    if isinstance(display, ast.Dict):
        entries = [(key, value) for key, value in zip(display.keys, display.values, strict=True)
                   if key is not None]  # `**other` has no key of its own
        found = [_literal(key) for key, value in entries
                 if spans_line(lines, key.lineno, value.end_lineno or value.lineno)]
    elif isinstance(display, (ast.List, ast.Tuple)):
        items = display.elts
        starred = next((i for i, item in enumerate(items) if isinstance(item, ast.Starred)), len(items))
        found = [encode(i) for i, item in enumerate(items[:starred])  # after `*other`, indices are unknown
                 if spans_line(lines, item.lineno, item.end_lineno or item.lineno)]
    else:
        return []
    return [key for key in found if key is not None][:MAX_CHANGED_ENTRIES]


def _literal(node: ast.expr) -> list | None:
    try:
        return encode(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
