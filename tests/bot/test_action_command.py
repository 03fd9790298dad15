"""`difforacle action` end to end: a saved pull_request event, a local repository, the fake GitHub."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import git
import pytest
from support.fake_github import FakeGitHub
from support.paths import FIXTURES

from difforacle.bot.action_command import (
    HISTORY_CACHE_HIT,
    HISTORY_CACHE_KEY,
    history_cache,
    pull_request_from_event,
    run,
)
from difforacle.bot.cli import main
from difforacle.bot.github_client import Retries
from difforacle.bot.summary import SUMMARY_MARKER
from difforacle.generator.demo import build_demo_repo
from difforacle.generator.errors import SetupError
from difforacle.generator.report.json_form import validate_report

WEBHOOKS = FIXTURES / "github" / "webhooks"
FAST = Retries(total=2, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)


def _event(tmp_path: Path, base: str, head: str, fixture: str = "pull_request.opened.json") -> Path:
    event = json.loads((WEBHOOKS / fixture).read_text())
    event["pull_request"]["base"]["sha"], event["pull_request"]["head"]["sha"] = base, head
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return path


@pytest.fixture
def demo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "durations"
    base, head = build_demo_repo(repo)
    shas = git.Repo(repo)
    return repo, shas.commit(base).hexsha, shas.commit(head).hexsha


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub().serve() as server:
        yield server


def _env(tmp_path: Path, event: Path, fake: FakeGitHub | None, **extra: str) -> dict[str, str]:
    env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output"), "RUNNER_TEMP": str(tmp_path),
           "GITHUB_REPOSITORY": "Codertocat/Hello-World", "DIFFORACLE_BUDGET": "12", **extra}
    if fake is not None:
        env.update(GITHUB_TOKEN="rw", GITHUB_API_URL=fake.url)
    return env


def _args(repo: Path) -> argparse.Namespace:
    return argparse.Namespace(event=None, repo=repo, json=None, python=None)


@pytest.mark.slow
def test_action_publishes_the_demo_regressions_once_per_push(
        demo: tuple, fake: FakeGitHub, tmp_path: Path) -> None:
    repo, base, head = demo
    fake.add_token("rw", "github-actions[bot]")
    fake.add_pull_from_git("Codertocat", "Hello-World", 2, repo, base, head)
    env = _env(tmp_path, _event(tmp_path, base, head), fake, DIFFORACLE_FAIL_ON="difference")

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
    env["GITHUB_EVENT_PATH"] = str(_event(tmp_path, base, new_head, "pull_request.synchronize.json"))
    assert run(_args(repo), env, FAST) == 1
    [edited] = fake.comments_on("Codertocat", "Hello-World", 2)
    assert edited.id == comment.id and new_head[:7] in edited.body
    assert [r.commit_id for r in fake.reviews_on("Codertocat", "Hello-World", 2)] == [head, new_head]
    assert fake.violations == []


@pytest.mark.slow
def test_without_a_token_the_step_summary_and_annotations_still_appear(
        demo: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = demo
    env = _env(tmp_path, _event(tmp_path, base, head), None, **{HISTORY_CACHE_HIT: "", HISTORY_CACHE_KEY: ""})

    assert run(_args(repo), env) == 0  # fail-on defaults to never

    out = capsys.readouterr().out
    assert "::warning file=durations/" in out and "no GitHub token" in out
    assert "difforacle: no history cache restored; reading the history took " in out
    assert "| D1 |" in (tmp_path / "summary.md").read_text()


def test_the_log_says_what_the_history_cache_step_restored() -> None:
    assert history_cache({"DIFFORACLE_BUDGET": "12"}) is None  # not run by action.yml: nothing to say
    assert history_cache({HISTORY_CACHE_HIT: "true", HISTORY_CACHE_KEY: "difforacle-history-o/r-b2"}) == \
        "history cache hit (difforacle-history-o/r-b2)"
    assert history_cache({HISTORY_CACHE_HIT: "false", HISTORY_CACHE_KEY: "difforacle-history-o/r-b1"}) == \
        "history cache of an earlier base restored (difforacle-history-o/r-b1)"
    assert history_cache({HISTORY_CACHE_HIT: "", HISTORY_CACHE_KEY: ""}) == "no history cache restored"


def test_event_errors_are_one_line_setup_errors(tmp_path: Path) -> None:
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main"}))
    with pytest.raises(SetupError, match="not a pull request event"):
        pull_request_from_event(push, {"GITHUB_EVENT_NAME": "push"})
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SetupError, match="not JSON"):
        pull_request_from_event(tmp_path / "bad.json", {})
    fork = pull_request_from_event(WEBHOOKS / "pull_request.opened.fork.json", {})
    assert fork.fork and fork.number == 2


def test_missing_base_commit_and_bad_inputs_exit_2(demo: tuple, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = demo
    monkeypatch.chdir(repo)
    for key, value in _env(tmp_path, _event(tmp_path, "f" * 40, head), None).items():
        monkeypatch.setenv(key, value)
    assert main(["action"]) == 2
    assert "fetch-depth: 0" in capsys.readouterr().err
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(_event(tmp_path, base, head)))
    monkeypatch.setenv("DIFFORACLE_BUDGET", "soon")
    assert main(["action"]) == 2
    assert "input 'budget'" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    assert main(["action"]) == 2
    assert "GITHUB_EVENT_PATH" in capsys.readouterr().err
