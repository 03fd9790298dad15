"""Tests for `difforacle.generator.generation.values.constants`: GRT's constant mining (literal
sources, folding, TF-IDF, pools), and the literals of a module or of given lines."""

from __future__ import annotations

import math
import random
import re
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange, Unit
from difforacle.generator.generation.values.constants import (
    Constants,
    literal_constants,
    mine_change,
    mine_constants,
    package_modules,
    regex_examples,
    tf_idf_weights,
)
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.worker.literals import decode


def _mined(source: str) -> list[list]:
    return literal_constants(textwrap.dedent(source))


# ---------------------------------------------------------------- literal sources


@pytest.mark.parametrize("source, expected", [
    ("def f(x):\n    return x == 'h'\n", [["str", "h"]]),  # comparison operands
    ("def f(n):\n    return n > 10\n", [["int", 10]]),
    ("def f(n):\n    return 2.5 <= n\n", [["float", "2.5"]]),
    ("def f(x):\n    return x in ('a', 'b')\n", [["str", "a"], ["str", "b"]]),  # `in` tuples, lists, sets
    ("def f(x):\n    return x not in [3, 4]\n", [["int", 3], ["int", 4]]),
    ("def f(x):\n    return x in {b'k'}\n", [["bytes", "6b"]]),
    ("D = {'key': 9.5, 7: 'seven'}\n", [["str", "key"], ["float", "9.5"], ["int", 7], ["str", "seven"]]),
    ("def f(s):\n    return s.startswith('v')\n", [["str", "v"]]),  # string method arguments
    ("def f(s):\n    return s.endswith(('.py', '.pyi'))\n", [["str", ".py"], ["str", ".pyi"]]),
    ("def f(s):\n    return s.split(';', 1)\n", [["str", ";"], ["int", 1]]),
    ("def f(s):\n    return s.replace('-', '_').strip('/')\n", [["str", "-"], ["str", "_"], ["str", "/"]]),
    ("def f(s):\n    return s.find('@') + s.index(':')\n", [["str", "@"], ["str", ":"]]),
    ("import enum\nclass C(enum.Enum):\n    RED = 1\n    GREEN = 'g'\n", [["int", 1], ["str", "g"]]),
    ("def f(n):\n    return n == -1\n", [["int", -1]]),  # a negative number, not 1
    ("def f(n):\n    return n < -2.5\n", [["float", "-2.5"]]),
    ("T = 60 * 60\n", [["int", 60], ["int", 3600]]),  # folded, its operands kept
    ("K = 2 ** 10\n", [["int", 2], ["int", 10], ["int", 1024]]),
    ("M = (1 << 4) | 1\n", [["int", 1], ["int", 4], ["int", 17]]),
    ("S = 'ab' + 'cd'\n", [["str", "ab"], ["str", "cd"], ["str", "abcd"]]),
    ("H = -(60 * 60)\n", [["int", 60], ["int", -3600]]),
    ("def f(c):\n    return c in '+-'\n", [["str", "+"], ["str", "-"], ["str", "+-"]]),  # characters
])
def test_each_literal_source_is_mined(source: str, expected: list[list]) -> None:
    assert sorted(literal_constants(source), key=repr) == sorted(expected, key=repr)


def test_regex_patterns_and_examples_are_mined() -> None:
    found = _mined(r'''
        import re
        from re import fullmatch as fm
        DURATION = re.compile(r"^(\d+)([smh])$")
        def version(s):
            return re.match(rb"v\d+", s) or fm("[a-c]{2}", s)
    ''')
    assert ["str", r"^(\d+)([smh])$"] in found  # the pattern itself
    assert {"1s", "1m", "11h", "aa"} <= {lit[1] for lit in found if lit[0] == "str"}
    assert ["bytes", b"v1".hex()] in found


@pytest.mark.parametrize("pattern, flags, expected", [
    (r"^(\d+)([smh])$", 0, ["1s", "1m", "11h"]),
    (r"[^0-9]+\.(txt|md)", 0, ["a.txt", "a.md", "aa.txt"]),
    (r"colou?r", 0, ["color", "colour"]),
    (r"a b  # spaces are layout", re.X, ["ab"]),
    (rb"\x00[ab]", 0, [b"\x00a", b"\x00b"]),
])
def test_regex_examples_of_simple_patterns(pattern: str | bytes, flags: int, expected: list) -> None:
    examples = regex_examples(pattern, flags)
    assert examples[: len(expected)] == expected
    assert all(re.fullmatch(pattern, e, flags) for e in examples)


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=x)y", r"(?<!a)b", r"(?(1)a|b)", "x" * 300, "[unclosed"])
def test_regex_examples_skip_complex_or_broken_patterns(pattern: str) -> None:
    assert regex_examples(pattern) == []


def test_regex_examples_with_unknown_flags_are_skipped() -> None:
    found = _mined('''
        import re
        def f(s, flags):
            return re.match(r"\\d+", s, flags), re.match(r"x\\d", s, re.I)
    ''')
    strings = {lit[1] for lit in found if lit[0] == "str"}
    assert "1" not in strings and "x1" in strings  # VERBOSE could hide in `flags`


def test_module_and_class_constants_propagate_to_their_uses() -> None:
    source = textwrap.dedent('''\
        UNIT = "h"
        MINUTE = 60
        HOUR = 60 * MINUTE
        class Timer:
            LIMIT = HOUR + 1
            def check(self, unit, n):
                return unit == UNIT and n < self.LIMIT and n > Timer.LIMIT
    ''')
    assert ["int", 3601] in literal_constants(source)
    # the changed line names its constants: their values are the hunk's literals
    assert literal_constants(source, [7]) == [["str", "h"], ["int", 3601]]


def test_rebound_names_are_not_propagated() -> None:
    source = textwrap.dedent('''\
        LIMIT = 5
        STEP = 2
        def f(LIMIT):
            for STEP in range(3):
                pass
            return LIMIT, STEP
    ''')
    assert literal_constants(source, [6]) == []


def test_prose_is_not_mined() -> None:
    found = _mined('''
        """Module docstring."""
        import logging
        log = logging.getLogger()
        def f(x):
            """Function docstring."""
            assert x, "assert message"
            log.warning("log message %s", x)
            if x == "kept":
                raise ValueError("error message")
            return f"fragment {x} tail"
    ''')
    assert [lit[1] for lit in found if lit[0] == "str"] == ["kept"]


def test_folding_is_guarded() -> None:
    started = time.monotonic()
    found = _mined('''
        A = "x" * 10 ** 9
        B = 2 ** 10 ** 10
        C = 1 << 10 ** 6
        D = 1 / 0
        E = "%s" % 5
    ''')
    assert time.monotonic() - started < 2
    assert ["int", 10 ** 9] in found  # the part that folds
    assert not [lit for lit in found if lit[0] == "str" and len(lit[1]) > 80]
    assert ["str", "5"] not in found  # formatting is output, not folded


def test_every_mined_literal_decodes() -> None:
    source = Path(__file__).read_text()
    for literal in literal_constants(source):
        decode(literal)


def test_deeply_nested_source_does_not_crash() -> None:
    assert ["int", 1] in literal_constants("x = " + " + ".join(["a"] * 800 + ["1"]) + "\n")
    assert literal_constants("x = " + " + ".join(["a"] * 5000) + "\n") == []  # too deep for ast.parse


# ---------------------------------------------------------------- TF-IDF


def test_tf_idf_favours_constants_used_in_more_modules() -> None:
    documents = [Counter({"wide": 1, "narrow": 3}), Counter({"wide": 1}), Counter({"wide": 1}),
                 Counter({"other": 1})]
    weights = tf_idf_weights(documents)
    assert weights["wide"] > weights["narrow"]  # same tf (3), in 3 modules instead of 1
    assert weights["wide"] == pytest.approx(3 * math.log(5 / 2))
    assert weights["narrow"] == pytest.approx(3 * math.log(5 / 4))


def test_tf_idf_grows_with_the_number_of_uses() -> None:
    weights = tf_idf_weights([Counter({"often": 5, "once": 1}), Counter({"x": 1})])
    assert weights["often"] == pytest.approx(5 * weights["once"])


def _package(tmp_path: Path, modules: dict[str, str]) -> list[Path]:
    paths = []
    for name, source in modules.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
        paths.append(path)
    return paths


def test_package_pool_is_ranked_by_tf_idf(tmp_path: Path) -> None:
    changed, a, b, c = _package(tmp_path, {
        "pkg/mod.py": "X = 'local'\n",
        "pkg/a.py": "A = ['wide', 'narrow', 'narrow']\n",
        "pkg/b.py": "B = 'wide'\n",
        "pkg/c.py": "C = 'wide'\n",
    })
    constants = mine_constants([changed], {}, [], [a, b, c])
    assert constants.module == [["str", "local"]]
    assert constants.package == [["str", "wide"], ["str", "narrow"]]  # heaviest first
    assert constants.weights == {repr(["str", "wide"]): pytest.approx(3 * math.log(5 / 2)),
                                 repr(["str", "narrow"]): pytest.approx(2 * math.log(5 / 4))}


def test_package_pool_is_drawn_by_weight(tmp_path: Path) -> None:
    constants = Constants(package=[["int", 1000], ["int", 2000]],
                          weights={repr(["int", 1000]): 9.0, repr(["int", 2000]): 1.0})
    values = ValueGenerator(random.Random(4), constants)
    drawn = Counter(values.integer()[1] for _ in range(4000))
    assert 5 < drawn[1000] / drawn[2000] < 14  # 9 to 1
    assert 0.35 < (drawn[1000] + drawn[2000]) / 4000 < 0.65  # the pools' shares fall through to it


def test_pool_shares_with_every_pool() -> None:
    constants = Constants(hunk=[["int", 1001]], module=[["int", 1002]], tests=[["int", 1003]],
                          package=[["int", 1004]], weights={repr(["int", 1004]): 2.0})
    values = ValueGenerator(random.Random(8), constants)
    drawn = Counter(values.integer()[1] for _ in range(5000))
    shares = {n: drawn[n] / 5000 for n in (1001, 1004, 1002, 1003)}
    for n, share in zip((1001, 1004, 1002, 1003), (0.35, 0.10, 0.15, 0.20), strict=True):
        assert shares[n] == pytest.approx(share, abs=0.03)


# ---------------------------------------------------------------- pools


def test_hunk_pool_is_separate(tmp_path: Path) -> None:
    base, head, other = _package(tmp_path, {
        "base/pkg/mod.py": "A = 'old'\nB = 'same'\n",
        "head/pkg/mod.py": "A = 'new'\nB = 'same'\n",
        "base/pkg/other.py": "C = 'same'\nD = 'old'\n",
    })
    constants = mine_constants([base], {base: {1}, head: {1}}, [], [other])
    assert constants.hunk == [["str", "old"], ["str", "new"]]
    assert constants.module == [["str", "same"]]
    assert constants.package == []  # every literal of other.py is in an earlier pool
    # the head file is not a TF-IDF document: only its changed lines count
    assert mine_constants([base], {head: {2}}).hunk == [["str", "same"]]


def test_tests_pool_skips_literals_seen_before(tmp_path: Path) -> None:
    mod, test = _package(tmp_path, {"pkg/mod.py": "A = 1\n",
                                    "tests/test_mod.py": "def test():\n    f(1, 'z')\n"})
    assert mine_constants([mod], {}, [test]).tests == [["str", "z"]]


def test_mining_is_deterministic(tmp_path: Path) -> None:
    files = _package(tmp_path, {f"pkg/m{i}.py": f"X = {i % 3}\nY = 'k{i % 4}'\nZ = {i} * 60\n"
                                for i in range(12)})
    first = mine_constants(files[:1], {files[0]: {1}}, [], files)
    again = mine_constants(files[:1], {files[0]: {1}}, [], list(files))
    assert first == again
    draws = [[ValueGenerator(random.Random(3), c).make(t) for t in ("builtins.int", "builtins.str") * 50]
             for c in (first, again)]
    assert draws[0] == draws[1]


# ---------------------------------------------------------------- package modules


def test_package_modules_nearest_first(tmp_path: Path) -> None:
    mod, sibling, cousin, top, init = _package(tmp_path, {
        "src/pkg/sub/mod.py": "", "src/pkg/sub/sibling.py": "", "src/pkg/other/cousin.py": "",
        "src/pkg/top.py": "", "src/pkg/__init__.py": "",
    })
    _package(tmp_path, {"src/pkg/tests/test_mod.py": "", "src/outside.py": "", "src/pkg/sub/test_x.py": ""})
    assert package_modules([(mod, "pkg.sub.mod")]) == [mod, sibling, init, top, cousin]
    assert package_modules([(mod, "pkg.sub.mod")], limit=2) == [mod, sibling]
    assert package_modules([(init, "pkg")])[0] == init


def test_package_modules_of_a_renamed_or_top_level_module(tmp_path: Path) -> None:
    moved, solo, helper = _package(tmp_path, {"old/mod.py": "", "lib.py": "", "helper.py": ""})
    _package(tmp_path, {"test_lib.py": "", "setup.py": ""})
    assert package_modules([(moved, "new.mod")]) == [moved]  # folders do not spell the name
    assert package_modules([(solo, "lib")]) == [solo, helper]  # a top-level module's folder


def test_regex_examples_mix_a_repeated_class() -> None:
    """A setext underline `[=-]+` is also `=-`: what a stricter `(?:=+|-+)` turns away."""
    examples = regex_examples(r"^.*?\n[=-]+[ ]*(\n|$)")
    assert any("=-" in e or "-=" in e for e in examples)
    assert all(re.fullmatch(r"(?s).*?\n[=-]+[ ]*(\n|)", e) for e in examples)


# ---------------------------------------------------------------- literal_constants

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


def test_the_key_that_selects_a_changed_function_from_a_table_is_a_hunk_literal(tmp_path: Path) -> None:
    source = ('def _pipe_row(cells):\n    return "|".join(cells)\n\n\n'
              'def _grid_row(cells):\n    return "+".join(cells)\n\n\n'
              '_STYLES = {\n    "pipe": _pipe_row,\n    "grid-v2": _grid_row,\n}\n')
    for side in ("base", "head"):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "__init__.py").write_text("")
        (tmp_path / side / "pkg" / "fmt.py").write_text(source)
    change = FileChange("pkg/fmt.py", "pkg/fmt.py", "pkg.fmt", frozenset({6}), frozenset({6}))
    unit = Unit("pkg.fmt", "_grid_row", "function", "modified", "pkg/fmt.py", 5, 6)
    base, head = (Checkout(side, "0" * 40, tmp_path / side, (tmp_path / side,)) for side in ("base", "head"))
    constants = mine_change(ChangeSet("0" * 40, (change,), (unit,)), base, head)
    assert ["str", "grid-v2"] in constants.hunk  # what a caller passes to reach the changed function
    assert ["str", "pipe"] not in constants.hunk and ["str", "pipe"] in constants.module
