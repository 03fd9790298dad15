"""Tests for `difforacle.generator.oracle.compare`: leaf equality, masking and the first difference
between two runs."""

from __future__ import annotations

import pytest

from difforacle.generator.oracle.compare import Mismatch, first_mismatch, kind_of, unstable_keys
from difforacle.generator.oracle.leaves import leaf_text, leaves_equal
from difforacle.generator.worker.protocol import SequenceResult


def run(obs: dict, *, lost: bool = False, n: int | None = None) -> SequenceResult:
    result: dict = {"status": "ok", "obs": obs}
    if lost:
        result.update(status="crash", lost=True, n=n or 0)
    return SequenceResult.from_json(result)


# ---------------------------------------------------------------- leaves_equal


@pytest.mark.parametrize("a, b", [
    (["f", "1.0"], ["f", "1.0000000001"]),
    (["f", "1e20"], ["f", "100000000000000000000.00001"]),
    (["f", "0.0"], ["f", "1e-13"]),
    (["f", "0.0"], ["f", "-0.0"]),
    (["f", "nan"], ["f", "nan"]),
    (["f", "inf"], ["f", "inf"]),
    (["i", 3], ["i", 3]),
    (["s", "a"], ["s", "a"]),
    (["n"], ["n"]),
    (None, None),
], ids=repr)
def test_equal_leaves(a: list | None, b: list | None) -> None:
    assert leaves_equal(a, b)
    assert leaves_equal(b, a)


@pytest.mark.parametrize("a, b", [
    (["f", "1.0"], ["f", "1.00001"]),
    (["f", "0.0"], ["f", "1e-11"]),
    (["f", "nan"], ["f", "1.0"]),
    (["f", "inf"], ["f", "-inf"]),
    (["f", "inf"], ["f", "1e308"]),
    (["f", "1.0"], ["i", 1]),
    (["i", 1], ["t", True]),
    (["i", 1], ["i", 2]),
    (["s", "a"], ["s", "A"]),
    (["i", 1], None),
    (["T", "m.A"], ["T", "m.B"]),
], ids=repr)
def test_different_leaves(a: list | None, b: list | None) -> None:
    assert not leaves_equal(a, b)
    assert not leaves_equal(b, a)


# ---------------------------------------------------------------- unstable_keys


def test_unstable_keys() -> None:
    first = {"0/0": ["i", 1], "0/0.t": ["f", "1.0"], "1/1": ["s", "x"], "1/0.id": ["i", 5],
             "2/2": ["f", "nan"], "3/0.token()": ["unstable"], "4/4": ["i", 1]}
    second = {"0/0": ["i", 1], "0/0.t": ["f", "1.0000000000001"], "1/1": ["s", "y"], "1/0.id": ["i", 6],
              "2/2": ["f", "nan"], "3/0.token()": ["unstable"], "5/5": ["i", 1]}
    assert unstable_keys(first, second) == {"1/1", "1/0.id", "3/0.token()", "4/4", "5/5"}
    assert unstable_keys(first, first) == {"3/0.token()"}
    assert unstable_keys({}, {}) == set()


# ---------------------------------------------------------------- first_mismatch


def test_no_mismatch_for_equal_runs_and_tolerated_floats() -> None:
    base = run({"0/0": ["f", "0.30000000000000004"], "1/1": ["i", 2]})
    head = run({"0/0": ["f", "0.3"], "1/1": ["i", 2]})
    assert first_mismatch(base, head, set()) is None


def test_exception_key_comes_before_result_before_state() -> None:
    base = run({"2/0.size": ["i", 1], "2/2": ["i", 1], "2/!": ["E", "ValueError", "a", "builtins"]})
    head = run({"2/0.size": ["i", 2], "2/2": ["i", 2], "2/!": ["E", "ValueError", "b", "builtins"]})
    assert first_mismatch(base, head, set()).key == "2/!"
    assert first_mismatch(base, head, {"2/!"}).key == "2/2"
    assert first_mismatch(base, head, {"2/!", "2/2"}).key == "2/0.size"


def test_result_subkeys_come_before_other_objects_state() -> None:
    base = run({"1/0.items": ["list", 1], "1/1[0]": ["i", 1]})
    head = run({"1/0.items": ["list", 2], "1/1[0]": ["i", 2]})
    assert first_mismatch(base, head, set()).key == "1/1[0]"


def test_a_mappings_changed_entry_is_shown_before_its_keys_new_order() -> None:
    keys = [["s", "eof"], ["s", "filter"], ["s", "star"]]
    moved = [["s", "eof"], ["s", "star"], ["s", "filter"]]

    def table(order: list, filter_power: int, size: int = 3) -> SequenceResult:
        return run({"0/0": ["dict", size, order], "0/0['eof']": ["i", 0],
                    "0/0['filter']": ["i", filter_power], "0/0['star']": ["i", 20]})

    assert first_mismatch(table(keys, 21), table(moved, 20), set()).key == "0/0['filter']"
    # only the order changed: the order is the difference
    assert first_mismatch(table(keys, 21), table(moved, 21), set()).key == "0/0"
    # another key set or length is not a new order: the mapping itself differs
    assert first_mismatch(table(keys, 21), table([*moved, ["s", "pipe"]], 20, 4), set()).key == "0/0"


def test_earlier_statements_come_first_numerically() -> None:
    base = run({"2/2": ["i", 1], "10/10": ["i", 1], "3/0:total": ["i", 1]})
    head = run({"2/2": ["i", 9], "10/10": ["i", 9], "3/0:total": ["i", 9]})
    assert first_mismatch(base, head, set()) == Mismatch("2/2", ["i", 1], ["i", 9])
    assert first_mismatch(base, head, {"2/2"}).key == "3/0:total"
    assert first_mismatch(base, head, {"2/2", "3/0:total"}).key == "10/10"


def test_masked_keys_are_ignored() -> None:
    base = run({"0/0": ["i", 1], "0/0.stamp": ["f", "1.5"]})
    head = run({"0/0": ["i", 1], "0/0.stamp": ["f", "2.5"]})
    assert first_mismatch(base, head, {"0/0.stamp"}) is None


def test_exception_on_one_side_only() -> None:
    base = run({"0/0": ["i", 1], "1/1": ["i", 4]})
    head = run({"0/0": ["i", 1], "1/!": ["E", "KeyError", "'k'", "builtins"]})
    assert first_mismatch(base, head, set()) == Mismatch("1/!", None, ["E", "KeyError", "'k'", "builtins"])


def test_keys_missing_because_one_side_stopped_earlier_are_skipped() -> None:
    # the head stops at statement 1 with an exception that is masked (it varies on base too):
    # the base's later keys have no counterpart and are no difference
    base = run({"0/0": ["i", 1], "1/1": ["i", 2], "2/2": ["i", 3], "2/0.size": ["i", 1]})
    head = run({"0/0": ["i", 1], "1/!": ["E", "OSError", "flaky", "builtins"]})
    assert first_mismatch(base, head, {"1/!", "1/1"}) is None
    assert first_mismatch(head, base, {"1/!", "1/1"}) is None
    assert first_mismatch(base, head, {"1/!"}) == Mismatch("1/1", ["i", 2], None)


def test_missing_key_without_an_earlier_stop_is_a_mismatch() -> None:
    base = run({"0/0": ["T", "m.A"], "0/0.size": ["i", 1]})
    head = run({"0/0": ["T", "m.A"]})
    assert first_mismatch(base, head, set()) == Mismatch("0/0.size", ["i", 1], None)


def test_lost_side_compares_from_the_statement_where_it_stopped() -> None:
    base = run({"0/0": ["i", 1], "1/1": ["i", 2], "2/2": ["i", 3], "3/3": ["i", 4]})
    head = run({"2/!": ["E", "Crash", "killed by SIGSEGV"]}, lost=True, n=2)
    assert first_mismatch(base, head, set()) == Mismatch("2/!", None, ["E", "Crash", "killed by SIGSEGV"])


def test_lost_base_side() -> None:
    base = run({"1/!": ["E", "Hang", "hang"]}, lost=True, n=1)
    head = run({"0/0": ["i", 1], "1/1": ["i", 2]})
    assert first_mismatch(base, head, set()) == Mismatch("1/!", ["E", "Hang", "hang"], None)


def test_both_lost_at_the_same_place_is_no_difference() -> None:
    base = run({"1/!": ["E", "Crash", "process exited with status 3"]}, lost=True, n=1)
    head = run({"1/!": ["E", "Crash", "process exited with status 3"]}, lost=True, n=1)
    assert first_mismatch(base, head, set()) is None


# ---------------------------------------------------------------- kind_of


@pytest.mark.parametrize("key, base, head, kind", [
    ("3/3", ["i", 1], ["i", 2], "return"),
    ("3/3[0]", ["i", 1], ["i", 2], "return"),
    ("12/12['k']", ["i", 1], ["i", 2], "return"),
    ("3/3@len", ["i", 1], ["i", 2], "return"),
    ("3/3.balance()", ["i", 1], ["i", 2], "observer"),  # an observer of a constructed object
    ("3/3:total", ["i", 1], ["i", 2], "observer"),
    ("3/!", ["E", "ValueError", "a", "builtins"], None, "exception"),
    ("3/!", None, ["E", "ValueError", "a", "builtins"], "exception"),
    ("3/!", ["API", "missing", "m has no f"], None, "api"),
    ("3/!", None, ["API", "signature", "too many"], "api"),
    ("3/0.size", ["i", 1], ["i", 2], "state"),
    ("3/0.items[2]", ["i", 1], ["i", 2], "state"),
    ("3/1['k']", ["i", 1], ["i", 2], "state"),
    ("3/0:total", ["i", 1], ["i", 2], "observer"),
    ("3/0.count()", ["i", 1], ["i", 2], "observer"),
    ("3/0@len", ["i", 1], ["i", 2], "observer"),
    ("3/0@list[1]", ["i", 1], ["i", 2], "observer"),
    ("3/0@str", ["s", "a"], ["s", "b"], "observer"),
    ("3/0@repr", ["s", "a"], ["s", "b"], "observer"),
    ("13/1.inner:value", ["i", 1], ["i", 2], "observer"),
])
def test_kind_of(key: str, base: list | None, head: list | None, kind: str) -> None:
    assert kind_of(Mismatch(key, base, head)) == kind


@pytest.mark.parametrize("key", ["3/0['a:b']", "3/0['x()']", "3/0.table['@len']"])
def test_kind_of_dict_keys_that_look_like_observers_is_state(key: str) -> None:
    """A dict item whose key text contains ':', '()' or '@len' is still plain state."""
    assert kind_of(Mismatch(key, ["i", 1], ["i", 2])) == "state"


# ---------------------------------------------------------------- leaf_text


@pytest.mark.parametrize("leaf, text", [
    (["n"], "None"),
    (["i", 42], "42"),
    (["t", True], "True"),
    (["f", "1.5"], "1.5"),
    (["f", "nan"], "nan"),
    (["s", "a'b"], repr("a'b")),
    (["b", "6162"], "b'ab'"),
    (["E", "ValueError", "bad value", "builtins"], "raises ValueError: bad value"),
    (["E", "StopIteration", "", "builtins"], "raises StopIteration"),
    (["API", "missing", "m has no f"], "API change (missing): m has no f"),
    (["T", "pkg.mod.Meter"], "<pkg.mod.Meter object>"),
    (["list", 3], "list of 3 items"),
    (["tuple", 0], "tuple of 0 items"),
    (["gen", 20], "gen of 20 items"),
    (["dict", 2, [["str", "a"], ["int", 1]]], "dict with keys ['a', 1]"),
    (["dict", 1, ["pkg.Key"]], "dict with keys [<pkg.Key>]"),
    (["set", 2, [["int", 1], ["int", 2]]], "{1, 2}"),
    (["set", 300, "0123456789abcdef"], "set of 300 items"),
    (["enum", "Color.RED"], "Color.RED"),
    (["fn", "builtins.len"], "builtins.len"),
    (["cycle"], "cycle"),
    (["unstable"], "unstable"),
    (["unobservable", "RuntimeError", "no len"], "cannot be observed: raises RuntimeError: no len"),
    (["i~", 16610, 123], "i~ 16610 123"),
], ids=repr)
def test_leaf_text(leaf: list, text: str) -> None:
    assert leaf_text(leaf) == text


def test_leaf_text_of_missing_leaves() -> None:
    assert leaf_text(None) == "(not present)"
    assert leaf_text(None, ["i", 1]) == "(not present)"
    assert leaf_text(None, ["E", "KeyError", "'k'", "builtins"]) == "returns normally"
    assert leaf_text(None, ["API", "missing", "gone"]) == "returns normally"
