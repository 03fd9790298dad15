"""Tests for `difforacle.generator.worker.literals`: tagged literals, their decoding and their source form."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from difforacle.generator.worker import literals
from difforacle.generator.worker.literals import decode, encode, source


def _same(a: Any, b: Any) -> bool:
    """Equality that also checks types (1 == 1.0 == True is not enough) and treats NaN as equal."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _round_trip(value: Any) -> Any:
    """Encode, travel through JSON like a request does, decode."""
    lit = encode(value)
    assert lit is not None, value
    return decode(json.loads(json.dumps(lit)))


PRIMITIVES = [0, 1, -7, 2**70, -(2**70), 0.0, 1.5, -2.25, 1e300, 5e-324, float("inf"), float("-inf"),
              "", "abc", "ünï\u2603", "quote'\"\\\n\t", b"", b"\x00\xffab", True, False, None]


@pytest.mark.parametrize("value", PRIMITIVES, ids=repr)
def test_primitives_round_trip_through_json(value: Any) -> None:
    assert _same(_round_trip(value), value)


def test_nan_round_trips() -> None:
    assert math.isnan(_round_trip(float("nan")))


def test_negative_zero_keeps_its_sign() -> None:
    back = _round_trip(-0.0)
    assert back == 0.0 and math.copysign(1.0, back) == -1.0
    assert encode(-0.0) == ["float", "-0.0"]


def test_bool_is_not_encoded_as_int() -> None:
    assert encode(True) == ["bool", True]
    assert encode(1) == ["int", 1]
    assert type(decode(encode(True))) is bool


def test_tags_of_primitives() -> None:
    assert encode(None) == ["none"]
    assert encode(b"ab") == ["bytes", "6162"]
    assert encode(float("nan")) == ["float", "nan"]
    assert encode("s") == ["str", "s"]


NESTED = [
    [1, "a", None],
    (1,),
    (),
    [],
    {},
    set(),
    {1, 2, 3},
    {"k": [1, (2, 3)], "j": {"x": None}},
    [(1, "a"), [b"z", 2.5]],
    {(1, 2): "tuple key", 3: "int key"},
    {("a",), (b"b", None)},
]


@pytest.mark.parametrize("value", NESTED, ids=repr)
def test_containers_round_trip(value: Any) -> None:
    assert _same_loose(_round_trip(value), value)


def test_decode_builds_a_fresh_object_each_time() -> None:
    lit = encode([[1], {"a": 2}])
    first, second = decode(lit), decode(lit)
    assert first == second
    assert first is not second and first[0] is not second[0] and first[1] is not second[1]


def test_encode_refuses_objects_and_too_deep_nesting() -> None:
    assert encode(object()) is None
    assert encode([1, object()]) is None
    assert encode({"k": object()}) is None
    assert encode([[[[1]]]]) is None  # depth 3 by default
    assert encode([[[1]]]) == ["list", [["list", [["list", [["int", 1]]]]]]]
    assert encode(1 + 2j) is None


def test_decode_rejects_unknown_tags() -> None:
    with pytest.raises(ValueError, match="unknown literal tag"):
        decode(["complex", "1j"])
    with pytest.raises(ValueError, match="unknown literal tag"):
        source(["complex", "1j"])


# ---------------------------------------------------------------- source


@pytest.mark.parametrize("value", [*PRIMITIVES, *NESTED], ids=repr)
def test_source_evaluates_back_to_the_value(value: Any) -> None:
    assert _same_loose(eval(source(encode(value))), value)


@pytest.mark.parametrize("value, text", [
    (float("nan"), 'float("nan")'),
    (float("inf"), 'float("inf")'),
    (float("-inf"), 'float("-inf")'),
    (-0.0, "-0.0"),
    ((1,), "(1,)"),
    (("a",), "('a',)"),
    ((), "()"),
    (set(), "set()"),
    ({}, "{}"),
    ([], "[]"),
    ([set()], "[set()]"),
    ({"a": (1,)}, "{'a': (1,)}"),
    (b"\x00", "b'\\x00'"),
])
def test_source_text(value: Any, text: str) -> None:
    assert source(encode(value)) == text


def test_source_of_nan_evaluates_to_nan_and_one_tuple_stays_a_tuple() -> None:
    assert math.isnan(eval(source(encode(float("nan")))))
    assert eval(source(encode(((1,),)))) == ((1,),)
    assert type(eval(source(encode((1,))))) is tuple


def test_empty_set_source_is_a_set_not_a_dict() -> None:
    assert type(eval(source(encode(set())))) is set
    assert type(eval(source(encode([set(), {}])))[1]) is dict


def test_frozensets_inside_sets_and_dict_keys_decode() -> None:
    """encode() accepts a set of frozensets and a frozenset dict key: decode() must rebuild them."""
    for value in ({frozenset({1})}, {frozenset({1, 2}): "v"}):
        lit = encode(value)
        assert lit is not None
        assert decode(lit) == value
        assert eval(source(lit)) == value


# ---------------------------------------------------------------- property-based round trips

_leaves = (st.integers() | st.floats(allow_nan=True) | st.text(max_size=8) | st.binary(max_size=8)
           | st.booleans() | st.none())
_hashable = st.integers() | st.text(max_size=5) | st.booleans() | st.none() | st.binary(max_size=4)
_values = st.recursive(
    _leaves,
    lambda inner: (st.lists(inner, max_size=3) | st.tuples(inner) | st.tuples(inner, inner)
                   | st.sets(_hashable, max_size=3) | st.dictionaries(_hashable, inner, max_size=3)),
    max_leaves=8,
)


@settings(max_examples=150, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(_values)
def test_round_trip_and_source_of_generated_values(value: Any) -> None:
    lit = encode(value, depth=10)
    assert lit is not None
    assert _same_loose(decode(json.loads(json.dumps(lit))), value)
    assert _same_loose(eval(source(lit), {}), value)


def _same_loose(a: Any, b: Any) -> bool:
    """Type-checking equality where sets and dicts compare with NaN-aware recursion."""
    if isinstance(a, (set, dict)) or isinstance(b, (set, dict)):
        if type(a) is not type(b) or len(a) != len(b):
            return False
        if isinstance(a, set):
            return a == b
        return a.keys() == b.keys() and all(_same_loose(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same_loose(x, y) for x, y in zip(a, b)))
    return _same(a, b)


# ---------------------------------------------------------------- callbacks


def test_fn_literal_decodes_to_a_function_returning_the_value() -> None:
    made = decode(["fn", ["int", 3]])
    assert callable(made)
    assert made() == 3 and made(1, 2, key="x") == 3
    fresh = decode(["fn", ["list", [["int", 1]]]])
    assert fresh() == [1]


@pytest.mark.parametrize("lit", [
    ["fn", ["int", 3]],
    ["fn", ["float", "nan"]],
    ["tuple", [["fn", ["str", "a"]]]],
    ["list", [["fn", ["int", 1]], ["int", 2]]],
    ["dict", [[["str", "k"], ["fn", ["none"]]]]],
])
def test_fn_literal_source_evaluates_to_an_equivalent_function(lit: list) -> None:
    from_source, decoded = eval(source(lit)), decode(lit)

    def calls(value: Any) -> Any:
        if callable(value):
            return ("fn", repr(value(0, k=1)))
        if isinstance(value, (list, tuple)):
            return type(value)(calls(v) for v in value)
        if isinstance(value, dict):
            return {k: calls(v) for k, v in value.items()}
        return value

    assert calls(from_source) == calls(decoded)


def test_counter_literal_counts_up_per_decoded_function_and_renders_the_same() -> None:
    clock = decode(["counter", 5])
    assert [clock(), clock("key", "value", 1.0), clock()] == [5, 6, 7]
    assert decode(["counter", 5])() == 5  # a fresh clock per decode: sequences stay independent
    rendered = eval(source(["counter", 5]), {"itertools": itertools})
    assert [rendered(), rendered(1, 2)] == [5, 6]


def test_observations_rewind_counting_clocks() -> None:
    """A clock read by an observer is back where the statement left it afterwards, and each
    block sees it from there: as the rendered test's single, final assertion does."""
    clock = literals.decode(["counter", 5])
    assert clock() == 5
    with literals.clocks_rewound():
        assert (clock(), clock()) == (6, 7)
    with literals.clocks_rewound():
        assert clock() == 6
    assert clock() == 6 and clock() == 7
    literals.forget_clocks()
    with literals.clocks_rewound():  # a forgotten clock is no longer rewound
        clock()
    assert clock() == 9


STDLIB_LITERALS = [["datetime", "2024-02-29T12:30:45"], ["datetime", "9999-12-31T23:59:59.999999"],
                   ["date", "1970-01-01"], ["timedelta", "90.5"], ["timedelta", "-1"],
                   ["textio", "a b\nc"], ["bytesio", "00ff"]]


@pytest.mark.parametrize("lit", STDLIB_LITERALS)
def test_stdlib_literals_decode_and_render_the_same_value(lit: list) -> None:
    import datetime
    import io

    value = decode(lit)
    rendered = eval(source(lit), {"datetime": datetime, "io": io})
    assert type(rendered) is type(value)
    if isinstance(value, (io.StringIO, io.BytesIO)):
        assert rendered.getvalue() == value.getvalue() and value.tell() == 0
    else:
        assert rendered == value
    assert decode(lit) is not value  # a fresh stream each time: reading one leaves the next full
    assert literals.modules_used(lit) == {source(lit).split(".")[0]}


def test_a_path_literal_is_a_relative_path_to_a_file_holding_its_text(tmp_path, monkeypatch) -> None:
    import pathlib

    monkeypatch.chdir(tmp_path)
    path = decode(["path", "first\nsecond"])
    assert isinstance(path, pathlib.Path) and not path.is_absolute()
    assert path.read_text(encoding="utf-8") == "first\nsecond"
    assert path.name == literals.input_file_name("first\nsecond") == decode(["path", "first\nsecond"]).name
    assert decode(["path", "other"]).name != path.name
    rendered = eval(source(["path", "first\nsecond"]), {"pathlib": pathlib})
    assert rendered == path


def test_a_sequence_sees_only_its_own_input_files(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    literals.forget_clocks()
    decode(["path", "one"])
    decode(["path", "two"])
    assert len(list(tmp_path.iterdir())) == 2  # one sequence's files stay together
    literals.forget_clocks()  # the next sequence
    decode(["path", "three"])
    assert [p.name for p in tmp_path.iterdir()] == [literals.input_file_name("three")]
    (tmp_path / "data.csv").write_text("kept")  # files the project writes are not ours to delete
    literals.forget_clocks()
    decode(["path", "four"])
    expected = ["data.csv", literals.input_file_name("four")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected)


def test_modules_and_input_files_of_nested_literals() -> None:
    nested = ["dict", [[["str", "k"], ["list", [["path", "x"], ["counter", 1]]]],
                       [["str", "when"], ["fn", ["date", "2000-01-01"]]]]]
    assert literals.modules_used(nested) == {"pathlib", "itertools", "datetime"}
    assert literals.input_files(nested) == {literals.input_file_name("x"): "x"}
    assert literals.input_files(["str", "x"]) == {} and literals.modules_used(["int", 1]) == set()


@pytest.mark.parametrize(("lit", "type_name"), [
    (["ordereddict", [[["str", "b"], ["int", 2]], [["str", "a"], ["int", 1]]]], "OrderedDict"),
    (["defaultdict", [[["str", "a"], ["list", []]]]], "defaultdict"),
    (["tally", [[["str", "a"], ["int", 3]]]], "Counter"),
    (["subdict", [[["int", 1], ["str", "x"]]]], "MyDict"),
    (["sublist", [["int", 1], ["sublist", [["str", "y"]]]]], "MyList"),
])
def test_a_container_subclass_decodes_and_renders_with_its_items_in_order(lit: list, type_name: str) -> None:
    import collections

    value = decode(lit)
    rendered = eval(source(lit), {"collections": collections})
    plain = decode([literals.SUBCLASS_TAGS[lit[0]][0], lit[1]])
    assert type(value).__name__ == type(rendered).__name__ == literals.TYPE_NAMES[lit[0]] == type_name
    assert type(value) is not type(plain) and isinstance(value, type(plain))  # a subclass, not the type
    assert rendered == value == plain and list(rendered) == list(value) == list(plain)
    assert decode(lit) is not value
    standard = source(lit).startswith("collections.")
    assert literals.modules_used(lit) == ({"collections"} if standard else set())
    found = [part[0] for part in literals.parts(lit)]
    assert found[0] == lit[0] and len(found) > 1  # its items are parts of it


def test_a_defaultdict_literal_has_no_default_factory() -> None:
    """It differs from the dict only in its type: a missing key still raises."""
    with pytest.raises(KeyError):
        decode(["defaultdict", []])["missing"]
