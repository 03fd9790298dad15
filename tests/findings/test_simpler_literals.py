"""Literal shrinking (`difforacle.generator.findings.simpler_literals`): candidates are strictly
simpler, simplest first, and valid literals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from difforacle.generator.findings.simpler_literals import simpler, weight
from difforacle.generator.worker.literals import decode, encode


def test_integers_move_toward_zero_and_positive() -> None:
    assert list(simpler(["int", 0])) == []
    assert next(simpler(["int", 1000])) == ["int", 0]
    candidates = [lit[1] for lit in simpler(["int", -10])]
    assert candidates[:2] == [0, 10]
    assert all(abs(v) <= 10 for v in candidates)
    assert [lit[1] for lit in simpler(["int", 1])] == [0]


def test_strings_get_shorter() -> None:
    candidates = [lit[1] for lit in simpler(["str", "hello"])]
    assert candidates[0] == ""
    assert "h" in candidates and "hell" in candidates
    shorter = [c for c in candidates if len(c) < 5]
    assert candidates[: len(shorter)] == shorter  # all shorter ones first, then simpler characters
    assert "0ello" in candidates and "hell0" in candidates
    assert all(len(c) <= 5 for c in candidates)
    assert list(simpler(["str", ""])) == []
    assert list(simpler(["str", "0"])) == [["str", ""]]


def test_characters_get_simpler_in_place() -> None:
    candidates = [lit[1] for lit in simpler(["str", "5h"])]
    assert candidates.index("0h") < candidates.index("1h") < candidates.index("4h")


def test_floats_move_toward_short_decimals() -> None:
    candidates = [float(lit[1]) for lit in simpler(["float", repr(3.14159265)])]
    assert candidates[:2] == [0.0, 1.0]
    assert 3.0 in candidates and 3.1 in candidates
    assert list(simpler(["float", "0.0"])) == []
    assert ["float", "0.0"] in list(simpler(["float", "nan"]))


def test_containers_get_shorter_then_items_simpler() -> None:
    lit = ["list", [["int", 5], ["str", "ab"]]]
    candidates = list(simpler(lit))
    assert candidates[0] == ["list", []]
    assert ["list", [["int", 0], ["str", "ab"]]] in candidates
    pairs = ["dict", [[["str", "k"], ["int", 9]]]]
    assert ["dict", [[["str", "k"], ["int", 0]]]] in list(simpler(pairs))


def test_booleans_and_callbacks() -> None:
    assert list(simpler(["bool", True])) == [["bool", False]]
    assert list(simpler(["bool", False])) == []
    assert next(simpler(["fn", ["int", 7]])) == ["fn", ["int", 0]]
    assert next(simpler(["counter", 100])) == ["counter", 0]


def test_weight_orders_simple_before_complex() -> None:
    ordered = [["none"], ["bool", False], ["bool", True], ["int", 0], ["int", 1], ["int", -1], ["int", 2]]
    weights = [weight(lit) for lit in ordered]
    assert weights == sorted(weights) and len(set(weights)) == len(weights)


primitive = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(),
                      st.text(max_size=20), st.binary(max_size=10))
value = st.recursive(
    primitive,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(value)
def test_every_candidate_is_strictly_simpler_and_decodes(python_value: object) -> None:
    lit = encode(python_value, depth=10)
    assert lit is not None
    seen = []
    for candidate in simpler(lit):
        assert weight(candidate) < weight(lit)
        decode(candidate)  # a valid literal
        assert candidate not in seen  # no duplicates
        seen.append(candidate)


@settings(max_examples=100, deadline=None)
@given(value)
def test_repeated_shrinking_terminates(python_value: object) -> None:
    lit = encode(python_value, depth=10)
    assert lit is not None
    steps = 0
    while (candidate := next(simpler(lit), None)) is not None:
        lit, steps = candidate, steps + 1
        assert steps < 10_000
    # greedy shrinking ends at the simplest literal of its kind
    assert lit in (["none"], ["bool", False], ["int", 0], ["float", "0.0"], ["str", ""], ["bytes", ""],
                   ["list", []], ["tuple", []], ["dict", []])


def test_streams_files_and_times_shrink_to_simple_ones() -> None:
    assert next(simpler(["textio", "hello\nworld"])) == ["textio", ""]
    assert next(simpler(["path", "abc"])) == ["path", ""]
    assert next(simpler(["bytesio", "00ff"])) == ["bytesio", ""]
    assert list(simpler(["datetime", "1999-12-31T23:59:59"])) == [["datetime", "2000-01-01T00:00:00"]]
    assert list(simpler(["date", "1999-12-31"])) == [["date", "2000-01-01"]]
    assert list(simpler(["datetime", "2000-01-01T00:00:00"])) == []
    assert next(simpler(["timedelta", "3600.5"])) == ["timedelta", "0.0"]
    for lit in (["textio", "hello"], ["datetime", "1999-12-31T23:59:59"], ["timedelta", "90"]):
        steps = 0
        while (candidate := next(simpler(lit), None)) is not None:
            assert weight(candidate) < weight(lit)
            decode(candidate)
            lit, steps = candidate, steps + 1
        assert steps < 100


def test_a_container_subclass_shrinks_to_the_plain_container_first() -> None:
    """Whether the difference needs the subclass at all is the first thing the minimizer asks."""
    pairs = [[["str", "a"], ["int", 1]], [["str", "b"], ["int", 2]]]
    candidates = list(simpler(["ordereddict", pairs]))
    assert candidates[0] == ["dict", pairs]
    assert ["ordereddict", pairs[:1]] in candidates  # its items shrink as a dict's, the subclass kept
    assert weight(["dict", pairs]) < weight(["ordereddict", pairs])
    assert next(iter(simpler(["sublist", [["int", 0]]]))) == ["list", [["int", 0]]]
