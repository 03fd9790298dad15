"""Tests for `difforacle.generator.generation.values.primitives`: the seeded primitive generator,
drawing on mined constants."""

from __future__ import annotations

import random
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from difforacle.generator.generation.values.constants import Constants, literal_constants, mine_constants
from difforacle.generator.generation.values.primitives import ValueGenerator, type_from_name
from difforacle.generator.worker.literals import decode

SOURCE = textwrap.dedent('''\
    """Module docstring is prose, not a constant."""
    UNIT = "h"
    LIMIT = 3600


    def parse(text, scale=1.5):
        """Parse a duration."""
        if text.endswith(UNIT):
            return int(text[:-1]) * LIMIT
        if text == b"raw":
            return None
        flag = True
        big = 2 ** 70
        huge = 123456789012345678901234567890
        long_text = "x" * 3
        return 0.25 * scale + 7
''')


def test_literal_constants_of_a_whole_module() -> None:
    found = literal_constants(SOURCE)
    assert sorted(found, key=repr) == sorted([
        ["str", "h"], ["int", 3600], ["float", "1.5"], ["int", -1], ["bytes", "726177"], ["int", 2],
        ["int", 70], ["str", "x"], ["int", 3], ["str", "xxx"], ["float", "0.25"], ["int", 7],
    ], key=repr)  # `"x" * 3` folds to "xxx"; `2 ** 70` folds too, but is too large to keep


def test_literal_constants_skip_docstrings_bools_none_and_huge_ints() -> None:
    found = literal_constants(SOURCE)
    assert ["str", "Module docstring is prose, not a constant."] not in found
    assert ["str", "Parse a duration."] not in found
    assert not [lit for lit in found if lit[0] in ("bool", "none")]
    assert ["int", 123456789012345678901234567890] not in found


def test_literal_constants_skip_long_and_multiline_strings() -> None:
    source = f'a = "{"y" * 81}"\nb = "{"z" * 80}"\nc = """one\ntwo"""\nd = b"{"q" * 81}"\n'
    assert literal_constants(source) == [["str", "z" * 80]]


def test_literal_constants_are_distinct() -> None:
    assert literal_constants("a = 1\nb = 1\nc = 'k'\nd = 'k'\ne = 1.0\n") == [["int", 1], ["str", "k"],
                                                                              ["float", "1.0"]]


def test_literal_constants_only_on_given_lines() -> None:
    lines = SOURCE.splitlines()
    on = [i for i, line in enumerate(lines, 1) if "0.25" in line or 'b"raw"' in line]
    assert len(on) == 2
    expected = [["bytes", "726177"], ["float", "0.25"], ["int", 7]]
    assert sorted(literal_constants(SOURCE, on), key=repr) == expected
    assert literal_constants(SOURCE, []) == []
    assert literal_constants(SOURCE, [2]) == [["str", "h"]]


def test_literal_constants_are_in_order_of_appearance() -> None:
    source = "def f(x):\n    return x + 1\n\n\ny = 2\n"
    assert literal_constants(source) == [["int", 1], ["int", 2]]


def test_literal_constants_of_broken_source() -> None:
    assert literal_constants("def (:\n") == []


# ---------------------------------------------------------------- mine_constants


def test_mine_constants_pools(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text('A = "hunk"\nB = 11\nC = "module only"\n')
    other = tmp_path / "other.py"
    other.write_text("D = 22\nB = 11\n")
    test = tmp_path / "test_mod.py"
    test.write_text('def test_it():\n    assert f("from test") == 11\n    assert g(33) == "hunk"\n')
    constants = mine_constants([module, other], {module: {1, 2}}, [test])
    assert constants.hunk == [["str", "hunk"], ["int", 11]]
    assert constants.module == [["str", "module only"], ["int", 22]]  # without the hunk's constants
    assert constants.tests == [["str", "from test"], ["int", 33]]  # without constants seen before


def test_mine_constants_of_unchanged_and_missing_files(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text("X = 5\n")
    constants = mine_constants([module, tmp_path / "gone.py"], {})
    assert constants == Constants(hunk=[], module=[["int", 5]], tests=[])


def test_constants_by_tag() -> None:
    constants = Constants(hunk=[["int", 1], ["str", "a"]], module=[["int", 2]], tests=[["float", "1.0"]])
    assert constants.by_tag("int") == ([["int", 1]], [["int", 2]], [])
    assert constants.by_tag("float") == ([], [], [["float", "1.0"]])


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
