"""The GitHub Action's side, for the tests of `difforacle action`: the demo's pull request, a saved
pull_request event naming its commits, and the environment a workflow step gives the command."""

from __future__ import annotations

import json
from pathlib import Path

import git

from difforacle.generator.demo import build_demo_repo
from support.fake_github import FakeGitHub
from support.paths import FIXTURES

WEBHOOKS = FIXTURES / "github" / "webhooks"


def demo_pull_request(repo: Path) -> tuple[Path, str, str]:
    """The demo repository built at `repo`, with its base and head commits' full shas."""
    base, head = build_demo_repo(repo)
    shas = git.Repo(repo)
    return repo, shas.commit(base).hexsha, shas.commit(head).hexsha


def event_file(tmp_path: Path, base: str, head: str, fixture: str = "pull_request.opened.json") -> Path:
    """A real pull_request event (a saved webhook payload) naming `base` and `head`, as a file."""
    event = json.loads((WEBHOOKS / fixture).read_text())
    event["pull_request"]["base"]["sha"], event["pull_request"]["head"]["sha"] = base, head
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return path


def action_env(tmp_path: Path, event: Path, fake: FakeGitHub | None, **extra: str) -> dict[str, str]:
    """A workflow step's environment for `event`, publishing to `fake` with a read-write token."""
    env = {"GITHUB_EVENT_PATH": str(event), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output"), "RUNNER_TEMP": str(tmp_path),
           "GITHUB_REPOSITORY": "Codertocat/Hello-World", "DIFFORACLE_BUDGET": "12", **extra}
    if fake is not None:
        env.update(GITHUB_TOKEN="rw", GITHUB_API_URL=fake.url)
    return env


def comment_event_file(tmp_path: Path, number: int, comment_id: int, login: str, body: str,
                       repository: str = "Codertocat/Hello-World") -> Path:
    """A real issue_comment event (a comment on a pull request's conversation), naming the comment."""
    event = json.loads((WEBHOOKS / "issue_comment.created.pull_request.json").read_text())
    event["issue"]["number"] = number
    event["comment"].update(id=comment_id, body=body)
    event["comment"]["user"]["login"] = event["sender"]["login"] = login
    event["repository"]["full_name"] = repository
    path = tmp_path / f"comment-{comment_id}.json"
    path.write_text(json.dumps(event))
    return path


def workflow_run_event_file(tmp_path: Path, head: str, run_id: int, *, event: str = "pull_request",
                            head_repository: str = "Codertocat/Hello-World",
                            repository: str = "Codertocat/Hello-World") -> Path:
    """A real workflow_run event (a saved webhook payload): the run `run_id` that `event` started on
    `head` completed, as the publishing workflow receives it."""
    payload = json.loads((WEBHOOKS / "workflow_run.completed.json").read_text())
    payload["workflow_run"].update(id=run_id, head_sha=head, event=event, status="completed",
                                   conclusion="success", pull_requests=[])
    payload["workflow_run"]["head_repository"]["full_name"] = head_repository
    payload["workflow_run"]["repository"]["full_name"] = payload["repository"]["full_name"] = repository
    path = tmp_path / f"workflow-run-{run_id}.json"
    path.write_text(json.dumps(payload))
    return path
