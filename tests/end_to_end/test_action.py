"""`difforacle action` end to end: a saved pull_request event, a local repository, the fake GitHub;
what it publishes once per push, and what a step without a token still gets."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import git
import pytest
from support.action import action_env, demo_pull_request, event_file, workflow_run_event_file
from support.fake_github import FakeGitHub
from support.repos import RepoBuilder, make_pr

from difforacle.bot.action_command import (
    HISTORY_CACHE_HIT,
    HISTORY_CACHE_KEY,
    run,
)
from difforacle.bot.github_client import Retries
from difforacle.bot.summary import SUMMARY_MARKER
from difforacle.generator.report.json_form import validate_report

FAST = Retries(total=2, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)


@pytest.fixture
def demo(tmp_path: Path) -> tuple[Path, str, str]:
    return demo_pull_request(tmp_path / "durations")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as server:
        yield server


def _args(repo: Path) -> argparse.Namespace:
    return argparse.Namespace(event=None, repo=repo, json=None, python=None)


@pytest.mark.slow
def test_action_publishes_the_demo_regressions_once_per_push(
        demo: tuple, fake: FakeGitHub, tmp_path: Path) -> None:
    repo, base, head = demo
    fake.add_token("rw", "github-actions[bot]")
    fake.add_pull_from_git("Codertocat", "Hello-World", 2, repo, base, head)
    env = action_env(tmp_path, event_file(tmp_path, base, head), fake, DIFFORACLE_FAIL_ON="difference")

    status = run(_args(repo), env, FAST)

    assert status == 1  # fail-on: difference
    assert fake.violations == []
    report = json.loads((tmp_path / "difforacle-report.json").read_text())
    validate_report(report)
    assert report["differences"]
    [run_] = fake.check_runs.values()
    assert run_.conclusion == "failure" and run_.head_sha == head
    [comment] = fake.comments_on("Codertocat", "Hello-World", 2)
    assert comment.body.startswith(SUMMARY_MARKER)
    [review] = fake.reviews_on("Codertocat", "Hello-World", 2)
    assert review.commit_id == head and review.comments
    outputs = (tmp_path / "output").read_text()
    assert f"\n{len(report['differences'])}\n" in outputs
    assert str(tmp_path / "difforacle-report.json") in outputs

    # the same event again (a re-run): no second comment, no second review
    assert run(_args(repo), env, FAST) == 1
    assert len(fake.comments_on("Codertocat", "Hello-World", 2)) == 1
    assert len(fake.reviews_on("Codertocat", "Hello-World", 2)) == 1

    # a new push: the comment is edited in place, and the new head gets its own review
    clone = git.Repo(repo)
    clone.git.checkout("-q", "feature")
    (repo / "NOTES.md").write_text("more\n")
    clone.git.add("-A")
    clone.git.commit("-q", "-m", "notes")
    new_head = clone.head.commit.hexsha
    clone.git.checkout("-q", "main")
    fake.set_pull_head("Codertocat", "Hello-World", 2, new_head)
    env["GITHUB_EVENT_PATH"] = str(event_file(tmp_path, base, new_head, "pull_request.synchronize.json"))
    assert run(_args(repo), env, FAST) == 1
    [edited] = fake.comments_on("Codertocat", "Hello-World", 2)
    assert edited.id == comment.id and new_head[:7] in edited.body
    assert [r.commit_id for r in fake.reviews_on("Codertocat", "Hello-World", 2)] == [head, new_head]
    assert fake.violations == []


@pytest.mark.slow
def test_without_a_token_the_step_summary_and_annotations_still_appear(
        demo: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = demo
    env = action_env(tmp_path, event_file(tmp_path, base, head), None,
                     **{HISTORY_CACHE_HIT: "", HISTORY_CACHE_KEY: ""})

    assert run(_args(repo), env) == 0  # fail-on defaults to never

    out = capsys.readouterr().out
    assert "::warning file=durations/" in out and "no GitHub token" in out
    assert "difforacle: no history cache restored; reading the history took " in out
    assert "| D1 |" in (tmp_path / "summary.md").read_text()


@pytest.mark.slow
def test_a_forks_report_is_published_by_a_job_that_runs_none_of_its_code(
        demo: tuple, fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The pull request's own run has a read-only token (a fork's): it leaves the report artifact. The
    workflow_run job publishes it with a write token, from an empty folder, starting no process; an
    artifact that does not match what GitHub says of the pull request is not published."""
    repo, base, head = demo
    fake.add_token("ro", "github-actions[bot]", read_only=True)
    fake.add_pull_from_git("Codertocat", "Hello-World", 2, repo, base, head,
                           head_repo="octo-forker/Hello-World")
    env = {**action_env(tmp_path, event_file(tmp_path, base, head), fake), "GITHUB_TOKEN": "ro"}
    assert run(_args(repo), env, FAST) == 0
    assert fake.check_runs == {} and fake.comments_on("Codertocat", "Hello-World", 2) == []
    artifact = tmp_path / "difforacle-artifact"
    assert json.loads((artifact / "pull.json").read_text()) == {"number": 2, "head_sha": head}
    report = json.loads((artifact / "report.json").read_text())

    fake.add_token("rw", "github-actions[bot]")
    empty = tmp_path / "empty"
    empty.mkdir()

    def publish(**changes: object) -> str:
        (artifact / "report.json").write_text(json.dumps({**report, **changes}))
        published = {**env, "GITHUB_TOKEN": "rw", "GITHUB_EVENT_NAME": "workflow_run",
                     "GITHUB_EVENT_PATH": str(workflow_run_event_file(tmp_path, head, 7))}
        capsys.readouterr()
        with monkeypatch.context() as patch:
            patch.setattr(subprocess.Popen, "__init__", _no_process)
            assert run(_args(empty), published, FAST) == 0
        return capsys.readouterr().out

    # forged or stale artifacts: nothing published
    assert "the report artifact is of" in publish(head="0" * 40)
    assert "the report compares" in publish(base="0" * 40)
    assert "missing or invalid" in publish(differences="all clear")
    assert fake.check_runs == {} and fake.comments_on("Codertocat", "Hello-World", 2) == []
    fake.set_pull_head("Codertocat", "Hello-World", 2, "f" * 40)
    assert "a newer run publishes it" in publish()
    fake.set_pull_head("Codertocat", "Hello-World", 2, head)

    out = publish()
    assert "published Codertocat/Hello-World#2" in out
    [check] = fake.check_runs.values()
    assert check.head_sha == head and check.conclusion == "neutral"
    [comment] = fake.comments_on("Codertocat", "Hello-World", 2)
    assert comment.body.startswith(SUMMARY_MARKER)
    assert fake.violations == []


def _no_process(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"the publishing job started a process: {args[1:2]}")


@pytest.mark.slow
def test_a_pull_request_does_not_decide_how_it_is_judged(fake: FakeGitHub, tmp_path: Path) -> None:
    """The pull request sets `fail-on = "never"` and excludes its change in its own pyproject.toml:
    the base commit's settings apply, and the summary says its own apply once merged."""
    builder = RepoBuilder(tmp_path / "project")
    double = "def double(x: int) -> int:\n    return x * {}\n"
    base, head = make_pr(builder, {"pkg/__init__.py": "", "pkg/m.py": double.format(2),
                                   "pyproject.toml": '[tool.difforacle]\nfail-on = "difference"\n'},
                         {"pkg/m.py": double.format(3),
                          "pyproject.toml": '[tool.difforacle]\nfail-on = "never"\nexclude = ["pkg/*"]\n'})
    fake.add_token("rw", "github-actions[bot]")
    fake.add_pull_from_git("Codertocat", "Hello-World", 2, builder.root, base, head)
    env = action_env(tmp_path, event_file(tmp_path, base, head), fake, DIFFORACLE_BUDGET="6")
    assert run(_args(builder.root), env, FAST) == 1  # the base's fail-on: difference
    [comment] = fake.comments_on("Codertocat", "Hello-World", 2)
    assert "This pull request changes difforacle's settings" in comment.body
    assert "pkg.m:double" in comment.body  # not excluded
