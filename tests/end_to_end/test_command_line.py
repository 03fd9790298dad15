"""`difforacle diff` and `difforacle demo` as a user runs them, on small repositories: the report
and the files they write, the tests that pass on base and fail on head, a clone left as it was,
the same report for the same seed.

Most run `python -m difforacle.bot` in a subprocess (the real entry point, real stderr); one calls
`difforacle.bot.cli.main` in-process with capsys.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.command_line import FAST, MOD_BASE, assert_one_line_error, convert_pr, run_cli
from support.repos import RepoBuilder, export_commit, make_pr

from difforacle.bot import cli
from difforacle.generator.demo import build_demo_repo
from difforacle.generator.report.json_form import validate_report

TIMING_STATS = ("seconds", "sequences_per_second", "explore_seconds", "history_seconds")


@pytest.fixture
def pr(builder: RepoBuilder) -> RepoBuilder:
    return convert_pr(builder)


def _without_timings(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    for name in TIMING_STATS:
        data["stats"].pop(name, None)
    return data


# ---------------------------------------------------------------- 10. output files


@pytest.mark.slow
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


@pytest.mark.slow
def test_run_inside_the_clone_leaves_it_clean(pr: RepoBuilder) -> None:
    pr.write({"pkg/mod.py": MOD_BASE + "\n# an uncommitted edit\n", "scratch.txt": "not committed\n"})
    before = pr.status()
    result = run_cli("diff", "--base", "main", "--head", "feature", *FAST, cwd=pr.root)
    assert result.returncode == 1, result.stderr
    assert pr.status() == before
    assert (pr.root / "pkg/mod.py").read_text() == MOD_BASE + "\n# an uncommitted edit\n"
    assert pr.worktrees() == [str(pr.root)]


# ---------------------------------------------------------------- 8. head does not import


@pytest.mark.slow
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
@pytest.mark.parametrize("jobs", [(), ("--jobs", "3")])
def test_same_seed_and_max_sequences_give_the_same_report(tmp_path: Path, jobs: tuple[str, ...]) -> None:
    repo = tmp_path / "durations"
    build_demo_repo(repo)
    reports = []
    for run in (1, 2):
        path = tmp_path / f"run{run}.json"
        # the host's own hash seed differs between the runs: nothing the engine decides may follow it
        result = run_cli("diff", "--repo", str(repo), "--base", "main", "--head", "feature", "--seed", "7",
                         "--budget", "6", "--max-sequences", "1000", "--quiet", "--json", str(path), *jobs,
                         env={"PYTHONHASHSEED": str(run)})
        assert result.returncode == 1, result.stderr
        reports.append(json.loads(path.read_text(encoding="utf-8")))
        # a reproducible run explores with one worker unless told otherwise, whatever the machine
        assert reports[-1]["stats"]["explore_workers"] == (int(jobs[1]) if jobs else 1)
        assert reports[-1]["stats"]["sequences"] == 1000

    first, second = reports
    fields = ("id", "kind", "target", "base", "head", "test")
    assert [[d[f] for f in fields] for d in first["differences"]] == \
        [[d[f] for f in fields] for d in second["differences"]]
    assert first["differences"]
    # bit-for-bit, apart from the wall-clock timings
    assert _without_timings(first) == _without_timings(second)


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


SLOW_IMPORT = '''\
import time


def wait_for_server() -> None:
    time.sleep(600)  # a service that is not there: the import never ends


wait_for_server()


def f(x: int) -> int:
    return x
'''


@pytest.mark.slow
def test_an_import_that_hangs_stops_within_the_budget_and_says_where(builder: RepoBuilder) -> None:
    """The run ends within its budget plus ten seconds, saying which module's import was waiting and
    at which of its lines; it blames no interpreter (nothing shows one is missing anything)."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/slow.py": SLOW_IMPORT},
            {"pkg/slow.py": SLOW_IMPORT.replace("return x", "return x + 1")})
    started = time.monotonic()
    result = run_cli("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature",
                     "--budget", "8", "--quiet", timeout=90)
    took = time.monotonic() - started
    message = assert_one_line_error(result, "did not finish importing the changed modules within",
                                    "it was importing pkg/slow.py, at pkg/slow.py:5 in wait_for_server")
    assert "--python" not in message and "dependencies" not in message
    assert took < 8 + 10 + 5, took  # budget, the overrun allowed, and starting Python and git
