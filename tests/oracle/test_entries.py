"""Tests for `difforacle.generator.oracle.entries`: which entries of a module's table differ, read
from the two observations of the table (its header leaf and one subtree per entry)."""

from __future__ import annotations

from difforacle.generator.oracle.entries import MAX_ENTRIES, table_entries
from difforacle.generator.report.model import TableEntry


def _dict(items: dict[str, str]) -> dict:
    """A dict of str to str as the worker observes it under `0/0`."""
    return {"0/0": ["dict", len(items), [["str", k] for k in items]],
            **{f"0/0[{k!r}]": ["s", v] for k, v in items.items()}}


def _list(items: list[tuple[str, str]]) -> dict:
    """A list of (pattern, token) pairs as the worker observes it under `0/0`."""
    observed: dict = {"0/0": ["list", len(items)]}
    for i, (pattern, token) in enumerate(items):
        observed |= {f"0/0[{i}]": ["tuple", 2], f"0/0[{i}][0]": ["s", pattern], f"0/0[{i}][1]": ["s", token]}
    return observed


def test_a_dicts_entries_are_its_keys_added_removed_or_given_another_value() -> None:
    base = _dict({"SELECT": "keyword", "LIMIT": "keyword", "NULL": "keyword"})
    head = _dict({"SELECT": "keyword", "NULL": "name", "RETURNING": "keyword"})
    assert table_entries(base, head, "0/0") == [
        TableEntry("removed", "['LIMIT']", ("LIMIT",)),  # a key is named by itself, not its value
        TableEntry("changed", "['NULL']", ("NULL",)),
        TableEntry("added", "['RETURNING']", ("RETURNING",)),
    ]


def test_a_lists_items_are_aligned_so_one_insertion_is_one_entry() -> None:
    rules = [(r"\d+", "number"), (r"[a-z]\w*", "name"), ("'[^']*'", "string"), ("--.*", "comment")]
    inserted = [rules[0], (r"0x[0-9a-f]+", "number"), *rules[1:]]
    assert table_entries(_list(rules), _list(inserted), "0/0") == [
        TableEntry("added", "[1]", ("0x[0-9a-f]+",))]  # "number": two rules hold it, it singles out none
    dropped = [rules[0], rules[1], rules[3]]
    assert table_entries(_list(rules), _list(dropped), "0/0") == [
        TableEntry("removed", "[2]", ("string",))]  # a pattern of no letter or digit names nothing


def test_an_item_edited_in_place_is_changed_with_its_strings_before_and_after() -> None:
    rules = [(r"\d+", "number"), (r"[a-z]\w*", "name"), ("'[^']*'", "string")]
    edited = [rules[0], (r"[a-z]\w*(?:\.\w+)?", "name"), rules[2]]
    [entry] = table_entries(_list(rules), _list(edited), "0/0")
    assert (entry.change, entry.entry) == ("changed", "[1]")
    assert entry.edits == ((r"[a-z]\w*", r"[a-z]\w*(?:\.\w+)?"),)
    assert r"[a-z]\w*(?:\.\w+)?" in entry.words and "name" in entry.words


def test_a_sets_entries_are_its_elements() -> None:
    base = {"0/0": ["set", 2, [["str", "div"], ["str", "p"]]]}
    head = {"0/0": ["set", 2, [["str", "div"], ["str", "main"]]]}
    assert table_entries(base, head, "0/0") == [TableEntry("removed", "'p'"),
                                                 TableEntry("added", "'main'", ("main",))]


def test_short_or_wordless_text_names_nothing() -> None:
    """"p" or "-" turn up in any prose: an entry holding only them has no words to be named by; and a
    string replaced by another is no edit of it."""
    assert table_entries(_dict({"a": "-"}), _dict({"a": "+"}), "0/0") == [TableEntry("changed", "['a']")]
    [entry] = table_entries(_dict({"ab": "keyword"}), _dict({"ab": "name"}), "0/0")
    assert (entry.words, entry.edits) == ((), ())


def test_no_entries_when_the_value_is_no_table_on_both_sides() -> None:
    table = _dict({"SELECT": "keyword"})
    raised = {"0/!": ["raised", "ImportError", "boom"]}
    for other in ({"0/0": ["i", 3]}, raised, {"0/0": ["object", "pkg.T"]}):
        assert table_entries(table, other, "0/0") == []
        assert table_entries(other, table, "0/0") == []


def test_a_rewritten_table_reports_a_bounded_number_of_entries() -> None:
    base = _dict({f"K{i}": "keyword" for i in range(200)})
    head = _dict({f"N{i}": "keyword" for i in range(200)})
    assert len(table_entries(base, head, "0/0")) == MAX_ENTRIES
