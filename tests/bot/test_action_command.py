"""Tests of `difforacle action` (`difforacle.bot.action_command`): what the log says of the history
cache, and the one-line errors of a bad event, a missing base commit or a bad input. The Action's
runs that publish: tests/end_to_end/test_action.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.action import WEBHOOKS, action_env, demo_pull_request, event_file

from difforacle.bot.action_command import (
    HISTORY_CACHE_HIT,
    HISTORY_CACHE_KEY,
    history_cache,
    pull_request_from_event,
    state_secret,
)
from difforacle.bot.cli import main
from difforacle.generator.errors import SetupError


@pytest.fixture
def demo(tmp_path: Path) -> tuple[Path, str, str]:
    return demo_pull_request(tmp_path / "durations")


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


def test_the_events_title_and_body_are_the_pull_requests_words() -> None:
    event = json.loads((WEBHOOKS / "pull_request.opened.fork.json").read_text())
    pull = pull_request_from_event(WEBHOOKS / "pull_request.opened.fork.json", {})
    assert (pull.title, pull.body) == (event["pull_request"]["title"], event["pull_request"]["body"] or "")


def test_missing_base_commit_and_bad_inputs_exit_2(demo: tuple, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo, base, head = demo
    monkeypatch.chdir(repo)
    for key, value in action_env(tmp_path, event_file(tmp_path, "f" * 40, head), None).items():
        monkeypatch.setenv(key, value)
    assert main(["action"]) == 2
    assert "fetch-depth: 0" in capsys.readouterr().err
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event_file(tmp_path, base, head)))
    monkeypatch.setenv("DIFFORACLE_BUDGET", "soon")
    assert main(["action"]) == 2
    assert "input 'budget'" in capsys.readouterr().err
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    assert main(["action"]) == 2
    assert "GITHUB_EVENT_PATH" in capsys.readouterr().err


def test_the_state_secret_input_seals_only_when_given() -> None:
    assert state_secret({"DIFFORACLE_STATE_SECRET": "s3cret"}) == b"s3cret"
    assert state_secret({"DIFFORACLE_STATE_SECRET": ""}) is None and state_secret({}) is None
