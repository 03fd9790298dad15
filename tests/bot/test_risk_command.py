"""Tests of `difforacle risk` (`difforacle.bot.risk_command`): ranking, tiers, budget shares, JSON,
errors and the history cache.

Most call `difforacle.bot.cli.main` in-process (fast); the error tests that must see a real stderr and
no traceback run `python -m difforacle.bot` in a subprocess.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import jsonschema
import pytest
from support.command_line import assert_one_line_error, run_cli
from support.histories import commit, source
from support.repos import RepoBuilder, make_pr

from difforacle.bot import cli
from difforacle.bot.risk_command import validate
from difforacle.generator import Options, analyze
from difforacle.generator.report.json_form import load_schema

DURATIONS = '''\
def _parse_unit(text):
    return {"s": 1, "m": 60, "h": 3600}[text]


def parse_duration(text):
    return int(text[:-1]) * _parse_unit(text[-1])


def describe(text):
    return f"{parse_duration(text)} seconds"


def _cached_unit(text):
    return _parse_unit(text)


def unrelated(x):
    return x + 1


class Timer:
    def __init__(self, limit):
        self.limit = limit

    def remaining(self, elapsed):
        return self.limit - elapsed


class Clock:
    def read(self):
        return 0
'''
DURATIONS_HEAD = DURATIONS.replace('"h": 3600', '"h": 3660').replace(
    "return self.limit - elapsed", "return max(0, self.limit - elapsed)")
PATH = "pkg/durations.py"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own history cache (never the user's): in-process and in `run_cli` subprocesses."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def pr(builder: RepoBuilder) -> RepoBuilder:
    """feature changes the private `_parse_unit` and the method `Timer.remaining`."""
    make_pr(builder, {"pkg/__init__.py": "", PATH: DURATIONS, "README.md": "hi\n"}, {PATH: DURATIONS_HEAD})
    return builder


def risk(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess:
    """`difforacle risk ARGS` in-process, as a CompletedProcess (argparse errors included)."""
    try:
        code = cli.main(["risk", *args])
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["risk", *args], code, captured.out, captured.err)


def risk_json(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> dict:
    path = tmp_path / "out" / "risk.json"
    result = risk(capsys, *args, "--json", str(path))
    assert result.returncode == 0, result.stderr
    return json.loads(path.read_text(encoding="utf-8"))


def units_by_tier(data: dict) -> dict[int, list[str]]:
    tiers: dict[int, list[str]] = {}
    for unit in data["units"]:
        tiers.setdefault(unit["tier"], []).append(unit["qualname"])
    return tiers


# ---------------------------------------------------------------- ranking and tiers


def test_recent_fixes_by_several_authors_rank_first_and_get_more_time(
        builder: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit(builder, {"pkg/__init__.py": "", "pkg/a.py": source(hot="return 1", cold="return 1")}, "Add a")
    for day in range(1, 11):
        commit(builder, {"pkg/other.py": f"X = {day}\n"}, "Tune X", day=day)
    for index, author in enumerate(["bob@example.com", "carol@example.com", "dan@example.com"]):
        commit(builder, {"pkg/a.py": source(hot=f"return {index + 2}", cold="return 1")},
               f"Fix hot for case {index}", day=11 + index / 10, author=author)
    builder.branch("feature")
    builder.commit({"pkg/a.py": source(hot="return 100", cold="return 200")}, "Change both")
    builder.switch("main")

    data = risk_json(capsys, tmp_path, "--repo", str(builder.root), "--base", "main", "--head", "feature")

    hot, cold = data["units"]
    assert (hot["unit"], cold["unit"]) == ("pkg/a.py:hot", "pkg/a.py:cold")
    assert (hot["tier"], cold["tier"]) == (1, 1)
    assert (hot["revisions"], hot["fixes"], hot["new_authors"]) == (5, 3, 5)  # + the PR's commit and author
    assert (cold["revisions"], cold["fixes"], cold["new_authors"]) == (2, 0, 2)
    assert hot["score"] > cold["score"] and hot["probability"] > cold["probability"]
    assert hot["seconds"] > cold["seconds"]
    assert data["history"]["window_commits"] == 14 and data["history"]["pr_commits"] == 1


def test_tier_two_holds_the_public_callers_of_a_changed_private_helper(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--head", "feature")

    tiers = units_by_tier(data)
    assert sorted(tiers[1]) == ["Timer.remaining", "_parse_unit"]
    # parse_duration calls _parse_unit, describe calls parse_duration; Timer's method changed.
    # Not _cached_unit (private), unrelated, Clock or Timer.__init__ (they call nothing changed).
    assert sorted(tiers[2]) == ["Timer", "describe", "parse_duration"]
    assert [unit["tier"] for unit in data["units"]] == [1, 1, 2, 2, 2]  # tier 1 first
    assert {unit["path"] for unit in data["units"]} == {PATH}
    assert all(unit["unit"] == f"{unit['path']}:{unit['qualname']}" for unit in data["units"])
    assert data["head"] == pr.repo.git.rev_parse("feature")
    assert data["base"] == pr.repo.git.rev_parse("main")


# ---------------------------------------------------------------- budget shares


def test_shares_sum_exactly_to_the_budget_minus_the_history(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--head", "feature",
                     "--budget", "30")

    assert data["allocation"] == "defect" and data["budget"] == 30
    assert data["allocated"] == max(0.0, 30 - data["history"]["seconds"])
    seconds = [unit["seconds"] for unit in data["units"]]
    assert sum(seconds) == data["allocated"]
    assert math.fsum(seconds) == data["allocated"]
    tier1 = math.fsum(unit["seconds"] for unit in data["units"] if unit["tier"] == 1)
    assert tier1 == pytest.approx(0.9 * data["allocated"])


def test_the_header_says_what_the_history_cost(
        pr: RepoBuilder, capsys: pytest.CaptureFixture[str]) -> None:
    result = risk(capsys, "--repo", str(pr.root), "--base", "main", "--head", "feature", "--budget", "60")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("difforacle risk: 2 changed and 3 impacted units of ")
    assert lines[1].startswith("history: 1 commit before base, 1 commit in the pull request; "
                               "2 read from git, 0 from the cache, ")
    assert lines[2].startswith("budget 60 s, history ") and " s allocated (defect: " in lines[2]
    table = lines[4:10]  # the column names and 5 units
    assert table[0].split() == ["rank", "tier", "unit", "revisions", "fixes", "new", "authors", "score",
                                "probability", "seconds"]
    assert len({len(line) for line in table}) == 1  # aligned: numbers right-justified to the last column
    assert [line.split()[2] for line in table[1:]][-3:] == sorted(
        f"{PATH}:{name}" for name in ("Timer", "describe", "parse_duration"))
    assert "skipped README.md: not a Python file" not in result.stdout  # README did not change


def test_uniform_allocation_gives_equal_shares(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--head", "feature",
                     "--budget", "20", "--allocation", "uniform")

    assert data["allocation"] == "uniform"
    seconds = [unit["seconds"] for unit in data["units"]]
    assert len(seconds) == 5
    assert seconds == pytest.approx([data["allocated"] / 5] * 5, rel=1e-12)
    assert sum(seconds) == data["allocated"]


# ---------------------------------------------------------------- the whole repository


def test_without_head_every_unit_of_the_repository_is_ranked(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pr.commit({"tests/test_durations.py": "def test_x():\n    assert True\n"}, "Add a test")

    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--budget", "10")

    assert data["head"] is None
    assert {unit["unit"] for unit in data["units"]} == {
        "pkg/__init__.py:<module>", "tests/test_durations.py:<module>", "tests/test_durations.py:test_x",
        *(f"{PATH}:{name}" for name in ("<module>", "_parse_unit", "parse_duration", "describe",
                                        "_cached_unit", "unrelated", "Timer", "Timer.__init__",
                                        "Timer.remaining", "Clock", "Clock.read")),
    }
    assert {unit["tier"] for unit in data["units"]} == {1}
    assert data["history"]["pr_commits"] == 0
    scores = [unit["score"] for unit in data["units"]]
    assert scores == sorted(scores, reverse=True)
    assert sum(unit["seconds"] for unit in data["units"]) == data["allocated"] == max(
        0.0, 10 - data["history"]["seconds"])


# ---------------------------------------------------------------- JSON


def test_json_validates_against_the_shipped_schema(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--head", "feature")

    schema = load_schema("risk-1.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    validate(data)
    assert data["schema"] == "difforacle.risk/1"
    assert set(data["history"]) >= {"commits_read", "commits_cached", "seconds"}
    broken = json.loads(json.dumps(data))
    broken["units"][0]["tier"] = 3
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(("args", "fragment"), [
    (("--base", "nope"), "unknown ref 'nope'"),
    (("--base", "main", "--head", "nope"), "unknown ref 'nope'"),
])
def test_an_unknown_ref_exits_2_with_one_line(pr: RepoBuilder, args: tuple[str, ...], fragment: str) -> None:
    assert_one_line_error(run_cli("risk", "--repo", str(pr.root), *args), fragment)


def test_not_a_git_repository_exits_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert_one_line_error(run_cli("risk", "--repo", str(tmp_path / "plain"), "--base", "main"),
                          "is not a git repository")


@pytest.mark.parametrize("option", [
    ("--budget", "-1"), ("--budget", "nan"), ("--budget", "soon"), ("--window", "0"), ("--window", "1.5"),
    ("--allocation", "random"),
])
def test_bad_numbers_and_choices_exit_2_with_one_line(
        pr: RepoBuilder, capsys: pytest.CaptureFixture[str], option: tuple[str, str]) -> None:
    result = risk(capsys, "--repo", str(pr.root), "--base", "main", *option)
    assert_one_line_error(result, option[0])


# ---------------------------------------------------------------- the cache


def test_a_second_run_reads_no_commit_and_no_cache_reads_them_all(
        pr: RepoBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--repo", str(pr.root), "--base", "main", "--head", "feature")
    first = risk_json(capsys, tmp_path, *args)["history"]
    second = risk_json(capsys, tmp_path, *args)["history"]
    uncached = risk_json(capsys, tmp_path, *args, "--no-cache")["history"]

    assert (first["commits_read"], first["commits_cached"]) == (2, 0)
    assert (second["commits_read"], second["commits_cached"]) == (0, 2)
    assert (uncached["commits_read"], uncached["commits_cached"]) == (2, 0)
    # with a head, the history of the pull request's files; without, of every file (another cache)
    cache = tmp_path / "cache" / "difforacle"
    assert [path.name.split("-")[0] for path in cache.iterdir()] == ["paths"]
    everything = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main")["history"]
    assert (everything["commits_read"], everything["commits_cached"]) == (1, 0)
    assert sorted(path.name.split("-")[0] for path in cache.iterdir()) == ["paths", "risk"]


# ---------------------------------------------------------------- the same plan as diff


@pytest.mark.parametrize("allocation", ["defect", "uniform"])
def test_risk_prints_exactly_the_plan_that_diff_follows(pr: RepoBuilder, capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path, allocation: str) -> None:
    data = risk_json(capsys, tmp_path, "--repo", str(pr.root), "--base", "main", "--head", "feature",
                     "--allocation", allocation)
    report = analyze(pr.root, "main", "feature", Options(budget=10, max_sequences=50, allocation=allocation))
    assert report.allocation is not None and report.allocation.mode == allocation
    planned = {(f"pkg.durations:{u['qualname']}", u["tier"], u["share"]) for u in data["units"]}
    followed = {(u.unit, u.tier, u.share) for u in report.allocation.units}
    assert planned == followed and len(planned) >= 4, (planned, followed)
    if allocation == "defect":  # the scores decide the shares: the same probabilities, in the same order
        assert [u["probability"] for u in data["units"]] == [u.probability for u in report.allocation.units]
    allocated = data["allocated"]
    assert all(math.isclose(u["seconds"], u["share"] * allocated, rel_tol=1e-9) for u in data["units"])
