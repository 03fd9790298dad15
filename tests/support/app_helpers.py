"""Helpers for the App's server-side tests and bench (not collected: no test_ prefix).

In process: the real webhook fixtures, signing, a recording executor, `drain` (run the queued
tasks here, no consumer). As a script, the processes the tests start and kill:

    python tests/support/app_helpers.py consumer --effects FILE --mode plain|share|kill [--name NAME]
    python tests/support/app_helpers.py serve [--port 0]

both configured by DIFFORACLE_* variables like the real commands. The consumer's executor
counts its side effects in an SQLite file, so that the tests can tell lost and duplicated
work apart: `runs` (every start), `publishes` (every publication), `comments` (one row per
pull request, edited in place, as the runner's publisher does).

The whole App as a user runs it (the end-to-end test and bench): `install_app` registers and
installs it on a fake GitHub, `AppProcess` runs `difforacle app run` on it in a subprocess,
`pull_request_payload` makes the real webhook payload of one of the fake's pull requests, and
`published_on` reads what the App published there.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: tests/support/ is on the path, the project may not be
    sys.path.insert(0, str(ROOT))

from difforacle.bot.app.model import PullRequestJob  # noqa: E402
from difforacle.bot.app.queue import JobQueue  # noqa: E402
from difforacle.bot.app.state import JobState  # noqa: E402
from difforacle.bot.app.webhook import signature  # noqa: E402

if TYPE_CHECKING:
    from support.fake_github import CheckRun, FakeGitHub, IssueComment, Review

FIXTURES = ROOT / "tests" / "fixtures" / "github" / "webhooks"
SECRET = "It's a Secret to Everybody"
VICTIM = 2  # the pull request number whose first run the kill test's consumer hangs in


def fixture(name: str) -> dict[str, Any]:
    """A webhook payload as GitHub sends it (the fixture without its provenance fields)."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return {key: value for key, value in data.items() if not key.startswith("_")}


def pull_event(number: int, head_sha: str, action: str = "opened", before: str | None = None,
               base: str = "pull_request.opened") -> dict[str, Any]:
    """A real pull_request payload with another number and head (to make many distinct PRs)."""
    payload = copy.deepcopy(fixture(base))
    payload["action"] = action
    payload["number"] = payload["pull_request"]["number"] = number
    payload["pull_request"]["head"]["sha"] = head_sha
    if before is not None:
        payload["before"], payload["after"] = before, head_sha
    return payload


def sha(n: int) -> str:
    return f"{n:040x}"


def headers(event: str, body: bytes, delivery: str, secret: str | None = SECRET) -> dict[str, str]:
    out = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "Content-Type": "application/json"}
    if secret is not None:
        out["X-Hub-Signature-256"] = signature(secret, body)
    return out


@dataclass
class Outcome:
    status: str = "published"
    detail: str = ""


@dataclass
class Recorder:
    """A fake executor: records each call and what `is_current` said; `hook` runs inside the job."""

    calls: list[PullRequestJob] = field(default_factory=list)
    current: list[bool] = field(default_factory=list)
    fail: set[str] = field(default_factory=set)  # deliveries that fail (once each)
    hook: Callable[[PullRequestJob, JobState], None] | None = None

    def __call__(self, job: PullRequestJob, settings: Any, state: JobState) -> Outcome:
        self.calls.append(job)
        if self.hook is not None:
            self.hook(job, state)
        self.current.append(state.is_current(job))
        if job.delivery in self.fail:
            self.fail.discard(job.delivery)
            return Outcome("failed", "injected failure")
        return Outcome("published" if self.current[-1] else "superseded")


def drain(queue: JobQueue) -> int:
    """Run every queued task in this thread, as a consumer would; returns how many."""
    count = 0
    while (task := queue.huey.dequeue()) is not None:
        queue.huey.execute(task)
        count += 1
    return count


def submit(queue: JobQueue, job: PullRequestJob) -> None:
    """What the receiver does for a delivery that runs: claim it, record the head, enqueue."""
    assert queue.state.claim_delivery(job.delivery)
    assert queue.state.record_head(job)
    queue.enqueue(job)


def make_job(number: int, head: int, delivery: str | None = None) -> PullRequestJob:
    return PullRequestJob(delivery=delivery or f"d-{number}-{head}", installation_id=1,
                          repository="octo/repo", repository_id=7, number=number, base_sha=sha(0),
                          head_sha=sha(head))


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """Poll `predicate` until true (raises AssertionError after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.02)


# ------------------------------------------------------------------ side effects of the consumers

def effects_db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.executescript("""
        create table if not exists runs (job_id text, pid integer, at real);
        create table if not exists publishes (job_id text, pull_key text, pid integer);
        create table if not exists comments (pull_key text primary key, job_id text, edits integer);
    """)
    return db


class EffectsExecutor:
    """The consumer processes' executor; `mode` picks the scenario of the test."""

    def __init__(self, path: Path, mode: str) -> None:
        self.path = path
        self.mode = mode
        self.lock = threading.Lock()

    def __call__(self, job: PullRequestJob, settings: Any, state: JobState) -> Outcome:
        db = effects_db(self.path)
        try:
            previous = db.execute("select count(*) from runs where job_id = ?", (job.job_id,)).fetchone()[0]
            db.execute("insert into runs values (?, ?, ?)", (job.job_id, os.getpid(), time.time()))
            if self.mode == "kill" and job.number == VICTIM and previous == 0:
                time.sleep(600)  # the test kills this process with SIGKILL here, mid-job
            if self.mode == "share":  # hold the job until the other consumer took one too
                deadline = time.monotonic() + 20
                while (db.execute("select count(distinct pid) from runs").fetchone()[0] < 2
                       and time.monotonic() < deadline):
                    time.sleep(0.02)
            with state.publish_lock(job.pull_key, timeout=30):
                if not state.is_current(job):
                    return Outcome("superseded")
                db.execute("insert into publishes values (?, ?, ?)", (job.job_id, job.pull_key, os.getpid()))
                db.execute("insert into comments values (?, ?, 1) on conflict (pull_key) do update "
                           "set job_id = excluded.job_id, edits = edits + 1", (job.pull_key, job.job_id))
            return Outcome("published")
        finally:
            db.close()


# ------------------------------------------------------------------ the App as a user runs it

LISTENING = re.compile(r"listening on (http://[0-9.]+:[0-9]+)")


@dataclass(frozen=True)
class InstalledApp:
    """The App registered on a fake GitHub and installed on some repositories of one account."""

    app_id: int
    installation_id: int
    key_file: Path  # its private key (PEM), for DIFFORACLE_PRIVATE_KEY_FILE
    login: str  # "<slug>[bot]": the author of what it publishes


def install_app(fake: FakeGitHub, folder: Path, owner: str, repositories: list[str],
                slug: str = "difforacle") -> InstalledApp:
    """Register the App, install it on `owner`'s `repositories`, and keep its key in a 0600 file."""
    app, pem = fake.add_app(slug)
    installation = fake.add_installation(app, owner, repositories)
    folder.mkdir(parents=True, exist_ok=True)
    key_file = folder / f"{slug}.private-key.pem"
    key_file.touch(mode=0o600)
    key_file.write_text(pem, encoding="utf-8")
    return InstalledApp(app.id, installation.id, key_file, app.bot_login)


def app_environment(data_dir: Path, fake: FakeGitHub, installed: InstalledApp, *, budget: float,
                    sandbox: str = "bubblewrap", secret: str = SECRET) -> dict[str, str]:
    """This process's environment without its own DIFFORACLE_* (they would leak into the App's
    configuration), plus the configuration of an App on `fake` with an embedded queue in `data_dir`."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("DIFFORACLE_")}
    env.update({"DIFFORACLE_DATA_DIR": str(data_dir), "DIFFORACLE_GITHUB_API_URL": fake.url,
                "DIFFORACLE_GITHUB_URL": fake.url, "DIFFORACLE_APP_ID": str(installed.app_id),
                "DIFFORACLE_PRIVATE_KEY_FILE": str(installed.key_file), "DIFFORACLE_WEBHOOK_SECRET": secret,
                "DIFFORACLE_SANDBOX": sandbox, "DIFFORACLE_BUDGET": f"{budget:g}"})
    return env


class AppProcess:
    """`difforacle app run` (web server and worker on an embedded queue) in a subprocess.

    Why a subprocess: the command line, the signals, the exit status and the log are what a user
    gets. It listens on a port the system picks (`--port 0`), read from its log, so no other
    process can take it in between; the log goes to a file, readable while it runs.
    """

    def __init__(self, env: dict[str, str], log_path: Path, start_timeout: float = 60.0) -> None:
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "difforacle.bot", "app", "run", "--host", "127.0.0.1", "--port", "0"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)
        self.url = ""
        try:
            wait_for(self._listening, timeout=start_timeout, what="the App to listen")
        except BaseException:
            self.kill()
            raise

    def __enter__(self) -> AppProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()

    def _listening(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the App exited with status {self.process.returncode}:\n{self.log()}")
        match = LISTENING.search(self.log())
        if match:
            self.url = match.group(1)
        return match is not None

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def deliver(self, event: str, payload: dict[str, Any], delivery: str) -> tuple[int, dict[str, Any]]:
        """POST a delivery signed as GitHub signs it; the status and the JSON answer ({} without one)."""
        body = json.dumps(payload).encode()
        request = urllib.request.Request(f"{self.url}/webhook", data=body, method="POST",
                                         headers={**headers(event, body, delivery),
                                                  "User-Agent": "GitHub-Hookshot/e2e"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        return status, json.loads(text) if text else {}

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, as a service manager stops it; its exit status (AssertionError past `timeout`)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the App did not stop within {timeout:g} s of SIGTERM") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()


def pull_request_payload(fake: FakeGitHub, installation_id: int, full_name: str, number: int,
                         action: str = "opened", before: str | None = None) -> dict[str, Any]:
    """The real `pull_request` payload (opened's fixture, synchronize's for that action) describing
    the fake's pull request as it is now: repository, number, refs, SHAs, installation."""
    pull = fake.pulls[(full_name, number)]
    repo = pull.repo
    payload = copy.deepcopy(fixture("pull_request.synchronize" if action == "synchronize"
                                    else "pull_request.opened"))
    payload["action"] = action
    payload["number"] = number
    payload["installation"]["id"] = installation_id
    for repository in (payload["repository"], payload["pull_request"]["base"]["repo"],
                       payload["pull_request"]["head"]["repo"]):
        repository.update(id=repo.id, name=repo.name, full_name=repo.full_name, private=repo.private)
        repository["owner"]["login"] = repo.owner
    payload["pull_request"].update(number=number, id=pull.id, title=pull.title, draft=False, state="open")
    for side, ref, sha in (("base", pull.base_ref, pull.base_sha), ("head", pull.head_ref, pull.head_sha)):
        payload["pull_request"][side].update(ref=ref, sha=sha, label=f"{repo.owner}:{ref}")
    if action == "synchronize":
        payload["before"], payload["after"] = before, pull.head_sha
    return payload


def issue_comment_payload(fake: FakeGitHub, installation_id: int, full_name: str, number: int, login: str,
                          body: str) -> dict[str, Any]:
    """A comment by `login` on the fake's pull request (made there too), as its real issue_comment
    webhook payload describes it."""
    owner, name = full_name.split("/", 1)
    comment = fake.add_issue_comment(owner, name, number, body, login=login)
    repo = fake.repos[full_name]
    payload = copy.deepcopy(fixture("issue_comment.created.pull_request"))
    payload["installation"]["id"] = installation_id
    payload["repository"].update(id=repo.id, name=repo.name, full_name=full_name, private=repo.private)
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment.id, body=body)
    payload["comment"]["user"].update(login=login, type="Bot" if login.endswith("[bot]") else "User")
    payload["sender"]["login"] = login
    return payload


def button_click_payload(fake: FakeGitHub, installation_id: int, run: CheckRun, login: str,
                         identifier: str) -> dict[str, Any]:
    """A click by `login` on the button `identifier` of the fake's check run `run`, as its real
    check_run.requested_action webhook payload describes it."""
    repo = run.repo
    payload = copy.deepcopy(fixture("check_run.requested_action"))
    payload["installation"]["id"] = installation_id
    payload["repository"].update(id=repo.id, name=repo.name, full_name=repo.full_name, private=repo.private)
    payload["check_run"].update(id=run.id, name=run.name, head_sha=run.head_sha, external_id=run.external_id,
                                status=run.status, conclusion=run.conclusion, pull_requests=[])
    payload["requested_action"]["identifier"] = identifier
    payload["sender"].update(login=login, type="Bot" if login.endswith("[bot]") else "User")
    return payload


@dataclass(frozen=True)
class Published:
    check_runs: list[CheckRun]
    comments: list[IssueComment]
    reviews: list[Review]


def published_on(fake: FakeGitHub, full_name: str, number: int, login: str) -> Published:
    """What `login` published on the pull request: its check runs (on any head), its comments and
    reviews. Copies taken under the fake's lock, since the fake's server thread writes them."""
    owner, name = full_name.split("/", 1)
    with fake._lock:
        runs = [run for run in fake.check_runs.values()
                if run.repo.full_name == full_name and run.app_login == login]
        comments = [c for c in fake.comments_on(owner, name, number) if c.login == login]
        reviews = [r for r in fake.reviews_on(owner, name, number) if r.login == login]
        return copy.deepcopy(Published(runs, comments, reviews))


def _consumer(args: argparse.Namespace) -> int:
    from difforacle.bot.app.command import configure_logging, run_worker
    from difforacle.bot.app.settings import load_settings

    configure_logging()
    settings = load_settings()
    queue = JobQueue(settings, executor=EffectsExecutor(Path(args.effects), args.mode), name=args.name)
    run_worker(queue)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from difforacle.bot.app import command
    from difforacle.generator.errors import SetupError

    parser = argparse.ArgumentParser(prog="difforacle")
    command.add_arguments(parser.add_subparsers(dest="command").add_parser("app"))
    try:
        return command.run(parser.parse_args(["app", "serve", "--port", str(args.port),
                                              "--host", "127.0.0.1"]))
    except SetupError as exc:
        print(f"difforacle: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role", required=True)
    consumer = sub.add_parser("consumer")
    consumer.add_argument("--effects", required=True)
    consumer.add_argument("--mode", choices=("plain", "share", "kill"), default="plain")
    consumer.add_argument("--name", default="difforacle")
    serve = sub.add_parser("serve")
    serve.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    return _consumer(args) if args.role == "consumer" else _serve(args)


if __name__ == "__main__":
    sys.exit(main())
