"""Tests for `difforacle.generator.worker.purity`: static hints that a zero-argument method is an observer."""

from __future__ import annotations

import functools

import pytest

from difforacle.generator.worker import purity
from difforacle.generator.worker.purity import is_observer_candidate, name_suggests_mutation

COUNTER = 0


def record(value: object) -> object:
    return value


def _decorate(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


class Box:
    def __init__(self) -> None:
        self.items: list = []
        self.n = 0
        self.index = {"k": 1}

    # pure
    def get(self):
        return self.n

    def describe(self):
        parts = [str(self.n)]
        parts.append("box")  # a local list may be mutated
        return " ".join(parts) + repr(len(self.items))

    def uses_builtins(self):
        return len(self), sorted(self.items), isinstance(self, Box), str(self)

    def calls_pure(self):
        return self.get() + 1

    def copy_items(self):
        return self.items.copy()

    def calls_static(self):
        return self.helper() + self.maker()

    @staticmethod
    def helper():
        return 1

    @classmethod
    def maker(cls):
        return 2

    @_decorate
    def decorated(self):
        return self.n

    def lambda_inside(self):
        return (lambda x: x + 1)(self.n)

    def __len__(self):
        return len(self.items)

    # impure
    def assign(self):
        self.n = 1

    def aug_assign(self):
        self.n += 1

    def annotated_assign(self):
        self.n: int = 2

    def append_item(self):
        self.items.append(1)

    def sort_items(self):
        self.items.sort()

    def store_item(self):
        self.index["k"] = 2

    def delete_item(self):
        del self[0]

    def delete_nested(self):
        del self.index["k"]

    def delete_attribute(self):
        del self.n

    def pass_self(self):
        return record(self)

    def pass_self_by_keyword(self):
        return record(value=self)

    def pass_self_to_setattr(self, name="n"):
        setattr(self, name, 3)

    def uses_global(self):
        global COUNTER
        COUNTER += 1
        return COUNTER

    def calls_impure(self):
        return self.assign()

    def calls_mutator_name(self):
        return self.reset_all()

    def reset_all(self):
        return 0

    def passes_self_to_method(self):
        return self.combine(self)

    def combine(self, other):
        return other

    def generator(self):
        yield self.n


PURE = ["get", "describe", "uses_builtins", "calls_pure", "copy_items", "calls_static", "decorated",
        "lambda_inside", "__len__"]
IMPURE = ["assign", "aug_assign", "annotated_assign", "append_item", "sort_items", "store_item",
          "delete_item", "delete_nested", "delete_attribute", "pass_self", "pass_self_by_keyword",
          "pass_self_to_setattr", "uses_global", "calls_impure", "calls_mutator_name",
          "passes_self_to_method", "generator"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    purity._cache.clear()
    yield
    purity._cache.clear()


@pytest.mark.parametrize("name", PURE)
def test_pure_methods_are_candidates(name: str) -> None:
    assert is_observer_candidate(Box, Box.__dict__[name]) is True


@pytest.mark.parametrize("name", IMPURE)
def test_impure_methods_are_not_candidates(name: str) -> None:
    assert is_observer_candidate(Box, Box.__dict__[name]) is False


def test_property_getters_are_checked_like_methods() -> None:
    class Temperature:
        def __init__(self) -> None:
            self.reads = 0
            self.celsius = 20.0

        @property
        def fahrenheit(self):
            return self.celsius * 9 / 5 + 32

        @property
        def counted(self):
            self.reads += 1
            return self.reads

    assert is_observer_candidate(Temperature, Temperature.__dict__["fahrenheit"].fget) is True
    assert is_observer_candidate(Temperature, Temperature.__dict__["counted"].fget) is False


def test_c_functions_are_trusted_and_sourceless_code_is_not() -> None:
    assert is_observer_candidate(list, list.__len__) is True
    namespace: dict = {}
    exec("def made(self):\n    return 1\n", namespace)  # no source file to read
    assert is_observer_candidate(Box, namespace["made"]) is False


class Ring:
    """Mutually recursive pure methods: the analysis must terminate and accept them."""

    def __init__(self) -> None:
        self.n = 3

    def ping(self, k=3):
        return self.pong(k - 1) if k else self.n

    def pong(self, k=3):
        return self.ping(k - 1) if k else self.n

    def selfish(self, k=3):
        return self.selfish(k - 1) if k else self.n


def test_mutual_recursion_terminates() -> None:
    assert is_observer_candidate(Ring, Ring.ping) is True
    assert is_observer_candidate(Ring, Ring.pong) is True
    assert is_observer_candidate(Ring, Ring.selfish) is True


class Tangle:
    """`front` only delegates to `back`, which mutates: neither is an observer."""

    def __init__(self) -> None:
        self.n = 0

    def front(self):
        return self.back()

    def back(self):
        result = self.front()
        if result:
            self.n += 1
        return result


@pytest.mark.parametrize("order", [("front", "back"), ("back", "front")])
def test_mutual_recursion_with_an_impure_partner_is_rejected_in_any_order(order: tuple[str, str]) -> None:
    verdicts = {name: is_observer_candidate(Tangle, getattr(Tangle, name)) for name in order}
    assert verdicts == {"front": False, "back": False}


class Chain:
    """Each method delegates one level down; the bottom two levels are well within the depth bound."""

    def __init__(self) -> None:
        self.n = 1

    def a_top(self):
        return self.b_mid()

    def b_mid(self):
        return self.c_low()

    def c_low(self):
        return self.d_base()

    def d_base(self):
        return self.n


def test_verdict_does_not_depend_on_which_method_was_asked_first() -> None:
    alone = is_observer_candidate(Chain, Chain.c_low)
    purity._cache.clear()
    is_observer_candidate(Chain, Chain.a_top)  # reaches c_low with the depth budget exhausted
    assert alone is True
    assert is_observer_candidate(Chain, Chain.c_low) is alone


@pytest.mark.parametrize("name, expected", [
    ("pop", True), ("popleft", True), ("clear", True), ("reset", True), ("add_x", True), ("set_value", True),
    ("update", True), ("increment", True), ("Reset", True), ("get", False), ("total", False),
    ("describe", False), ("count", False), ("__len__", False), ("__setitem__", True),
])
def test_name_suggests_mutation(name: str, expected: bool) -> None:
    assert name_suggests_mutation(name) is expected
