"""Which tests of a changed test file the pull request changed (`generation.seeds.changed_tests`)."""

from __future__ import annotations

from pathlib import Path

from difforacle.generator.generation.seeds.changed_tests import (
    WHOLE_FILE,
    ChangedTests,
    changed_tests,
    names_used_by,
)

TESTS = '''import pytest

CASES = [1, 2]


@pytest.fixture
def field():
    return object()


class TestParse:
    flavour = "plain"

    @pytest.mark.parametrize(
        "value",
        ["", 0, -1],
    )
    def test_invalid(self, value):
        assert value in ("", 0, -1)

    def test_empty(self):
        assert True


def test_alone():
    assert True
'''


def _lines(text: str, *needles: str) -> set[int]:
    return {number for number, line in enumerate(text.splitlines(), 1) if any(n in line for n in needles)}


def _of(tmp_path: Path, *needles: str) -> ChangedTests:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests/test_parse.py").write_text(TESTS)
    return changed_tests(tmp_path, [("tests/test_parse.py", _lines(TESTS, *needles))])


def test_a_changed_parametrize_value_selects_that_test_only(tmp_path: Path) -> None:
    changed = _of(tmp_path, '["", 0, -1]')
    assert changed.files == {"tests/test_parse.py": frozenset({"TestParse.test_invalid"})}
    assert "tests/test_parse.py::TestParse::test_invalid[0]" in changed
    assert "tests/test_parse.py::TestParse::test_invalid[-1]" in changed
    for other in ("tests/test_parse.py::TestParse::test_empty", "tests/test_parse.py::test_alone",
                  "tests/test_other.py::TestParse::test_invalid[0]"):
        assert other not in changed
    # run as the function: every parametrization of it, whatever its id in another run
    assert changed.selection(["tests/test_parse.py", "tests/test_other.py"]) == [
        "tests/test_parse.py::TestParse::test_invalid"]


def test_a_class_attribute_selects_the_class_a_fixture_or_a_table_the_whole_file(tmp_path: Path) -> None:
    by_class = _of(tmp_path, 'flavour = "plain"')
    assert by_class.files == {"tests/test_parse.py": frozenset({"TestParse"})}
    assert "tests/test_parse.py::TestParse::test_empty" in by_class
    assert "tests/test_parse.py::test_alone" not in by_class
    assert by_class.selection(["tests/test_parse.py"]) == ["tests/test_parse.py::TestParse"]
    for needle in ("CASES = [1, 2]", "return object()"):
        whole = _of(tmp_path, needle, "def test_alone")
        assert whole.files == {"tests/test_parse.py": frozenset({WHOLE_FILE})}
        assert "tests/test_parse.py::test_alone" in whole
        assert whole.selection(["tests/test_parse.py"]) == ["tests/test_parse.py"]


def test_a_file_that_does_not_parse_counts_whole(tmp_path: Path) -> None:
    (tmp_path / "test_broken.py").write_text("def test_x(:\n")
    changed = changed_tests(tmp_path, [("test_broken.py", {1}), ("test_gone.py", {1})])
    assert "test_broken.py::test_x" in changed and "test_gone.py::test_y" in changed


def test_the_names_a_test_uses_are_read_from_its_function(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    uses_decimal = TESTS.replace("assert True\n\n\ndef test_alone",
                                 "assert decimal.Decimal(1)\n\n\ndef test_alone")
    (tmp_path / "tests/test_parse.py").write_text(uses_decimal)
    (tmp_path / "tests/test_broken.py").write_text("def test_x(:\n")
    names = names_used_by(tmp_path, ["tests/test_parse.py::TestParse::test_empty",
                                     "tests/test_parse.py::TestParse::test_invalid[0]",
                                     "tests/test_parse.py::test_gone", "tests/test_broken.py::test_x",
                                     "tests/test_missing.py::test_y", "tests/test_parse.py"])
    # its decorators' too (a parametrization holds inputs); not `field` or `CASES`: another test's, the file's
    assert names == {"decimal", "Decimal", "value", "pytest", "mark", "parametrize"}
