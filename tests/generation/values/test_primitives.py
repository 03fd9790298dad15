"""Tests for `difforacle.generator.generation.values.primitives`: the seeded primitive generator,
drawing on mined constants."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator, type_from_name
from difforacle.generator.worker.literals import decode

# ---------------------------------------------------------------- ValueGenerator

TYPES = ["builtins.int", "builtins.str", "builtins.float", "builtins.bool", "builtins.bytes",
         "builtins.NoneType", "builtins.list", "builtins.tuple", "builtins.dict", "builtins.set",
         "builtins.frozenset"]
CONSTANTS = Constants(hunk=[["int", 4242], ["str", "HUNK"]], module=[["int", 77], ["float", "6.5"]],
                      tests=[["str", "from-tests"], ["bytes", "beef"]])


def _draws(seed: int, constants: Constants = CONSTANTS) -> list:
    values = ValueGenerator(random.Random(seed), constants)
    drawn = [values.make(t) for _ in range(30) for t in TYPES]
    drawn += [values.any() for _ in range(100)]
    return drawn


def test_same_seed_same_values() -> None:
    assert _draws(5) == _draws(5)
    assert _draws(5) != _draws(6)


def test_every_value_is_a_decodable_literal_of_the_asked_type() -> None:
    values = ValueGenerator(random.Random(1), CONSTANTS)
    expected = {"builtins.int": int, "builtins.str": str, "builtins.float": float, "builtins.bool": bool,
                "builtins.bytes": bytes, "builtins.NoneType": type(None), "builtins.list": list,
                "builtins.tuple": tuple, "builtins.dict": dict, "builtins.set": set,
                "builtins.frozenset": set}
    for _ in range(200):
        for type_name, python_type in expected.items():
            assert type(decode(values.make(type_name))) is python_type
        decode(values.any())


def test_sets_and_dict_keys_have_no_duplicates() -> None:
    values = ValueGenerator(random.Random(3), CONSTANTS)
    for _ in range(300):
        members = values.make("builtins.set")[1]
        assert len(members) == len({repr(m) for m in members}) == len(decode(["set", members]))
        pairs = values.make("builtins.dict")[1]
        assert len({repr(k) for k, _ in pairs}) == len(pairs)


def test_hunk_constants_are_drawn_often() -> None:
    values = ValueGenerator(random.Random(9), CONSTANTS)
    ints = Counter(values.integer()[1] for _ in range(2000))
    assert 0.28 < ints[4242] / 2000 < 0.42  # the hunk pool first, about a third of the time
    assert 0.18 < ints[77] / 2000 < 0.32  # then the module pool
    strings = Counter(values.string()[1] for _ in range(2000))
    assert strings["HUNK"] / 2000 > 0.25
    assert strings["from-tests"] > 0
    assert any(s.endswith("HUNK") and s != "HUNK" for s in strings)  # glued to a number
    assert Counter(values.real()[1] for _ in range(200))["6.5"] > 20
    assert Counter(values.raw()[1] for _ in range(200))["beef"] > 20


def test_without_constants_values_come_from_the_seeds() -> None:
    values = ValueGenerator(random.Random(2), Constants())
    assert all(isinstance(values.integer()[1], int) for _ in range(100))
    assert {values.make("builtins.NoneType")[0] for _ in range(3)} == {"none"}


@pytest.mark.parametrize("name, can", [
    ("builtins.int", True), ("?int", True), ("?str", True), ("?Dict", True), ("?Optional", False),
    ("pkg.mod.Thing", False), ("builtins.object", False),
])
def test_can_make(name: str, can: bool) -> None:
    assert ValueGenerator(random.Random(0), Constants()).can_make(name) is can


def test_unresolved_hint_names_make_their_builtin() -> None:
    values = ValueGenerator(random.Random(0), Constants())
    assert values.make("?int")[0] == "int"
    assert values.make("?str")[0] == "str"


def test_stdlib_types_are_made_as_values_of_that_type(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime
    import io
    import pathlib

    monkeypatch.chdir(tmp_path)  # path values are files in the working directory
    values = ValueGenerator(random.Random(4), CONSTANTS)
    expected = {"datetime.datetime": datetime.datetime, "datetime.date": datetime.date,
                "datetime.timedelta": datetime.timedelta, "_io.StringIO": io.StringIO,
                "_io.BytesIO": io.BytesIO, "pathlib.Path": pathlib.PosixPath}
    seen: dict[str, set[str]] = {name: set() for name in expected}
    for _ in range(100):
        for type_name, python_type in expected.items():
            lit = values.make(type_name)
            assert type(decode(lit)) is python_type, lit
            seen[type_name].add(repr(lit))
    assert all(len(lits) >= 5 for lits in seen.values()), seen  # varied, not one fixed value
    assert any("2024-02-29" in lit for lit in seen["datetime.datetime"])  # calendar edges among them


@pytest.mark.parametrize("name, type_name", [
    ("stream", "_io.StringIO"), ("fp", "_io.StringIO"), ("when", "datetime.datetime"),
    ("start_date", "datetime.date"), ("delta", "datetime.timedelta"), ("path", "builtins.str"),
])
def test_parameter_names_of_stdlib_types(name: str, type_name: str) -> None:
    assert type_from_name(name) == type_name


def test_parameters_of_no_known_type_sometimes_get_standard_numbers_and_times() -> None:
    """`get(*args)` whose body converts a `Decimal` is reached only if one is ever passed."""
    import datetime
    import decimal
    import fractions

    values = ValueGenerator(random.Random(4), CONSTANTS)
    kinds = {type(decode(values.any())) for _ in range(3000)}
    assert {decimal.Decimal, fractions.Fraction, datetime.datetime, datetime.date,
            datetime.timedelta} <= kinds


def test_nan_is_among_the_floats() -> None:
    import math

    values = ValueGenerator(random.Random(5), Constants())
    assert any(math.isnan(decode(values.real())) for _ in range(300))


def test_text_edits_draw_on_the_punctuation_of_the_changed_lines() -> None:
    values = ValueGenerator(random.Random(6), Constants(hunk=[["str", r"^[=-]+[ ]*\\n"], ["str", "abc"]]))
    assert set(values.hunk_punctuation) == set("^[=-]+ *\\")  # not the letters


def test_element_trees_of_html_tags() -> None:
    from xml.etree import ElementTree

    from difforacle.generator.worker.literals import modules_used, source

    values = ValueGenerator(random.Random(7), Constants(module=[["str", "a\x00<b>&"]]))
    made = [values.make("xml.etree.ElementTree.Element") for _ in range(200)]
    elements = [decode(literal) for literal in made]  # mined text with a NUL and markup: still parses
    assert all(isinstance(e, ElementTree.Element) for e in elements)
    assert any(len(e) for e in elements) and any(e.text for e in elements)  # children, texts
    literal = made[0]
    assert ElementTree.tostring(eval(source(literal), {"xml": __import__("xml.etree.ElementTree")})) \
        == ElementTree.tostring(decode(literal))
    assert modules_used(literal) == {"xml.etree.ElementTree"}
