"""Tests for `difforacle.generator.report.json_form`: the report's JSON form and its schema (the
files are `report.files`', the Markdown is `difforacle.bot.markdown`'s)."""

from __future__ import annotations

import importlib.metadata

import jsonschema
import pytest
from support.report_samples import BASE, HEAD, sample_report

from difforacle.generator.report.json_form import SCHEMA_ID, load_schema, report_to_json, validate_report
from difforacle.generator.report.model import Report, RunError


@pytest.fixture
def report() -> Report:
    return sample_report()


# ---------------------------------------------------------------- JSON and schema


def test_schema_loads_from_package_data_and_is_a_valid_schema() -> None:
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["title"] == SCHEMA_ID


def test_report_json_validates_and_has_expected_shape(report: Report) -> None:
    data = report_to_json(report)
    validate_report(data)
    assert data["schema"] == SCHEMA_ID
    assert data["version"] == importlib.metadata.version("difforacle")  # pyproject.toml's, as installed
    first, _, api, _ = data["differences"]
    assert first["statements"] == 2 and first["count"] == 3 and first["key"] == "s0.return"
    assert api["path"] is None and api["line"] is None and api["statements"] == 0
    assert data["coverage"]["uncovered"] == {"pkg/mod.py": [3, 10, 11, 12, 13, 14, 30]}
    assert data["stats"]["seconds"] == 12.35
    assert data["stats"]["kept"] == 40 and data["stats"]["crashed"] == 1
    # per technique, in name order: the report of the same run is the same text
    assert list(data["stats"]["techniques"]) == ["duck", "influence"]
    assert data["stats"]["techniques"]["influence"] == {"candidates": 30, "pruned_share": 0.25}
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
        (("stats", "techniques", "duck", "parameters"), "two"),
        (("stats", "techniques", "duck"), 2),
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


def test_unknown_fields_are_allowed_at_top_level_and_on_differences(report: Report) -> None:
    data = report_to_json(report)
    data["future"] = {"anything": True}
    data["differences"][0]["confidence"] = "high"
    data["stats"]["workers"] = 4
    validate_report(data)
