"""Tests of the `difforacle` command line (`difforacle.bot.cli`): exit statuses, messages and the
files it writes.

Most run `python -m difforacle.bot` in a subprocess (the real entry point, real stderr); a few call
`bot.cli.main` in-process with capsys.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from support.command_line import assert_one_line_error, run_cli
from support.repos import RepoBuilder, export_commit, make_pr

from difforacle.bot import cli
from difforacle.generator import engine
from difforacle.generator.demo import build_demo_repo
from difforacle.generator.report.json_form import validate_report

MOD_BASE = '''\
def convert(unit):
    if unit == "h":
        return 3600
    if unit == "m":
        return 60
    return 1


def same(x):
    return x
'''
MOD_HEAD = MOD_BASE.replace("return 3600", "return 3660")

FAST = ("--budget", "4", "--max-sequences", "300", "--quiet")
TIMING_STATS = ("seconds", "sequences_per_second", "explore_seconds", "history_seconds")


@pytest.fixture
def pr(builder: RepoBuilder) -> RepoBuilder:
    """A repository whose feature branch changes pkg.mod:convert('h') from 3600 to 3660."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": MOD_BASE, "README.md": "hello\n"},
            {"pkg/mod.py": MOD_HEAD})
    return builder


def _without_timings(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    for name in TIMING_STATS:
        data["stats"].pop(name, None)
    return data


# ---------------------------------------------------------------- 10. output files


def test_json_markdown_and_tests_dir(pr: RepoBuilder, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli("diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", *FAST,
                     "--json", str(out / "report.json"), "--markdown", str(out / "report.md"),
                     "--tests-dir", str(out / "tests"))

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    validate_report(data)
    assert data["base"] == pr.repo.commit("main").hexsha
    assert data["head"] == pr.repo.commit("feature").hexsha
    [difference] = data["differences"]
    assert (difference["kind"], difference["target"]) == ("return", "pkg.mod:convert")
    assert (difference["base"], difference["head"]) == ("3600", "3660")
    assert difference["id"] == "D1"

    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "**1 behavioural difference**" in markdown
    assert "### D1 return: `pkg.mod:convert`" in markdown
    assert markdown in result.stdout  # the same report is printed

    written = sorted((out / "tests").iterdir())
    assert [p.name for p in written] == ["test_difforacle_001_return_pkg_mod_convert.py",
                                         "test_difforacle_001_return_pkg_mod_convert_pin_head.py"]
    pin_base, pin_head = (p.read_text(encoding="utf-8") for p in written)
    for source in (pin_base, pin_head):
        ast.parse(source)
    assert pin_base.rstrip() == difference["test"].rstrip() == difference["pin_base"].rstrip()
    assert pin_head.rstrip() == difference["pin_head"].rstrip()
    assert difference["reproduced"] is True and difference["statements"] == 1


@pytest.mark.slow
def test_written_tests_pass_on_base_and_fail_on_head(tmp_path: Path) -> None:
    repo = tmp_path / "durations"
    build_demo_repo(repo)
    tests = tmp_path / "generated"
    result = run_cli("diff", "--repo", str(repo), "--base", "main", "--head", "feature",
                     "--budget", "6", "--max-sequences", "1000", "--quiet", "--tests-dir", str(tests))
    assert result.returncode == 1, result.stderr
    pin_head = sorted(tests.glob("test_*_pin_head.py"))
    pin_base = sorted(set(tests.glob("test_*.py")) - set(pin_head))
    assert len(pin_base) >= 2 and len(pin_head) == len(pin_base), result.stdout
    for path in pin_base + pin_head:
        ast.parse(path.read_text(encoding="utf-8"), str(path))

    # pin_base: passes on base, fails on head; pin_head: the other way around
    for side, outcome in (("main", ("passed", "failed")), ("feature", ("failed", "passed"))):
        checkout = export_commit(repo, side, tmp_path / side)
        for files, expected in zip((pin_base, pin_head), outcome, strict=True):
            env_result = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null",
                 "--rootdir", str(tests), *map(str, files)],
                cwd=tests, env=_env(checkout), capture_output=True, text=True, timeout=60)
            assert f"{len(files)} {expected}" in env_result.stdout, (side, env_result.stdout)


def _env(pythonpath: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update({"PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def test_main_in_process_prints_the_report(pr: RepoBuilder, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli.main(["diff", "--repo", str(pr.root), "--base", "main", "--head", "feature", *FAST])
    captured = capsys.readouterr()
    assert status == 1
    assert "3600" in captured.out and "3660" in captured.out
    assert "pkg.mod:convert" in captured.out


def test_run_inside_the_clone_leaves_it_clean(pr: RepoBuilder) -> None:
    pr.write({"pkg/mod.py": MOD_BASE + "\n# an uncommitted edit\n", "scratch.txt": "not committed\n"})
    before = pr.status()
    result = run_cli("diff", "--base", "main", "--head", "feature", *FAST, cwd=pr.root)
    assert result.returncode == 1, result.stderr
    assert pr.status() == before
    assert (pr.root / "pkg/mod.py").read_text() == MOD_BASE + "\n# an uncommitted edit\n"
    assert pr.worktrees() == [str(pr.root)]


# ---------------------------------------------------------------- 8. head does not import


@pytest.mark.parametrize(
    ("head", "error"),
    [(MOD_BASE.replace("def same(x):", "def same(x:"), "SyntaxError"),
     ("import not_a_module_anywhere_xyz\n" + MOD_BASE, "ModuleNotFoundError")],
    ids=["syntax-error", "import-error"],
)
def test_head_that_does_not_import_exits_1(builder: RepoBuilder, tmp_path: Path, head: str,
                                           error: str) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": MOD_BASE}, {"pkg/mod.py": head})
    report = tmp_path / "report.json"
    result = run_cli("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", *FAST,
                     "--json", str(report))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    validate_report(data)
    module = [d for d in data["differences"] if d["target"] == "pkg.mod:<module>"]
    assert module and module[0]["kind"] == "exception", data["differences"]
    assert error in module[0]["head"]


# ---------------------------------------------------------------- 11. reproducibility


@pytest.mark.slow
def test_same_seed_and_max_sequences_give_the_same_report(tmp_path: Path) -> None:
    repo = tmp_path / "durations"
    build_demo_repo(repo)
    reports = []
    for run in (1, 2):
        path = tmp_path / f"run{run}.json"
        result = run_cli("diff", "--repo", str(repo), "--base", "main", "--head", "feature", "--seed", "7",
                         "--budget", "6", "--max-sequences", "1000", "--quiet", "--json", str(path))
        assert result.returncode == 1, result.stderr
        reports.append(json.loads(path.read_text(encoding="utf-8")))

    first, second = reports
    fields = ("id", "kind", "target", "base", "head", "test")
    assert [[d[f] for f in fields] for d in first["differences"]] == \
        [[d[f] for f in fields] for d in second["differences"]]
    assert first["differences"]
    # bit-for-bit, apart from the wall-clock timings
    assert _without_timings(first) == _without_timings(second)


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


def test_interpreter_that_cannot_import_the_project(builder: RepoBuilder) -> None:
    needs = "import not_installed_dependency_xyz\n\n\n"
    make_pr(builder, {"app/__init__.py": "", "app/core.py": needs + MOD_BASE},
            {"app/core.py": needs + MOD_HEAD})
    result = run_cli("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", *FAST)
    message = assert_one_line_error(result, "--python")
    assert "app.core" in message and "not_installed_dependency_xyz" in message


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


# ---------------------------------------------------------------- 13. demo


@pytest.mark.slow
def test_demo_reports_the_hour_regression(tmp_path: Path) -> None:
    report = tmp_path / "demo.json"
    # bound by a count of sequences, not by time: what a run finds must not depend on the machine's load
    result = run_cli("demo", "--max-sequences", "1000", "--quiet", "--json", str(report), timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    validate_report(data)
    targets = {d["target"] for d in data["differences"]}
    # the two regressions, and nothing on the behaviour-preserving edit of format_duration
    assert targets == {"durations.parse:parse_duration", "durations.meter:RateMeter.add"}, targets
    parse = [d for d in data["differences"] if d["target"] == "durations.parse:parse_duration"]
    assert parse[0]["kind"] == "return"
    base, head = int(parse[0]["base"]), int(parse[0]["head"])
    assert head > base and (head - base) % 60 == 0, (base, head)  # 60 seconds more per hour: 3600 -> 3660
    assert f"### {parse[0]['id']} return: `durations.parse:parse_duration`" in result.stdout
