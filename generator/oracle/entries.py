"""Which entries of a module's table differ between base and head.

A module's table (`KEYWORDS = {...}`, `RULES = [...]`) is read whole and walked to its every
entry (the worker's `MODULE_VALUE_ITEMS`), but a difference reports only its first differing
leaf: `len(RULES)` went from 53 to 51. Which entries changed is what tells one edit of a table
from another: a pull request that adds `'MATERIALIZED'` to `KEYWORDS` explains that key, not an
`'ASC'` that appeared beside it. Triage asks whether the pull request's words single out each of
them (`triage.verdicts`).

A dict's entries are its keys: added, removed, or kept with another value; a key is what names
one. A list's or tuple's are its items, aligned the way a text diff aligns lines (difflib), so one
inserted item is one entry, not a shift of every item after it; an item replaced in place is one
changed entry, with its strings before and after the edit; an item is named by its strings and
numbers that no other item holds (not by the token type every rule shares). A set's are its
elements, when the worker listed them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping

from ..report.model import TableEntry
from ..worker.literals import parts
from ..worker.literals import source as literal_source
from ..worker.protocol import MalformedKey, ObservationKey, Tag

MAX_ENTRIES = 50  # entries reported of one table: more says the table was rewritten, not edited
KEPT = 0.6  # similarity (difflib's ratio) of a string to its edited self; below it, it was replaced
MIN_TEXT = 3  # characters of the shortest text that names anything (`telling`)

Subtree = tuple[tuple[str, str], ...]  # an entry's leaves: (path below the entry, leaf as JSON)


def telling(text: str) -> bool:
    """Long enough, and with a letter or digit, to stand for a choice someone made: "-" or "ab" turn
    up in any text, so they name nothing (an entry here, a value or a quote in triage)."""
    return len(text) >= MIN_TEXT and any(c.isalnum() for c in text)


def table_entries(base: Mapping[str, list], head: Mapping[str, list], root: str) -> list[TableEntry]:
    """The entries of the table observed at key `root` that differ between the two observations;
    empty when the value is no table on either side (an object, a number, a raised exception)."""
    base_header, head_header = base.get(root), head.get(root)
    if _is_mapping(base_header) and _is_mapping(head_header):
        entries = _mapping_entries(base_header, head_header, _children(base, root), _children(head, root))
    elif _is_set(base_header) and _is_set(head_header):
        entries = _set_entries(base_header, head_header)
    elif _is_sequence(base_header) and _is_sequence(head_header):
        entries = _sequence_entries(_children(base, root), _children(head, root))
    else:
        return []
    return entries[:MAX_ENTRIES]


def _is_mapping(leaf: list | None) -> bool:
    return (leaf is not None and len(leaf) == 3 and isinstance(leaf[1], int) and isinstance(leaf[2], list)
            and leaf[0] != Tag.SET)


def _is_set(leaf: list | None) -> bool:
    return leaf is not None and leaf[0] == Tag.SET and len(leaf) > 2 and isinstance(leaf[2], list)


def _is_sequence(leaf: list | None) -> bool:
    return (leaf is not None and len(leaf) == 2 and type(leaf[1]) is int
            and leaf[0] not in (Tag.INT, Tag.BOOL, Tag.GENERATOR, Tag.SET))


def _children(observations: Mapping[str, list], root: str) -> dict[str, Subtree]:
    """Each entry's leaves under `root`, by the entry's item literal (`'ASC'`, `5`), in key order."""
    found: dict[str, list[tuple[str, str]]] = {}
    depth = len(ObservationKey.parse(root).steps)
    for key, leaf in observations.items():
        if not key.startswith(root + "["):
            continue
        try:
            steps = ObservationKey.parse(key).steps[depth:]
        except MalformedKey:
            continue
        if steps and steps[0].kind == "item":
            below = "".join(step.source for step in steps[1:])
            found.setdefault(steps[0].text, []).append((below, json.dumps(leaf)))
    return {item: tuple(sorted(leaves)) for item, leaves in found.items()}


def _mapping_entries(base_header: list, head_header: list, base: dict[str, Subtree],
                     head: dict[str, Subtree]) -> list[TableEntry]:
    base_keys = {_key_text(key): key for key in base_header[2]}
    head_keys = {_key_text(key): key for key in head_header[2]}
    entries = []
    for text, key in {**base_keys, **head_keys}.items():
        if text not in head_keys:
            change = "removed"
        elif text not in base_keys:
            change = "added"
        elif base.get(text) != head.get(text):
            change = "changed"
        else:
            continue
        entries.append(TableEntry(change, f"[{text}]", _unique(_key_words(key)),
                                  _edits(base.get(text, ()), head.get(text, ()))))
    return entries


def _set_entries(base_header: list, head_header: list) -> list[TableEntry]:
    base_items = {_key_text(item): item for item in base_header[2]}
    head_items = {_key_text(item): item for item in head_header[2]}
    return [TableEntry("removed" if text in base_items else "added", text, _unique(_key_words(item)))
            for text, item in {**base_items, **head_items}.items()
            if (text in base_items) != (text in head_items)]


def _sequence_entries(base: dict[str, Subtree], head: dict[str, Subtree]) -> list[TableEntry]:
    """Items aligned as a text diff aligns lines: a replaced block pairs its items in order (each a
    changed entry), and what one side has more is removed or added."""
    before, after = _in_order(base), _in_order(head)
    shared = _shared_words(before) | _shared_words(after)

    def words(*items: Subtree) -> tuple[str, ...]:
        return _unique([word for item in items for word in _words(item) if word not in shared])

    entries = []
    matcher = difflib.SequenceMatcher(None, [s for _, s in before], [s for _, s in after], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        old, new = before[i1:i2], after[j1:j2]
        for (index, was), (_, now) in zip(old, new, strict=False):
            entries.append(TableEntry("changed", f"[{index}]", words(was, now),
                                      _edits(was, now)))
        entries += [TableEntry("removed", f"[{index}]", words(was))
                    for index, was in old[len(new):]]
        entries += [TableEntry("added", f"[{index}]", words(now))
                    for index, now in new[len(old):]]
    return entries


def _shared_words(items: list[tuple[str, Subtree]]) -> set[str]:
    """The words more than one item holds (a token type every rule names): they single out none."""
    seen: set[str] = set()
    shared: set[str] = set()
    for _, item in items:
        for word in set(_words(item)):
            (shared if word in seen else seen).add(word)
    return shared


def _in_order(children: dict[str, Subtree]) -> list[tuple[str, Subtree]]:
    """A sequence's items by position (keys `[0]`, `[1]`, ...)."""
    indexed = [(int(item), leaves) for item, leaves in children.items() if item.lstrip("-").isdigit()]
    return [(str(index), leaves) for index, leaves in sorted(indexed)]


def _key_text(key: list | str) -> str:
    """A dict key or set element as its item literal: `'ASC'`, `5`, or `<type>` when it has none."""
    return literal_source(key) if isinstance(key, list) else f"<{key}>"


def _key_words(key: list | str) -> list[str]:
    return [str(part[1]) for part in parts(key) if part[0] in ("str", "int")] if isinstance(key, list) else []


def _leaf_words(leaf: list) -> Iterator[str]:
    """The texts in a leaf prose may name it by: a string, a number, an enum member's name."""
    if leaf and leaf[0] == Tag.STR:
        yield leaf[1]
    elif leaf and leaf[0] == Tag.INT:
        yield str(leaf[1])
    elif leaf and leaf[0] == Tag.ENUM:
        yield str(leaf[1]).rsplit(".", 1)[-1]


def _words(subtree: Subtree) -> list[str]:
    return [word for _, leaf in subtree for word in _leaf_words(json.loads(leaf))]


def _unique(words: list[str]) -> tuple[str, ...]:
    return tuple(word for word in dict.fromkeys(words) if telling(word.strip()))


def _edits(base: Subtree, head: Subtree) -> tuple[tuple[str, str], ...]:
    """A changed entry's strings that differ, as (base's, head's), where both sides hold a string at
    the same place and most of it stayed: an edit of the string, not another one."""
    before = {path: json.loads(leaf) for path, leaf in base}
    after = {path: json.loads(leaf) for path, leaf in head}
    edits = []
    for path, old in before.items():
        new = after.get(path)
        if new and old[0] == new[0] == Tag.STR and old[1] != new[1] and \
                difflib.SequenceMatcher(None, old[1], new[1], autojunk=False).ratio() >= KEPT:
            edits.append((old[1], new[1]))
    return tuple(edits)
