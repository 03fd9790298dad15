"""Tests of the `difforacle` command line (`difforacle.bot.cli`): exit statuses and messages on bad
input, and on an internal error of the engine (the partial report it still writes).

The bad-input tests run `python -m difforacle.bot` in a subprocess (the real entry point, real
stderr); the internal-error tests call `cli.main` in-process with capsys and a failing stage. The
runs that report differences are in tests/end_to_end/test_command_line.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from support.command_line import FAST, MOD_BASE, MOD_HEAD, assert_one_line_error, convert_pr, run_cli
from support.repos import RepoBuilder, make_pr

from difforacle.bot import cli
from difforacle.generator import engine
from difforacle.generator.errors import SetupError
from difforacle.generator.options import Options
from difforacle.generator.report.json_form import validate_report


@pytest.fixture
def pr(builder: RepoBuilder) -> RepoBuilder:
    return convert_pr(builder)


# ---------------------------------------------------------------- 12. bad input


def test_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_cli("diff", "--repo", str(plain), "--base", "main", "--head", "feature", "--quiet")
    assert_one_line_error(result, "is not a git repository", "--repo")


def test_missing_repository_path(tmp_path: Path) -> None:
    result = run_cli("diff", "--repo", str(tmp_path / "nowhere"), "--base", "a", "--head", "b", "--quiet")
    assert_one_line_error(result, "is not a git repository")


@pytest.mark.parametrize(("base", "head"), [("main", "nope"), ("nope", "feature"), ("main", "main~7")])
def test_unknown_ref(pr: RepoBuilder, base: str, head: str) -> None:
    result = run_cli("diff", "--repo", str(pr.root), "--base", base, "--head", head, "--quiet")
    assert_one_line_error(result, "unknown ref")


def test_base_equal_to_head(pr: RepoBuilder) -> None:
    sha = pr.repo.commit("main").hexsha
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", sha, "--quiet")
    assert result.returncode == 0, result.stderr
    assert "same commit" in result.stdout
    assert "Traceback" not in result.stderr


def test_no_python_change(pr: RepoBuilder, tmp_path: Path) -> None:
    pr.branch("docs", "main")
    pr.commit({"README.md": "hello again\n", "notes.txt": "x\n"}, "docs only")
    report = tmp_path / "report.json"
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "docs", "--quiet",
                     "--json", str(report))
    assert result.returncode == 0, result.stderr
    assert "No change to importable Python code" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    validate_report(data)
    assert data["differences"] == []


def test_comment_only_change(pr: RepoBuilder) -> None:
    pr.branch("comment", "main")
    pr.commit({"pkg/mod.py": MOD_BASE.replace("    return 1\n", "    return 1  # the default\n")})
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "comment", *FAST)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No behavioural difference: no changed line of importable code to run." in result.stdout


@pytest.mark.parametrize("python", ["/nonexistent/python3", "/"])
def test_python_that_cannot_start(pr: RepoBuilder, python: str) -> None:
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                     "--python", python)
    assert_one_line_error(result, "--python")


def test_python_that_is_not_python(pr: RepoBuilder) -> None:
    """An executable that starts but is no Python interpreter: a setup error that points at --python."""
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                     "--python", "/bin/false")
    assert_one_line_error(result, "--python")


def test_python_shim_that_cannot_start_is_not_reported_as_the_projects_import(pr: RepoBuilder,
                                                                                tmp_path: Path) -> None:
    """A pyenv shim whose version is not installed exits at once with its own message: that message,
    not "the base commit's code could not be imported"."""
    shim = tmp_path / "python3"
    shim.write_text("#!/bin/sh\necho \"pyenv: version \\`3.7.99' is not installed\" >&2\nexit 1\n")
    shim.chmod(0o755)
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                     "--python", str(shim))
    message = assert_one_line_error(result, "--python")
    assert "could not start the difforacle worker (exit status 1: pyenv: version" in message
    assert "could not be imported" not in message


@pytest.mark.slow
def test_a_relative_python_path_is_taken_from_where_the_command_runs(pr: RepoBuilder, tmp_path: Path) -> None:
    """The workers start in folders of their own: `--python .venv/bin/python` still means this one."""
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").symlink_to(sys.executable)
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", *FAST,
                     "--python", os.path.join("env", "bin", "python"), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pkg.mod:convert" in result.stdout


def test_python_older_than_the_worker_supports(pr: RepoBuilder) -> None:
    older = [found for version in ("3.8", "3.7", "3.6") for found in
             sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))]
    if not older:
        pytest.skip("no interpreter older than 3.9 here (pyenv)")
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                     "--python", str(older[0]))
    message = assert_one_line_error(result, "--python")
    assert f"{older[0]} is Python {older[0].name.removeprefix('python')}." in message
    assert "must be Python 3.9 or later" in message


def test_interpreter_that_cannot_import_the_project(builder: RepoBuilder) -> None:
    needs = "import not_installed_dependency_xyz\n\n\n"
    make_pr(builder, {"app/__init__.py": "", "app/core.py": needs + MOD_BASE},
            {"app/core.py": needs + MOD_HEAD})
    result = run_cli("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", *FAST)
    message = assert_one_line_error(result, "--python")
    assert "app.core" in message and "not_installed_dependency_xyz" in message


@pytest.mark.slow
@pytest.mark.parametrize(
    "option",
    [("--budget", "0"), ("--budget", "abc"), ("--budget", "-3"), ("--budget", "nan"), ("--seed", "x"),
     ("--max-sequences", "many"), ("--max-sequences", "-1"), ("--minimize-share", "1"),
     ("--minimize-share", "-0.1"), ("--minimize-share", "nan"), ("--minimize-share", "half"),
     ("--allocation", "random"), ("--window", "0")],
    ids=lambda option: " ".join(option),
)
def test_bad_option_values(pr: RepoBuilder, option: tuple[str, str]) -> None:
    try:
        result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                         *option, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail(f"difforacle diff {' '.join(option)} did not finish in 15 s (expected exit 2)")
    assert_one_line_error(result, option[0])


def test_missing_required_arguments() -> None:
    result = run_cli("diff", "--base", "main")
    assert_one_line_error(result, "--head")
    assert run_cli().returncode == 2


# ---------------------------------------------------------------- 12b. internal errors


DIFF = ("diff", "--base", "main", "--head", "feature", "--repo")


def _failing(stage: str) -> Callable[..., NoReturn]:
    def fail(*args: object, **kwargs: object) -> NoReturn:
        raise RuntimeError(f"injected failure in {stage}\nwith a second line")
    return fail


def _outputs(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    json_path, markdown_path, tests = tmp_path / "report.json", tmp_path / "report.md", tmp_path / "tests"
    return json_path, markdown_path, tests, ["--json", str(json_path), "--markdown", str(markdown_path),
                                             "--tests-dir", str(tests)]


def test_an_internal_error_after_exploring_writes_the_partial_report_and_exits_2(
        pr: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DIFFORACLE_DEBUG", raising=False)
    monkeypatch.setattr(engine, "reproduce", _failing("reproduce"))
    json_path, markdown_path, tests, outputs = _outputs(tmp_path)

    status = cli.main([*DIFF, str(pr.root), *FAST, *outputs])

    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.splitlines() == [
        "difforacle: internal error while reproducing: RuntimeError: injected failure in reproduce "
        "(the partial report was written; set DIFFORACLE_DEBUG=1 for the traceback)"]
    data = json.loads(json_path.read_text(encoding="utf-8"))
    validate_report(data)
    assert data["error"] == {"phase": "reproducing", "message": "RuntimeError: injected failure in reproduce"}
    [difference] = data["differences"]  # found and rendered before the failure, never checked by pytest
    assert (difference["id"], difference["target"], difference["base"], difference["head"]) == \
        ("D1", "pkg.mod:convert", "3600", "3660")
    assert difference["reproduced"] is None
    assert data["stats"]["sequences"] > 0 and data["coverage"]["changed_lines"] == 1
    assert any("stopped on an internal error while reproducing" in note for note in data["notes"])
    markdown = markdown_path.read_text(encoding="utf-8")
    assert "**Partial report:** the run stopped on an internal error while reproducing" in markdown
    assert markdown in captured.out
    assert len(list(tests.glob("test_difforacle_001_*.py"))) == 2


def test_with_difforacle_debug_the_traceback_is_printed_and_the_status_is_still_2(
        pr: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DIFFORACLE_DEBUG", "1")
    monkeypatch.setattr(engine, "confirm", _failing("confirm"))
    json_path, _, _, outputs = _outputs(tmp_path)

    status = cli.main([*DIFF, str(pr.root), *FAST, *outputs])

    captured = capsys.readouterr()
    assert status == 2
    assert "Traceback" in captured.err and "injected failure in confirm" in captured.err
    assert captured.err.splitlines()[-1] == ("difforacle: internal error while confirming: RuntimeError: "
                                             "injected failure in confirm (the partial report was written)")
    data = json.loads(json_path.read_text(encoding="utf-8"))
    validate_report(data)
    assert data["error"]["phase"] == "confirming" and data["differences"] == []
    assert "1 group(s) of candidate differences were found but not confirmed." in data["notes"]


@pytest.mark.parametrize("debug", ["", "1"])
def test_an_internal_error_before_exploring_exits_2_without_a_report(
        pr: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], debug: str) -> None:
    """Nothing ran yet: no report to write, but never exit status 1 (which means differences)."""
    monkeypatch.setenv("DIFFORACLE_DEBUG", debug)
    monkeypatch.setattr(engine, "compute_changes", _failing("changes"))
    json_path, _, _, outputs = _outputs(tmp_path)

    status = cli.main([*DIFF, str(pr.root), *FAST, *outputs])

    captured = capsys.readouterr()
    assert status == 2 and not json_path.exists() and captured.out == ""
    assert ("Traceback" in captured.err) is bool(debug)
    hint = "" if debug else " (set DIFFORACLE_DEBUG=1 for the traceback)"
    assert captured.err.splitlines()[-1] == ("difforacle: internal error: RuntimeError: injected failure in "
                                             f"changes{hint}")


# ---------------------------------------------------------------- options reach the engine


@pytest.mark.parametrize(("flags", "early_stop"), [((), True), (("--no-early-stop",), False)])
def test_early_stopping_is_on_unless_switched_off(pr: RepoBuilder, monkeypatch: pytest.MonkeyPatch,
                                                  flags: tuple[str, ...], early_stop: bool) -> None:
    given: list[Options] = []

    def analyze(repo: Path, base: str, head: str, options: Options) -> NoReturn:
        given.append(options)
        raise SetupError("stopped here")

    monkeypatch.setattr(cli, "analyze", analyze)
    status = cli.main(["diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", "--quiet",
                       *flags])
    assert status != 0 and [options.early_stop for options in given] == [early_stop]
