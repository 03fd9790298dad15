"""The accept flow end to end against the fake GitHub, as the Action and as the App: a pull request
whose difference fails its check; a stranger's `/difforacle accept all` is refused politely; a
maintainer's is recorded and answered, the analysis runs again and the check turns green; a later
push showing the same difference stays green.

The Action (`difforacle action`), as docs/action.md's workflows run it: the pull request's own
`pull_request` run analyses; a `workflow_run` job publishes its report artifact; an `issue_comment`
job answers commands and asks GitHub to run the pull request's run again. The jobs with a write
token check nothing out and run no code of the pull request. The App: signed deliveries to its
webhook receiver, the queue drained here, each job run by the runner with the bubblewrap sandbox."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pytest
from support.action import action_env, comment_event_file, event_file, workflow_run_event_file
from support.app_helpers import (
    SECRET,
    button_click_payload,
    drain,
    headers,
    install_app,
    issue_comment_payload,
    pull_request_payload,
)
from support.fake_github import FakeGitHub, git_files
from support.repos import RepoBuilder, make_pr

from difforacle.bot.acceptance import decode_state
from difforacle.bot.action_command import run
from difforacle.bot.app.installation import AppAccess
from difforacle.bot.app.queue import JobQueue
from difforacle.bot.app.runner import run_job
from difforacle.bot.app.settings import AppSettings
from difforacle.bot.app.webhook import create_app
from difforacle.bot.github_client import Retries
from difforacle.bot.publisher import ACTIONS_BOT
from difforacle.bot.summary import ACCEPT_ALL_ACTION, ACCEPT_ALL_BUTTON, SUMMARY_MARKER

OWNER, NAME, NUMBER = "Codertocat", "Hello-World", 2
FAST = Retries(total=2, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)
UNITS = '''def hours_to_seconds(hours: int) -> int:
    """How many seconds `hours` hours last."""
    return {expression}
'''
BEFORE = {"clock/__init__.py": "", "clock/units.py": UNITS.format(expression="hours * 3600")}
MEANT = {"clock/units.py": UNITS.format(expression="hours * 3660")}


def _args(repo: Path) -> argparse.Namespace:
    return argparse.Namespace(event=None, repo=repo, json=None, python=None)


def _outputs(tmp_path: Path) -> str:
    return (tmp_path / "output").read_text() if (tmp_path / "output").exists() else ""


@pytest.mark.slow
def test_a_maintainer_accepts_a_meant_difference_and_the_check_turns_green_and_stays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The three workflows of docs/action.md, for a pull request from a fork: its own `pull_request`
    run (a read-only token) analyses and leaves the report artifact; the `workflow_run` job publishes
    it; the `issue_comment` job answers commands and asks GitHub to run the pull request's run again.
    Neither job with a write token runs any code of the pull request."""
    builder = RepoBuilder(tmp_path / "clock")
    base, head = make_pr(builder, BEFORE, MEANT)
    empty = tmp_path / "empty"  # the jobs with a write token check nothing out
    empty.mkdir()
    with FakeGitHub().serve() as fake:
        fake.add_token("ro", ACTIONS_BOT, read_only=True)
        fake.add_token("rw", ACTIONS_BOT)
        fake.add_pull_from_git(OWNER, NAME, NUMBER, builder.root, base, head,
                               head_repo="octo-forker/Hello-World")
        fake.add_collaborator(OWNER, NAME, "ann", "write")
        env = action_env(tmp_path, event_file(tmp_path, base, head), fake, DIFFORACLE_FAIL_ON="difference",
                         DIFFORACLE_BUDGET="8")

        def ours() -> tuple[list, list, list]:
            comments = fake.comments_on(OWNER, NAME, NUMBER)
            summaries = [c for c in comments if c.login == ACTIONS_BOT and c.body.startswith(SUMMARY_MARKER)]
            replies = [c.body for c in comments if c.login == ACTIONS_BOT and c not in summaries]
            return [(r.head_sha, r.conclusion) for r in fake.check_runs.values()], summaries, replies

        def pull_request_run(commit: str, fixture: str = "pull_request.opened.json") -> int:
            """The pull request's own run: read-only token, the fork's code checked out and run."""
            run_env = {**env, "GITHUB_TOKEN": "ro", "GITHUB_EVENT_NAME": "pull_request",
                       "DIFFORACLE_PUBLISH": "artifact",
                       "GITHUB_EVENT_PATH": str(event_file(tmp_path, base, commit, fixture))}
            assert run(_args(builder.root), run_env, FAST) == 0  # the workflow_run job fails the check
            made = fake.add_workflow_run(OWNER, NAME, commit)
            return publish(made.id, commit)

        def publish(run_id: int, commit: str) -> int:
            """The workflow_run job: the artifact published, with nothing checked out and nothing run."""
            publish_env = {**env, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(
                workflow_run_event_file(tmp_path, commit, run_id, head_repository="octo-forker/Hello-World"))}
            with monkeypatch.context() as patch:
                patch.setattr(subprocess.Popen, "__init__", _no_process)
                return run(_args(empty), publish_env, FAST)

        def command(login: str, body: str) -> dict[str, str]:
            comment = fake.add_issue_comment(OWNER, NAME, NUMBER, body, login=login)
            return {**env, "GITHUB_EVENT_NAME": "issue_comment",
                    "GITHUB_EVENT_PATH": str(comment_event_file(tmp_path, NUMBER, comment.id, login, body))}

        # 1. the pull request is opened: its difference fails the check
        assert pull_request_run(head) == 1
        runs, [summary], replies = ours()
        assert runs == [(head, "failure")] and replies == []
        [difference_id] = decode_state(summary.body)[0].ids
        [pr_run] = fake.workflow_runs.values()

        # 2. someone without write access: a polite refusal, nothing accepted, nothing run again
        with monkeypatch.context() as patch:
            patch.setattr(subprocess.Popen, "__init__", _no_process)
            assert run(_args(empty), command("eve", "/difforacle accept all"), FAST) == 0
        runs, [summary], [refused] = ours()
        assert refused.startswith("@eve thank you, but only people with write access")
        assert runs == [(head, "failure")] and decode_state(summary.body)[0].accepted == {}
        assert pr_run.reruns == []

        # 3. a maintainer accepts: recorded and answered, and the pull request's own run asked to run again
        with monkeypatch.context() as patch:
            patch.setattr(subprocess.Popen, "__init__", _no_process)
            assert run(_args(empty), command("ann", f"/difforacle accept {difference_id}"), FAST) == 0
        runs, [summary], [_, confirmed] = ours()
        assert confirmed.startswith(f"@ann accepted {difference_id}: they no longer fail the check")
        assert [a.by for a in decode_state(summary.body)[0].accepted.values()] == ["ann"]
        assert runs == [(head, "failure")] and len(pr_run.reruns) == 1

        # ... that run (read-only, as before) and its publishing job: the check is green
        pr_run.status = "completed"
        assert pull_request_run(head) == 0
        runs, [summary], replies = ours()
        assert runs == [(head, "failure"), (head, "success")] and len(replies) == 2
        assert "### Accepted on the pull request" in summary.body and "accepted by @ann" in summary.body

        # 4. a later push that shows the same difference: still accepted, still green
        builder.switch("feature")
        pushed = builder.commit({"NOTES.md": "more\n"}, "notes")
        builder.switch("main")
        fake.set_pull_head(OWNER, NAME, NUMBER, pushed, files=git_files(builder.root, base, pushed))
        assert pull_request_run(pushed, "pull_request.synchronize.json") == 0
        runs, [summary], _ = ours()
        assert runs[-1] == (pushed, "success")
        assert "accepted by @ann" in summary.body and pushed[:7] in summary.body
        assert fake.violations == []


def _no_process(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"a job with a write token started a process: {args[1:2]}")


@pytest.mark.slow
def test_the_app_answers_commands_and_keeps_acceptances_across_pushes(tmp_path: Path,
                                                                      bubblewrap: object) -> None:
    builder = RepoBuilder(tmp_path / "origin")
    configured = {**BEFORE, "pyproject.toml": '[tool.difforacle]\nfail-on = "difference"\n'}
    base, head = make_pr(builder, configured, MEANT)
    full_name = f"{OWNER}/{NAME}"
    with FakeGitHub(strict_tokens=True).serve() as fake:
        fake.add_git_repo(OWNER, NAME, builder.root)
        fake.add_pull_from_git(OWNER, NAME, NUMBER, builder.root, "main", "feature", title="Longer hours")
        fake.add_collaborator(OWNER, NAME, "ann", "maintain")
        installed = install_app(fake, tmp_path / "secrets", OWNER, [NAME])
        queue_url = f"sqlite:///{tmp_path / 'queue.sqlite3'}"
        settings = AppSettings(data_dir=tmp_path / "data", queue_url=queue_url, app_id=installed.app_id,
                               private_key=installed.key_file.read_text(), webhook_secret=SECRET,
                               api_url=fake.url, web_url=fake.url, budget=8.0, sandbox="bubblewrap",
                               job_timeout=300.0)

        def execute(job: object, settings: AppSettings, state: object) -> object:
            return run_job(job, settings, state, sandbox=bubblewrap, github=AppAccess(settings, FAST))

        queue = JobQueue(settings, executor=execute)
        web = create_app(settings, queue).test_client()

        def deliver(event: str, payload: dict, delivery: str) -> int:
            body = json.dumps(payload).encode()
            answer = web.post("/webhook", data=body, headers=headers(event, body, delivery))
            drain(queue)
            return answer.status_code

        def ours() -> tuple[list, list, list]:
            comments = [c for c in fake.comments_on(OWNER, NAME, NUMBER) if c.login == installed.login]
            summaries = [c for c in comments if c.body.startswith(SUMMARY_MARKER)]
            replies = [c.body for c in comments if c not in summaries]
            runs = [(r.head_sha, r.conclusion) for r in fake.check_runs.values()
                    if r.app_login == installed.login]
            return runs, summaries, replies

        def comment(login: str, body: str) -> dict:
            return issue_comment_payload(fake, installed.installation_id, full_name, NUMBER, login, body)

        # 1. opened: the difference fails the check (fail-on: difference, from the base commit)
        opened = pull_request_payload(fake, installed.installation_id, full_name, NUMBER)
        assert deliver("pull_request", opened, "opened") == 202
        runs, [summary], replies = ours()
        assert runs == [(head, "failure")] and replies == [], fake.violations

        # 2. a stranger's command: refused politely, nothing accepted, nothing run
        assert deliver("issue_comment", comment("eve", "/difforacle accept all"), "refused") == 202
        runs, [summary], [refused] = ours()
        assert refused.startswith("@eve thank you, but only people with write access")
        assert runs == [(head, "failure")] and decode_state(summary.body)[0].accepted == {}

        # 3. a maintainer's: recorded, answered, the head run again: the same check run turns green
        assert deliver("issue_comment", comment("ann", "/difforacle accept all"), "accepted") == 202
        runs, [summary], [_, confirmed] = ours()
        assert confirmed.startswith("@ann accepted D1: they no longer fail the check")
        assert runs == [(head, "success")]
        assert "accepted by @ann" in summary.body
        assert [a.by for a in decode_state(summary.body)[0].accepted.values()] == ["ann"]

        # 4. a later push with the same difference: accepted still, green
        builder.switch("feature")
        pushed = builder.commit({"NOTES.md": "more\n"}, "notes")
        builder.switch("main")
        fake.set_pull_head(OWNER, NAME, NUMBER, pushed, files=git_files(builder.root, base, pushed))
        synchronize = pull_request_payload(fake, installed.installation_id, full_name, NUMBER, "synchronize",
                                           before=head)
        assert deliver("pull_request", synchronize, "pushed") == 202
        runs, [summary], replies = ours()
        assert runs == [(head, "success"), (pushed, "success")] and len(replies) == 2
        assert "accepted by @ann" in summary.body and pushed[:7] in summary.body

        # 5. a push with another difference (it raises now): its check run fails and shows the "Accept
        # all" button; a stranger's click is refused, a maintainer's accepts it and the check turns green
        builder.switch("feature")
        changed = builder.commit({"clock/units.py": UNITS.format(expression="divmod(hours, 0)[0]")}, "divide")
        builder.switch("main")
        fake.set_pull_head(OWNER, NAME, NUMBER, changed, files=git_files(builder.root, base, changed))
        synchronize = pull_request_payload(fake, installed.installation_id, full_name, NUMBER, "synchronize",
                                           before=pushed)
        assert deliver("pull_request", synchronize, "pushed-again") == 202
        runs, _, _ = ours()
        [run] = [r for r in fake.check_runs.values() if r.head_sha == changed]
        assert runs[-1] == (changed, "failure") and run.actions == [ACCEPT_ALL_BUTTON]
        for login, delivery in (("eve", "eve-clicks"), ("ann", "ann-clicks")):
            click = button_click_payload(fake, installed.installation_id, run, login, ACCEPT_ALL_ACTION)
            assert deliver("check_run", click, delivery) == 202
        runs, [summary], replies = ours()
        assert replies[-2].startswith("@eve thank you, but only people with write access")
        assert replies[-1].startswith("@ann accepted D2: they no longer fail the check")
        assert runs[-1] == (changed, "success") and len(runs) == 3  # the same check run, green
        assert fake.check_runs[run.id].actions == []  # nothing left to accept
        assert fake.violations == []
