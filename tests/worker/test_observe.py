"""Tests for `difforacle.generator.worker.observe`: flat, comparable snapshots of values and object states."""

from __future__ import annotations

import enum
import itertools
import json
import time
from typing import Any

import pytest

from difforacle.generator.worker.observe import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_STR,
    Observer,
    clean_text,
    exception_leaf,
    mask_folders,
    primitive_leaf,
)
from difforacle.generator.worker.protocol import ObservationKey


def snap(value: Any, key: str = "0/0", observer: Observer | None = None) -> tuple[dict, str]:
    out: dict = {}
    digest = (observer or Observer()).snapshot(out, key, value)
    return out, digest


# ---------------------------------------------------------------- primitives


@pytest.mark.parametrize("value, leaf", [
    (None, ["n"]),
    (True, ["t", True]),
    (False, ["t", False]),
    (0, ["i", 0]),
    (-12, ["i", -12]),
    (1.5, ["f", "1.5"]),
    (float("nan"), ["f", "nan"]),
    (-0.0, ["f", "-0.0"]),
    ("abc", ["s", "abc"]),
    (b"ab", ["b", "6162"]),
    (1 + 2j, ["c", "(1+2j)"]),
])
def test_primitive_leaves(value: Any, leaf: list) -> None:
    out, _ = snap(value)
    assert out == {"0/0": leaf}
    assert primitive_leaf(value) == leaf


def test_snapshot_adds_to_existing_output() -> None:
    out = {"other": ["i", 1]}
    Observer().snapshot(out, "1/1", 2)
    assert out == {"other": ["i", 1], "1/1": ["i", 2]}


class _Made:
    """Keeps where it was made, as some libraries do to report a misuse (a stack entry)."""

    def __init__(self) -> None:
        import sys
        import traceback
        self.made_at = traceback.extract_stack(limit=2)[-1]
        self.stack = traceback.extract_stack(limit=3)
        self.code = _Made.__init__.__code__
        self.frame = sys._getframe()


def test_where_code_sits_is_observed_by_its_type_only() -> None:
    # a line number moves with any edit above it: no field of a stack entry, frame or code object
    out, _ = snap(_Made())
    assert out == {"0/0": ["T", f"{__name__}._Made"], "0/0.code": ["T", "builtins.code"],
                   "0/0.frame": ["T", "builtins.frame"], "0/0.made_at": ["T", "traceback.FrameSummary"],
                   "0/0.stack": ["T", "traceback.StackSummary"]}


# ---------------------------------------------------------------- containers


def test_list_items_get_index_keys() -> None:
    out, _ = snap([10, "a", [None]])
    assert out == {"0/0": ["list", 3], "0/0[0]": ["i", 10], "0/0[1]": ["s", "a"],
                   "0/0[2]": ["list", 1], "0/0[2][0]": ["n"]}


def test_tuple_items_get_index_keys() -> None:
    out, _ = snap((1, 2))
    assert out == {"0/0": ["tuple", 2], "0/0[0]": ["i", 1], "0/0[1]": ["i", 2]}


def test_a_tables_changed_entries_are_walked_beyond_its_first_items() -> None:
    """`also`: the keys and indices of the entries a change is in, wherever they are; only the
    outermost container's, only those it has, each once."""
    table = {f"k{i}": {"code": i} for i in range(10)}
    out: dict = {}
    Observer().snapshot(out, "0/0", table, items=3, also=["k8", "k1", "nowhere", 4, ["k", "9"]])
    walked = sorted({key.split("[")[1] for key in out if "[" in key})
    assert walked == ["'k0']", "'k1']", "'k2']", "'k8']"] and out["0/0['k8']['code']"] == ["i", 8]
    assert out["0/0"][1] == 10 and len(out["0/0"][2]) == 3  # the header lists the first three keys
    rows = [[i] for i in range(10)]
    out = {}
    Observer().snapshot(out, "0/0", rows, items=2, also=[7, 1, 12, -1, "7"])
    assert sorted(k for k in out if k.count("[") == 1) == ["0/0[0]", "0/0[1]", "0/0[7]"]
    nested = {"inner": {f"k{i}": i for i in range(30)}}
    out = {}
    Observer().snapshot(out, "0/0", nested, items=5, also=["k25"])
    assert not any("k25" in key for key in out)  # an inner table is walked as ever


def test_dict_items_get_repr_keys() -> None:
    out, _ = snap({"k": 1, 2: "two", True: None})
    assert out["0/0"][:2] == ["dict", 3]
    assert out["0/0['k']"] == ["i", 1]
    assert out["0/0[2]"] == ["s", "two"]
    assert out["0/0[True]"] == ["n"]


def test_long_lists_are_cut_at_max_items() -> None:
    out, _ = snap(list(range(1000)))
    assert out["0/0"] == ["list", 1000]
    assert f"0/0[{MAX_ITEMS - 1}]" in out and f"0/0[{MAX_ITEMS}]" not in out


def test_sets_are_sorted_whatever_the_insertion_order() -> None:
    values = ["pear", "apple", "fig", 3, 1, 2]
    forward, digest_forward = snap(set(values))
    backward: set = set()
    for v in reversed(values):
        backward.add(v)
    again, digest_backward = snap(backward)
    assert forward == again
    assert digest_forward == digest_backward
    assert forward["0/0"][2] == sorted(forward["0/0"][2])


def test_frozenset_and_set_elements_are_sorted_literals() -> None:
    out, _ = snap(frozenset({2, 1}))
    assert out == {"0/0": ["set", 2, [["int", 1], ["int", 2]]]}


def test_large_sets_with_colliding_hashes_have_one_snapshot() -> None:
    """Sets bigger than the 200 elements shown must not depend on insertion order either."""
    values = [i * 4096 for i in range(300)]  # equal low hash bits: insertion order decides the layout
    forward = set(values)
    backward = set(reversed(values))
    assert forward == backward
    assert snap(forward) == snap(backward)


# ---------------------------------------------------------------- addresses, cycles, depth, size


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_addresses_are_masked_in_exception_messages() -> None:
    out, _ = snap(ValueError(f"bad object at {id(object()):#x}"))
    assert out["0/0"] == ["exc", "ValueError", "bad object at 0x?", "builtins"]  # a value, not a raise
    assert clean_text("at 0x7FFFabcd1234 and 0x12") == "at 0x? and 0x12"


def test_broken_exception_str_is_an_observation() -> None:
    out, _ = snap(Unprintable())
    assert out["0/0"][:3] == ["exc", "Unprintable", "<unprintable>"]


def test_cycles_terminate() -> None:
    a: list = [1]
    a.append(a)
    out, _ = snap(a)
    assert out == {"0/0": ["list", 2], "0/0[0]": ["i", 1], "0/0[1]": ["cycle"]}


class Node:
    def __init__(self) -> None:
        self.me = self
        self.peers: list = []


def test_object_cycles_through_attributes_terminate() -> None:
    node = Node()
    node.peers.append(node)
    out, _ = snap(node)
    assert out["0/0.me"] == ["cycle"]
    assert out["0/0.peers[0]"] == ["cycle"]


def test_shared_but_acyclic_values_are_not_cycles() -> None:
    shared = [1]
    out, _ = snap([shared, shared])
    assert out["0/0[0]"] == out["0/0[1]"] == ["list", 1]


def test_depth_is_bounded() -> None:
    deep: list = [1]
    for _ in range(50):
        deep = [deep]
    out, _ = snap(deep)
    assert max(key.count("[") for key in out) == MAX_DEPTH
    assert out["0/0" + "[0]" * MAX_DEPTH] == ["T", "builtins.list"]


def test_huge_int_gives_a_small_leaf_quickly() -> None:
    start = time.perf_counter()
    out, _ = snap(10**5000)
    assert time.perf_counter() - start < 0.1
    leaf = out["0/0"]
    assert leaf[0] == "i~" and leaf[1] == (10**5000).bit_length()
    assert len(repr(leaf)) < 100
    other, _ = snap(10**5000 + 1)
    assert other["0/0"] != leaf


def test_big_ints_near_the_limit() -> None:
    assert snap(2**62 - 1)[0]["0/0"] == ["i", 2**62 - 1]
    assert snap(2**62)[0]["0/0"][0] == "i~"
    assert snap(-(2**62))[0]["0/0"][0] == "i~"


def test_megabyte_string_gives_a_small_leaf_quickly() -> None:
    text = "x" * 1_000_000
    start = time.perf_counter()
    out, _ = snap(text)
    assert time.perf_counter() - start < 0.1
    leaf = out["0/0"]
    assert leaf[0] == "s~" and leaf[1] == 1_000_000
    assert len(repr(leaf)) < 200
    assert snap(text[:-1] + "y")[0]["0/0"] != leaf
    assert snap("y" * (MAX_STR + 1))[0]["0/0"][0] == "s~"
    assert snap("y" * MAX_STR)[0]["0/0"] == ["s", "y" * MAX_STR]


def test_megabyte_bytes_give_a_small_leaf() -> None:
    leaf = snap(b"\x01" * 1_000_000)[0]["0/0"]
    assert leaf[0] == "b~" and leaf[1] == 1_000_000 and len(repr(leaf)) < 100


@pytest.mark.parametrize("value", [
    {10**5000: 1},
    {"k" * 1_000_000: 1},
    [{"a" * 1_000_000: 10**5000}],
], ids=["huge-int-key", "megabyte-str-key", "nested"])
def test_huge_dict_keys_give_bounded_keys_and_leaves(value: Any) -> None:
    start = time.perf_counter()
    out, _ = snap(value)
    assert time.perf_counter() - start < 0.5
    assert all(len(key) < 1000 for key in out), [len(key) for key in out]
    assert all(len(repr(leaf)) < 1000 for leaf in out.values())


def _naturals():
    n = 0
    while True:
        yield n
        n += 1


def test_generators_are_materialized_and_bounded() -> None:
    out, _ = snap(_naturals())
    assert out["0/0"] == ["gen", MAX_ITEMS]
    assert out["0/0[0]"] == ["i", 0] and out[f"0/0[{MAX_ITEMS - 1}]"] == ["i", MAX_ITEMS - 1]
    short, _ = snap(x * 2 for x in range(3))
    assert short == {"0/0": ["gen", 3], "0/0[0]": ["i", 0], "0/0[1]": ["i", 2], "0/0[2]": ["i", 4]}


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Level(enum.IntEnum):
    LOW = 1


def test_enum_leaves() -> None:
    assert snap(Color.RED)[0] == {"0/0": ["enum", "Color.RED"]}
    assert snap(Level.LOW)[0] == {"0/0": ["enum", "Level.LOW"]}
    assert snap([Color.GREEN])[0]["0/0[0]"] == ["enum", "Color.GREEN"]


def test_callables_are_named_not_addressed() -> None:
    assert snap(len)[0]["0/0"] == ["fn", "builtins.len"]
    assert snap(_naturals)[0]["0/0"] == ["fn", f"{__name__}._naturals"]
    assert snap(Node)[0]["0/0"][0] == "fn"


# ---------------------------------------------------------------- objects and observers

_TICKS = itertools.count()


class Meter:
    """Public state, private state, and every kind of observer and non-observer."""

    def __init__(self) -> None:
        self.readings = [1, 2]
        self.unit = "kWh"
        self.n = 0
        self._cache = {"secret": 1}

    @property
    def total(self) -> int:
        return sum(self.readings)

    @property
    def _hidden(self) -> int:
        return 1

    def count(self) -> int:
        return len(self.readings)

    def scaled(self, factor: int = 2) -> list:
        return [r * factor for r in self.readings]

    def reading(self, index: int) -> int:  # takes an argument: not an observer
        return self.readings[index]

    def tick(self) -> int:  # mutates self: not an observer
        self.n += 1
        return self.n

    def pop(self) -> int:  # mutator name
        return 0

    def clear(self) -> int:
        return 0

    def reset(self) -> int:
        return 0

    def add_x(self) -> int:
        return 0

    def token(self) -> int:  # different on every call: unstable
        return next(_TICKS)

    def broken(self) -> int:
        raise KeyError("missing")

    def _private(self) -> int:
        return 0

    def __len__(self) -> int:
        return len(self.readings)

    def __iter__(self):
        return iter(self.readings)

    def __contains__(self, item: object) -> bool:
        return item in self.readings

    def __str__(self) -> str:
        return f"Meter at {id(self):#x}"


def test_object_snapshot_has_type_public_attributes_and_observers() -> None:
    out, _ = snap(Meter())
    assert out == {
        "0/0": ["T", f"{__name__}.Meter"],
        "0/0.n": ["i", 0],
        "0/0.readings": ["list", 2],
        "0/0.readings[0]": ["i", 1],
        "0/0.readings[1]": ["i", 2],
        "0/0.unit": ["s", "kWh"],
        "0/0:total": ["i", 3],
        "0/0.count()": ["i", 2],
        "0/0.scaled()": ["list", 2],
        "0/0.scaled()[0]": ["i", 2],
        "0/0.scaled()[1]": ["i", 4],
        "0/0.token()": ["unstable"],
        "0/0.broken()": ["E", "KeyError", "'missing'", "builtins"],
        "0/0@len": ["i", 2],
        "0/0@list": ["list", 2],
        "0/0@list[0]": ["i", 1],
        "0/0@list[1]": ["i", 2],
        "0/0@str": ["s", "Meter at 0x?"],
    }


def test_observers_do_not_change_the_object() -> None:
    meter = Meter()
    snap(meter)
    assert meter.n == 0 and meter.readings == [1, 2]


@pytest.mark.parametrize("name", ["tick", "pop", "clear", "reset", "add_x", "reading", "_private", "_hidden"])
def test_mutators_and_non_observers_are_not_observed(name: str) -> None:
    suffixes = {suffix for suffix, _ in Observer().observers_of(Meter)}
    assert f".{name}()" not in suffixes and f":{name}" not in suffixes


def test_unstable_observer_stays_unstable_on_later_snapshots() -> None:
    observer = Observer()
    for _ in range(3):
        out, _ = snap(Meter(), observer=observer)
        assert out["0/0.token()"] == ["unstable"]
        assert out["0/0.count()"] == ["i", 2]


class Repr:
    def __repr__(self) -> str:
        return f"<Repr object at {id(self):#x}>"


class StrIsRepr:
    def __repr__(self) -> str:
        return "same"

    __str__ = __repr__


class Plain:
    pass


class Money:
    """Primitive state in slots; counts its observer's calls (in a class attribute, outside the state)."""

    __slots__ = ("__currency", "amount")
    calls = 0

    def __init__(self, amount: int, currency: str) -> None:
        self.amount, self.__currency = amount, currency

    def label(self) -> str:
        Money.calls += 1
        return f"{self.amount} {self.__currency}"


def test_an_object_observed_again_in_the_same_state_reuses_its_observer_leaves() -> None:
    observer, money = Observer(), Money(5, "EUR")
    first, _ = snap(money, observer=observer)
    calls = Money.calls
    again, _ = snap(money, key="1/0", observer=observer)  # a receiver, after a call that changed nothing
    assert Money.calls == calls
    assert {k[3:]: v for k, v in again.items()} == {k[3:]: v for k, v in first.items()}
    assert again["1/0.label()"] == ["s", "5 EUR"]
    money.amount = 7  # a changed state is observed afresh
    changed, _ = snap(money, key="2/0", observer=observer)
    assert Money.calls > calls
    assert changed["2/0.label()"] == ["s", "7 EUR"]


def test_observations_are_not_reused_across_sequences_or_for_container_state() -> None:
    observer, money = Observer(), Money(5, "EUR")
    snap(money, observer=observer)
    calls = Money.calls
    observer.forget_objects()  # a new sequence: ids of the last one's objects may be reused
    snap(money, observer=observer)
    assert Money.calls > calls

    class Basket:
        def __init__(self) -> None:
            self.items: list[int] = []

        def total(self) -> int:
            return sum(self.items)

    basket = Basket()
    snap(basket, observer=observer)
    basket.items.append(3)  # a change no primitive attribute shows
    out, _ = snap(basket, key="1/0", observer=observer)
    assert out["1/0.total()"] == ["i", 3]


def test_repr_observer_only_when_overridden_and_masked() -> None:
    assert snap(Repr())[0] == {"0/0": ["T", f"{__name__}.Repr"], "0/0@repr": ["s", "<Repr object at 0x?>"]}
    assert snap(Plain())[0] == {"0/0": ["T", f"{__name__}.Plain"]}
    assert set(snap(StrIsRepr())[0]) == {"0/0", "0/0@str"}


class Slotted:
    __slots__ = ("_secret", "unset", "value")

    def __init__(self) -> None:
        self.value = 5
        self._secret = 6


def test_slots_are_public_attributes_and_unset_slots_are_skipped() -> None:
    assert snap(Slotted())[0] == {"0/0": ["T", f"{__name__}.Slotted"], "0/0.value": ["i", 5]}


def test_disabled_type_names_get_no_observers() -> None:
    observer = Observer()
    observer.disabled = {f"{__name__}.Meter"}
    out, _ = snap(Meter(), observer=observer)
    assert not any(key.startswith(("0/0:", "0/0@")) or key.endswith("()") for key in out)
    assert out["0/0.unit"] == ["s", "kWh"]


def test_nested_objects_get_attributes_but_no_observers() -> None:
    out, _ = snap([Meter()])
    assert out["0/0[0]"] == ["T", f"{__name__}.Meter"]
    assert out["0/0[0].unit"] == ["s", "kWh"]
    assert "0/0[0]:total" not in out


# ---------------------------------------------------------------- digests


class Point:
    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)


def test_equal_states_have_equal_digests() -> None:
    assert snap(Point(x=1, y=[2]))[1] == snap(Point(x=1, y=[2]))[1]
    assert snap({"a": 1})[1] == snap({"a": 1})[1]
    assert snap([1, 2], key="3/1")[1] == snap([1, 2], key="0/0")[1]  # the key is not the state


@pytest.mark.parametrize("first, second", [
    ([1, 2], [1, 3]),
    ([1, 2], (1, 2)),
    ({"a": 1}, {"b": 1}),
    (1, 1.0),
    (1, True),
    ("1", 1),
    (Color.RED, Color.GREEN),
], ids=repr)
def test_different_values_have_different_digests(first: Any, second: Any) -> None:
    assert snap(first)[1] != snap(second)[1]


def test_different_object_states_have_different_digests() -> None:
    assert snap(Point(x=1))[1] != snap(Point(x=2))[1]
    assert snap(Point(x=1))[1] != snap(Point(x=1, y=1))[1]


def test_objects_differing_only_in_attribute_names_have_different_digests() -> None:
    """Point(x=1) and Point(y=1) are different states: the digest must not collapse them."""
    assert snap(Point(x=1))[1] != snap(Point(y=1))[1]


# ---------------------------------------------------------------- hostile values: a failure costs one leaf


class OddNames:
    """Attribute names no identifier spells, as real libraries make them (setattr, __dict__)."""

    def __init__(self) -> None:
        setattr(self, " .encoding", 1)  # a name `self.x` cannot spell
        self.__dict__["{0:3"] = 2
        self.__dict__[3] = "not a name"  # a key no attribute access can reach
        self.plain = 4


class LenRaises(list):
    def __len__(self) -> int:
        raise RuntimeError("no len")


class SecondItemRaises(dict):
    def __getitem__(self, key: object) -> object:
        if key == "b":
            raise LookupError("lost b")
        return super().__getitem__(key)


def lazily_failing():
    yield 1
    raise ValueError("lazy")


class GuardedAttribute:
    def __init__(self) -> None:
        self.secret, self.value = 1, 2

    def __getattribute__(self, name: str) -> object:
        if name == "secret":
            raise PermissionError("hidden")
        return object.__getattribute__(self, name)


class NoHash(type):
    def __hash__(cls) -> int:
        raise TypeError("no hash")


class HashlessType(metaclass=NoHash):
    pass


class NoDir(type):
    def __dir__(cls) -> list[str]:
        raise RuntimeError("no dir")


class Undirectable(metaclass=NoDir):
    def __init__(self) -> None:
        self.x = 1

    @property
    def total(self) -> int:
        return 1


class BadRepr:
    def __init__(self) -> None:
        self._items = LenRaises([1])  # private: only the digest's shape reads it

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")

    __hash__ = None  # type: ignore[assignment]


class OddModule:
    __module__ = 42  # type: ignore[assignment]


def _hostile_snapshot(value: Any) -> dict:
    out, digest = snap(value)
    assert digest and json.loads(json.dumps(out)) == out, "leaves are plain JSON"
    for key in out:
        assert ObservationKey.parse(key).text == key
    return out


def test_odd_attribute_names_are_quoted_in_keys_that_read_back() -> None:
    out = _hostile_snapshot(OddNames())
    assert out == {"0/0": ["T", f"{__name__}.OddNames"], "0/0.' .encoding'": ["i", 1],
                   "0/0.'{0:3'": ["i", 2], "0/0.plain": ["i", 4]}
    assert ObservationKey.parse("0/0.' .encoding'").steps[0].text == " .encoding"


def test_a_container_that_cannot_be_walked_is_unobservable_and_the_rest_is_kept() -> None:
    out = _hostile_snapshot([1, LenRaises([5]), SecondItemRaises(a=[7], b=2), lazily_failing()])
    assert out == {"0/0": ["list", 4], "0/0[0]": ["i", 1],
                   "0/0[1]": ["unobservable", "RuntimeError", "no len"],
                   "0/0[2]": ["unobservable", "LookupError", "lost b"],  # and its item 'a' is gone
                   "0/0[3]": ["unobservable", "ValueError", "lazy"]}


def test_an_attribute_whose_access_raises_is_an_exception_leaf() -> None:
    out = _hostile_snapshot(GuardedAttribute())
    assert out["0/0.secret"] == ["E", "PermissionError", "hidden", "builtins"]
    assert out["0/0.value"] == ["i", 2]


def test_a_type_that_cannot_be_hashed_or_listed_costs_its_own_snapshot_only() -> None:
    out = _hostile_snapshot([HashlessType(), Undirectable()])
    assert out["0/0[0]"] == ["unobservable", "TypeError", "no hash"]
    assert out["0/0[1]"] == ["T", f"{__name__}.Undirectable"] and out["0/0[1].x"] == ["i", 1]
    out = _hostile_snapshot(Undirectable())  # the top level: no observers, since dir() raised
    assert out == {"0/0": ["T", f"{__name__}.Undirectable"], "0/0.x": ["i", 1]}


def test_raising_repr_eq_hash_and_private_len_are_observations() -> None:
    out = _hostile_snapshot(BadRepr())
    assert out == {"0/0": ["T", f"{__name__}.BadRepr"],
                   "0/0@repr": ["E", "RuntimeError", "no repr", "builtins"]}


def test_a_module_name_that_is_no_string_is_never_formatted() -> None:
    assert _hostile_snapshot(OddModule()) == {"0/0": ["T", "?.OddModule"]}


@pytest.fixture
def checkout_folders() -> Any:
    """The observer told about this run's folders, as a worker is at init; forgotten afterwards."""
    mask_folders([["/tmp/difforacle-abc/base", "<checkout>"], ["/tmp/difforacle-base-x", "<tmp>"]])
    yield
    mask_folders([])


def test_the_runs_folders_are_written_as_placeholders(checkout_folders: None) -> None:
    path = "/tmp/difforacle-abc/base/pkg/assets/"
    assert primitive_leaf(path) == ["s", "<checkout>/pkg/assets/"]
    assert primitive_leaf("/tmp/difforacle-base-x/out.txt") == ["s", "<tmp>/out.txt"]
    assert primitive_leaf("/home/user/pkg/assets/") == ["s", "/home/user/pkg/assets/"]  # not the run's
    assert exception_leaf(FileNotFoundError(f"no {path}x"))[2] == "no <checkout>/pkg/assets/x"
    out: dict = {}
    Observer().snapshot(out, "0/0", {path: 1, "short": 2})
    assert out["0/0"][2] == [["str", "<checkout>/pkg/assets/"], ["str", "short"]]  # keys listed, masked
    assert "0/0['short']" in out and not any("difforacle-abc" in key for key in out)


def test_without_folders_nothing_is_masked() -> None:
    assert primitive_leaf("/tmp/difforacle-abc/base/x") == ["s", "/tmp/difforacle-abc/base/x"]
