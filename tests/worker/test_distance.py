"""Tests for `difforacle.generator.worker.distance`: the changed lines' comparisons and truth tests
measured by rewriting their module's source, with the module's behaviour (results, exceptions,
evaluation order) unchanged, and the changed modules loaded that way by an import hook that writes
no bytecode."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from difforacle.generator.worker.distance import NAME, Recorder, distance, magnitude, rewrite

SOURCE = '''\
def tier(quantity, label=""):
    if quantity * 3 >= 22020:
        return "bulk"
    if not label:
        return "plain"
    return "named" if label == "vip" else label


def chained(a, b, c):
    return a < b < c


def ordered(log, a, b):
    return log.append("a") or a, log.append("b") or b


def compare_logged(log, a, b):
    return (log.append("left") or a) < (log.append("right") or b)
'''


def _load(lines: set[int], path: str = "/project/pkg/fees.py") -> tuple[dict, Recorder]:
    recorder = Recorder()
    namespace: dict = {NAME: recorder}
    exec(rewrite(SOURCE, path, frozenset(lines)), namespace)
    recorder.on = True
    return namespace, recorder


def test_a_changed_comparison_records_its_distance_and_keeps_its_result() -> None:
    namespace, recorder = _load({2})
    assert namespace["tier"](7000) == "plain"
    assert namespace["tier"](7340) == "bulk"
    assert recorder.record() == {"/project/pkg/fees.py:2:7": 0.0}  # the least of 1020 and 0
    namespace["tier"](7000)
    assert recorder.record() == {"/project/pkg/fees.py:2:7": 1020.0}


def test_only_the_changed_lines_are_measured() -> None:
    namespace, recorder = _load({4})
    namespace["tier"](1, "")
    namespace["tier"](1, "abcd")
    assert recorder.record() == {"/project/pkg/fees.py:4:11": 0.0}  # the truth test's size, least


def test_a_changed_decorator_line_is_measured_and_the_comparisons_elsewhere_are_not() -> None:
    """The rewriting goes only into the nodes that hold a changed line, and a decorator above a
    definition is in it; the comparisons of a table of thousands of entries elsewhere record nothing."""
    source = ("import functools\n\n\n@functools.lru_cache(maxsize=None if 1 > 2 else 8)\n"
              "def f(x):\n    return x < 3\n\n\nTABLE = {" + ", ".join(f"{i}: {i} > 5" for i in range(3000))
              + "}\n")
    recorder = Recorder()
    namespace: dict = {NAME: recorder}
    recorder.on = True
    exec(rewrite(source, "/project/pkg/deco.py", frozenset({4})), namespace)
    assert namespace["f"](1) is True and namespace["TABLE"][7] is True
    assert recorder.record() == {"/project/pkg/deco.py:4:37": 1.0}  # `1 > 2`: 1 away, at import


def test_text_comparisons_count_the_characters_that_differ() -> None:
    namespace, recorder = _load({6})
    assert namespace["tier"](1, "vop") == "vop"
    assert namespace["tier"](1, "vip") == "named"
    assert recorder.record() == {"/project/pkg/fees.py:6:22": 0.0}
    namespace["tier"](1, "vop!")
    assert recorder.record() == {"/project/pkg/fees.py:6:22": 2.0}  # one character, one more


def test_chained_comparisons_are_left_as_they_are() -> None:
    namespace, recorder = _load({10})
    assert namespace["chained"](1, 2, 3) and not namespace["chained"](1, 3, 2)
    assert recorder.record() == {}


def test_operands_are_evaluated_once_and_in_order_and_exceptions_come_from_the_comparison() -> None:
    namespace, recorder = _load({18})
    log: list[str] = []
    assert namespace["compare_logged"](log, 1, 2) is True
    assert log == ["left", "right"]
    with pytest.raises(TypeError, match="'<' not supported"):
        namespace["compare_logged"](log, 1, None)
    assert recorder.record()["/project/pkg/fees.py:18:11"] == 1.0  # from the run that compared


def test_nothing_is_recorded_while_off() -> None:
    namespace, recorder = _load({2})
    recorder.on = False
    namespace["tier"](7000)
    assert recorder.record() == {}


def test_distances_are_taken_only_between_standard_values() -> None:
    assert distance(3, 5.5) == 2.5 and distance(True, 0) == 1.0
    assert distance("abc", "abd") == 1.0 and distance(b"ab", b"abcd") == 2.0
    assert distance(float("nan"), 1.0) is None and distance(10**400, 0) is None

    class Number(int):  # a subclass may run the project's code on subtraction
        pass

    assert distance(Number(3), 5) is None and distance("a", b"a") is None
    assert magnitude([1, 2]) == 2.0 and magnitude(-4) == 4.0 and magnitude(None) is None
    assert math.isinf(Recorder().least.get("site", math.inf))


def test_the_import_hook_measures_the_changed_module_and_writes_no_bytecode(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fees.py").write_text(SOURCE)
    script = f'''
import json, sys
sys.path.insert(0, {str(tmp_path)!r})
from difforacle.generator.worker import distance
distance.install({{{str(package / "fees.py")!r}: [2]}})
from pkg import fees
distance.RECORDER.on = True
fees.tier(7339)
print(json.dumps(distance.RECORDER.record()))
'''
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {f"{package / 'fees.py'}:2:7": 3.0}
    assert not list((package / "__pycache__").glob("fees*"))  # the unchanged package's may be written
