"""Tests for `difforacle.generator.report.files`: the report's JSON file, written atomically and only
when valid, and the suggested tests' files."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import jsonschema
import pytest
from support.report_samples import BASE, HEAD, sample_difference, sample_report

from difforacle.generator.report.files import write_json, write_tests
from difforacle.generator.report.json_form import report_to_json, validate_report
from difforacle.generator.report.model import Report


@pytest.fixture
def report() -> Report:
    return sample_report()


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
    report = Report(base=BASE, head=HEAD, differences=[sample_difference(1, target=target)])
    [path] = write_tests(report, tmp_path / "new" / "dir")
    slug = path.name.removeprefix("test_difforacle_001_").removesuffix(".py")
    assert path.exists() and len(slug) <= 60 and not slug.endswith("_")
    assert slug.startswith("return_pkg_mod_verylongclassname_")
