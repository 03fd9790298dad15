"""Tests for generator.report: JSON schema, markdown rendering and the written test files."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import jsonschema
import pytest

from difforacle.generator.report.files import write_json, write_markdown, write_tests
from difforacle.generator.report.json_form import SCHEMA_ID, load_schema, report_to_json, validate_report
from difforacle.generator.report.markdown import compress_lines, render_markdown
from difforacle.generator.report.model import Coverage, Difference, Report, RunError, Statement, Stats

BASE = "0123456789abcdef0123456789abcdef01234567"
HEAD = "fedcba9876543210fedcba9876543210fedcba98"
TEST_SOURCE = "def test_x():\n    assert 1 == 1\n"


def _difference(number: int, **changes: object) -> Difference:
    fields: dict = {
        "id": f"d{number}",
        "kind": "return",
        "target": "pkg.mod:Cache.get",
        "path": "pkg/mod.py",
        "line": 12,
        "base": "1",
        "head": "2",
        "test": TEST_SOURCE.replace("test_x", f"test_x{number}"),
        "key": "s0.return",
        "statements": [Statement("pkg.mod:Cache"), Statement("pkg.mod:Cache.get", ({"ref": 0},))],
    }
    fields.update(changes)
    return Difference(**fields)


@pytest.fixture
def report() -> Report:
    return Report(
        base=BASE,
        head=HEAD,
        differences=[
            _difference(1, count=3),
            _difference(
                2,
                kind="exception",
                target="pkg.mod:Cache.__setitem__",
                base="None",
                head="KeyError('a`b')",
            ),
            _difference(3, kind="api", target="pkg.util:<module>", path=None, line=None, statements=[]),
            _difference(4, kind="state", head="x" * 500),
        ],
        coverage=Coverage(
            changed_lines=20, changed_lines_covered=13, uncovered={"pkg/mod.py": [14, 10, 11, 12, 3, 13, 30]}
        ),
        stats=Stats(sequences=1200, seconds=12.3456, sequences_per_second=97.2, kept=40, crashed=1),
        notes=["Skipped non-Python file docs/index.md"],
    )


# ---------------------------------------------------------------- JSON and schema


def test_schema_loads_from_package_data_and_is_a_valid_schema() -> None:
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["title"] == SCHEMA_ID


def test_report_json_validates_and_has_expected_shape(report: Report) -> None:
    data = report_to_json(report)
    validate_report(data)
    assert data["schema"] == SCHEMA_ID
    first, _, api, _ = data["differences"]
    assert first["statements"] == 2 and first["count"] == 3 and first["key"] == "s0.return"
    assert api["path"] is None and api["line"] is None and api["statements"] == 0
    assert data["coverage"]["uncovered"] == {"pkg/mod.py": [3, 10, 11, 12, 13, 14, 30]}
    assert data["stats"]["seconds"] == 12.35
    assert data["stats"]["kept"] == 40 and data["stats"]["crashed"] == 1
    assert data["notes"] == ["Skipped non-Python file docs/index.md"]


def test_empty_report_validates() -> None:
    validate_report(report_to_json(Report(base=BASE, head=HEAD)))


@pytest.mark.parametrize("field", ["schema", "base", "head", "differences", "coverage", "stats"])
def test_missing_top_level_field_fails_validation(report: Report, field: str) -> None:
    data = report_to_json(report)
    del data[field]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(data)


@pytest.mark.parametrize("field", ["id", "kind", "target", "path", "line", "base", "head", "test"])
def test_missing_difference_field_fails_validation(report: Report, field: str) -> None:
    data = report_to_json(report)
    del data["differences"][0][field]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(data)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("differences", 0, "kind"), "performance"),
        (("differences", 0, "target"), "pkg.mod.Cache.get"),
        (("differences", 0, "line"), 0),
        (("differences", 0, "count"), 0),
        (("coverage", "changed_lines"), -1),
        (("stats", "seconds"), -0.5),
        (("stats", "extra"), "not a number"),
        (("base",), "not-a-sha"),
        (("schema",), "difforacle.report/2"),
    ],
)
def test_bad_values_fail_validation(report: Report, where: tuple, value: object) -> None:
    data = report_to_json(report)
    container = data
    for step in where[:-1]:
        container = container[step]
    container[where[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_report(data)


@pytest.mark.parametrize("target", [
    "pkg.mod:make.<locals>.Local.value",  # a method of a class made by a function: dispatch finds it
    "pkg.mod:outer.<locals>.<lambda>",
    "paquet.données:Café.prix",  # Python's identifiers are not only ASCII
    "pkg.util:<module>",
])
def test_any_python_qualname_is_a_valid_target(report: Report, target: str) -> None:
    report.differences[0].target = target
    validate_report(report_to_json(report))


@pytest.mark.parametrize("target", ["pkg.mod", "pkg mod:f", "pkg.mod:f g", "pkg..mod:f", "pkg.mod:f.",
                                    ":f", "pkg.mod:", "<pkg>:f"])
def test_malformed_targets_fail_validation(report: Report, target: str) -> None:
    data = report_to_json(report)
    data["differences"][0]["target"] = target
    with pytest.raises(jsonschema.ValidationError):
        validate_report(data)


def test_a_partial_report_says_where_the_run_stopped(report: Report) -> None:
    report.error = RunError("confirming", "RuntimeError: boom")
    data = report_to_json(report)
    validate_report(data)
    assert data["error"] == {"phase": "confirming", "message": "RuntimeError: boom"}
    assert "error" not in report_to_json(Report(base=BASE, head=HEAD))
    for bad in ({"phase": "confirming"}, {"phase": "x", "message": "y", "extra": 1}, "boom"):
        with pytest.raises(jsonschema.ValidationError):
            validate_report({**data, "error": bad})
    markdown = render_markdown(report)
    assert ("**Partial report:** the run stopped on an internal error while confirming "
            "(`RuntimeError: boom`); see the notes.") in markdown
    assert "Partial report" not in render_markdown(Report(base=BASE, head=HEAD))


def test_unknown_fields_are_allowed_at_top_level_and_on_differences(report: Report) -> None:
    data = report_to_json(report)
    data["future"] = {"anything": True}
    data["differences"][0]["confidence"] = "high"
    data["stats"]["workers"] = 4
    validate_report(data)


def test_write_json_round_trips(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "out" / "report.json"
    write_json(report, path)
    loaded = json.loads(path.read_text(encoding="utf-8"))
    assert loaded == report_to_json(report)
    validate_report(loaded)
    assert os.listdir(path.parent) == ["report.json"]  # no temporary file left behind


def test_write_json_validates_before_touching_the_file(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("previous", encoding="utf-8")
    broken = copy.deepcopy(report)
    broken.differences[0].kind = "bogus"  # type: ignore[assignment]
    with pytest.raises(jsonschema.ValidationError):
        write_json(broken, path)
    assert path.read_text(encoding="utf-8") == "previous"
    assert os.listdir(tmp_path) == ["report.json"]


def test_write_json_replaces_atomically(
    report: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "report.json"
    calls: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str, target: str) -> None:
        calls.append((str(source), str(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    write_json(report, path)
    [(source, target)] = calls
    assert Path(source).parent == tmp_path and target == str(path)


# ---------------------------------------------------------------- markdown


def test_markdown_contents(report: Report) -> None:
    text = render_markdown(report)
    assert "0123456..fedcba9" in text.splitlines()[0]
    assert "**4 behavioural differences** in the changed code." in text
    assert "covered 13 of 20 changed lines" in text
    assert "- `pkg/mod.py`: 3, 10-14, 30" in text
    assert "### return: `pkg.mod:Cache.get`" in text
    assert "### exception: `pkg.mod:Cache.__setitem__`" in text
    assert "### api: `pkg.util:<module>`" in text
    assert "`pkg/mod.py:12`" in text
    assert "Location unknown." in text
    assert "- base: `1`\n- head: `2`" in text
    assert "- head: ``KeyError('a`b')``" in text
    assert "Seen in 3 sequences." in text and text.count("Seen in") == 1
    assert "```python\ndef test_x1():\n    assert 1 == 1\n```" in text
    assert "1200 sequences in 12.35 s (97.2 sequences per second)" in text
    assert "- Skipped non-Python file docs/index.md" in text


def test_markdown_truncates_long_values(report: Report) -> None:
    text = render_markdown(report)
    assert "`" + "x" * 200 + "…`" in text
    assert "x" * 201 not in text


def test_markdown_for_no_differences() -> None:
    text = render_markdown(Report(base=BASE, head=HEAD))
    assert "No behavioural difference: no changed line of importable code to run." in text
    assert "Changed-line coverage" not in text  # no "covered 0 of 0": nothing was there to cover
    assert "###" in text and "### Notes" not in text


def test_markdown_is_deterministic(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "report.md"
    write_markdown(report, path)
    assert path.read_text(encoding="utf-8") == render_markdown(report) == render_markdown(report)


def test_markdown_fence_survives_backticks_in_test() -> None:
    test = 'def test_doc():\n    assert f() == "```"\n'
    text = render_markdown(Report(base=BASE, head=HEAD, differences=[_difference(1, test=test)]))
    assert "````python\n" + test + "````" in text


@pytest.mark.parametrize(
    ("lines", "expected"),
    [([], ""), ([5], "5"), ([3, 1, 2], "1-3"), ([10, 11, 12, 13, 14, 20, 22, 23], "10-14, 20, 22-23")],
)
def test_compress_lines(lines: list[int], expected: str) -> None:
    assert compress_lines(lines) == expected


# ---------------------------------------------------------------- test files


def test_write_tests_names_and_compiles(report: Report, tmp_path: Path) -> None:
    folder = tmp_path / "generated"
    folder.mkdir()
    (folder / "keep_me.py").write_text("x = 1\n", encoding="utf-8")
    paths = write_tests(report, folder)
    assert [p.name for p in paths] == [
        "test_difforacle_001_return_pkg_mod_cache_get.py",
        "test_difforacle_002_exception_pkg_mod_cache_setitem.py",
        "test_difforacle_003_api_pkg_util_module.py",
        "test_difforacle_004_state_pkg_mod_cache_get.py",
    ]
    for path in paths:
        assert path.parent == folder
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    assert (folder / "keep_me.py").exists()
    assert sorted(os.listdir(folder)) == sorted([p.name for p in paths] + ["keep_me.py"])


def test_write_tests_creates_directory_and_limits_slug(tmp_path: Path) -> None:
    target = "pkg.mod:" + "VeryLongClassName." * 10 + "method"
    report = Report(base=BASE, head=HEAD, differences=[_difference(1, target=target)])
    [path] = write_tests(report, tmp_path / "new" / "dir")
    slug = path.name.removeprefix("test_difforacle_001_").removesuffix(".py")
    assert path.exists() and len(slug) <= 60 and not slug.endswith("_")
    assert slug.startswith("return_pkg_mod_verylongclassname_")
