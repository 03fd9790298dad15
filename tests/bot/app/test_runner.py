"""The App's job runner (`difforacle.bot.app.runner`) end to end: the fake GitHub (tokens, git over
HTTP, REST), a real regression in a small repository, and the bubblewrap sandbox (the main cases
also in Docker, when the engine and the image are there).

Why end to end: what matters is what GitHub ends up showing (one check run, one comment, one
review per head, nothing for a superseded head) and what never leaks (the token on disk or in
logs, any secret inside the sandbox); mocks of the steps would only test our guesses.
"""

from __future__ import annotations

import base64
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from support.fake_github import FakeGitHub
from support.repos import RepoBuilder, make_pr
from support.services import TEST_IMAGE, service_unavailable

from difforacle.bot import publisher
from difforacle.bot.acceptance import decode_state, encode_state
from difforacle.bot.app import job_disk, runner
from difforacle.bot.app.installation import TOKEN_PERMISSIONS, AppAccess
from difforacle.bot.app.model import PullRequestJob
from difforacle.bot.app.queue import make_huey
from difforacle.bot.app.runner import (
    JobOutcome,
    last_error_line,
    package_index_environment,
    run_job,
    sweep_stale_work,
)
from difforacle.bot.app.sandbox import SandboxRequest, SandboxResult, SandboxUnavailable
from difforacle.bot.app.sandbox_choice import select_sandbox
from difforacle.bot.app.settings import AppSettings
from difforacle.bot.app.state import JobState
from difforacle.bot.github_client import GitHubClient, Retries
from difforacle.bot.summary import REVIEW_MARKER, SUMMARY_MARKER

OWNER, NAME, NUMBER = "octo", "shop", 7
FAST = Retries(total=3, backoff_factor=0, secondary_rate_wait=0, seconds_between_requests=0,
               seconds_between_writes=0)
PRICES = '''def discount(price: int, percent: int) -> int:
    """The price after a discount of `percent` per cent."""
    return price - price * percent // {divisor}
'''
BEFORE = {"shop/__init__.py": "", "shop/prices.py": PRICES.format(divisor=100)}
AFTER = {"shop/prices.py": PRICES.format(divisor=10)}  # the regression
WEBHOOK_SECRET = "whsec-never-inside-the-sandbox"


def _sandbox(kind: str, image: str = TEST_IMAGE) -> object:
    try:
        return select_sandbox(kind, image)
    except SandboxUnavailable as exc:
        service_unavailable(f"the {kind} sandbox", f"{exc} (image {image})")


@pytest.fixture(scope="module", params=["bubblewrap", "docker"])
def any_sandbox(request: pytest.FixtureRequest) -> object:
    """Each sandbox: bubblewrap, and Docker on the image built from this tree (`sandbox_image`)."""
    if request.param == "docker":
        return _sandbox("docker", request.getfixturevalue("sandbox_image"))
    return _sandbox(request.param)


class FakeState:
    """The queue's JobState as the runner sees it: the latest head per pull request, a lock; the
    check runs and summary comments remembered by a real JobState on an SQLite file."""

    def __init__(self, folder: Path) -> None:
        self.latest: dict[str, str] = {}
        self.locked: list[str] = []
        self.stored = JobState(make_huey(f"sqlite:///{folder}/state.sqlite3"))
        self.check_run = self.stored.check_run
        self.remember_check_run = self.stored.remember_check_run
        self.open_check_run = self.stored.open_check_run
        self.check_run_completed = self.stored.check_run_completed
        self.summary_comment = self.stored.summary_comment
        self.remember_summary_comment = self.stored.remember_summary_comment
        self.forget_summary_comment = self.stored.forget_summary_comment
        self.newest_comment = self.stored.newest_comment

    def is_current(self, job: PullRequestJob) -> bool:
        return self.latest.get(job.pull_key, job.head_sha) == job.head_sha

    @contextmanager
    def publish_lock(self, pull_key: str) -> Iterator[None]:
        self.locked.append(pull_key)
        yield


@dataclass
class Recording:
    """The real sandbox; records every request and result, and runs hooks before and after each."""

    inner: object
    calls: list[tuple[SandboxRequest, SandboxResult]] = field(default_factory=list)
    before: list[Callable[[SandboxRequest], None]] = field(default_factory=list)
    after: list[Callable[[SandboxRequest, SandboxResult], None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def python(self) -> str:
        return self.inner.python

    def run(self, request: SandboxRequest) -> SandboxResult:
        for hook in self.before:
            hook(request)
        result = self.inner.run(request)
        self.calls.append((request, result))
        for hook in self.after:
            hook(request, result)
        return result


@dataclass
class World:
    fake: FakeGitHub
    builder: RepoBuilder
    settings: AppSettings
    job: PullRequestJob
    key: str
    state: FakeState
    sandbox: Recording

    def run(self, job: PullRequestJob | None = None) -> JobOutcome:
        return run_job(job or self.job, self.settings, self.state, sandbox=self.sandbox,
                       github=AppAccess(self.settings, FAST))

    def ours(self) -> tuple[list, list, list]:
        """Our check runs, summary comments and reviews on the pull request."""
        runs = [r for r in self.fake.check_runs.values() if r.app_login == "difforacle[bot]"]
        comments = [c for c in self.fake.comments_on(OWNER, NAME, NUMBER) if c.login == "difforacle[bot]"]
        reviews = [r for r in self.fake.reviews_on(OWNER, NAME, NUMBER) if r.login == "difforacle[bot]"]
        return runs, comments, reviews

    def tokens_used(self) -> set[str]:
        return {r.token for r in self.fake.requests if r.token and r.token.startswith("ghs_")}


def _world(tmp_path: Path, fake: FakeGitHub, bubblewrap: object, before: dict | None = None,
           after: dict | None = None, **settings: object) -> World:
    builder = RepoBuilder(tmp_path / "origin")
    base, head = make_pr(builder, {**BEFORE, **(before or {})}, {**AFTER, **(after or {})})
    app, key = fake.add_app("difforacle")
    fake.add_git_repo(OWNER, NAME, builder.root)
    fake.add_pull_from_git(OWNER, NAME, NUMBER, builder.root, "main", "feature", title="Bigger discounts")
    installation = fake.add_installation(app, OWNER, [NAME, "other"])  # the token must be narrowed to one
    options = {"budget": 5.0, "sandbox": "bubblewrap", "job_timeout": 300.0, **settings}
    app_settings = AppSettings(data_dir=tmp_path / "data", queue_url="sqlite:///unused", app_id=app.id,
                               private_key=key, webhook_secret=WEBHOOK_SECRET, api_url=fake.url,
                               web_url=fake.url, **options)
    job = PullRequestJob("delivery-1", installation.id, f"{OWNER}/{NAME}", fake.repos[f"{OWNER}/{NAME}"].id,
                         NUMBER, base, head, base_ref="main", head_ref="feature", title="Bigger discounts")
    return World(fake, builder, app_settings, job, key, FakeState(tmp_path), Recording(bubblewrap))


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(strict_tokens=True).serve() as server:
        yield server


def _files_under(folder: Path) -> Iterator[bytes]:
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            yield path.read_bytes()


@pytest.mark.slow
def test_a_job_is_fetched_with_a_narrowed_token_run_sandboxed_and_published_once(
        tmp_path: Path, fake: FakeGitHub, any_sandbox: object, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(publisher, "PROGRESS_INTERVAL", 0.2)  # a minute in production; this job is short
    world = _world(tmp_path, fake, any_sandbox)
    kind = world.sandbox.name
    seen_in_work: list[bytes] = []
    capped: list[bool] = []

    def scan_work_dir(request: SandboxRequest) -> None:  # mid-job: the checkout exists, the token too
        seen_in_work.extend(_files_under(request.mounts[0].source.parent))
        capped.append(os.path.ismount(request.mounts[0].source.parent))  # a tmpfs of job_disk_mb

    world.sandbox.before.append(scan_work_dir)

    first = world.run()

    assert first.status == "published", first.detail
    assert "1 difference(s)" in first.detail and f"{kind} sandbox" in first.detail
    assert capped == [os.geteuid() == 0] * 2  # both steps; only a root worker can mount it
    assert not any((world.settings.data_dir / "work").iterdir())
    runs, comments, reviews = world.ours()
    assert [(r.status, r.conclusion, r.head_sha) for r in runs] == [
        ("completed", "neutral", world.job.head_sha)]
    [comment] = comments
    assert comment.body.startswith(SUMMARY_MARKER) and "shop.prices:discount" in comment.body
    assert f"Ran in the {kind} sandbox" in comment.body
    [review] = reviews
    assert review.commit_id == world.job.head_sha and REVIEW_MARKER in review.body
    assert [(c.path, c.line) for c in review.comments] == [("shop/prices.py", 3)]
    assert fake.violations == []

    # the token: narrowed to the one repository and the three permissions, and used by git
    [token] = world.tokens_used()
    identity = fake.tokens[token]
    assert identity.repositories == {f"{OWNER}/{NAME}"} and identity.permissions == TOKEN_PERMISSIONS
    [minted] = fake.requests_to("POST", "/app/installations/*/access_tokens")
    assert minted.json == {"repository_ids": [world.job.repository_id], "permissions": TOKEN_PERMISSIONS}
    git = [r for r in fake.requests if (r.operation or "").startswith("git/")]
    assert git and {(r.token, r.status) for r in git} == {(token, 200)}
    writes = [r for r in fake.requests if r.method in ("POST", "PATCH") and r.path.startswith("/repos/")]
    assert {r.token for r in writes} == {token}

    # ... and never on disk nor in the logs; the work directory is gone
    header = base64.b64encode(f"x-access-token:{token}".encode())
    assert seen_in_work and not any(token.encode() in data or header in data for data in seen_in_work)
    assert token not in caplog.text and "PRIVATE KEY" not in caplog.text
    assert list((world.settings.data_dir / "work").iterdir()) == []

    # while the engine ran, the check run showed its progress (read from the sandbox's output)
    updates = [r.json["output"]["summary"] for r in fake.requests_to("PATCH", "/repos/*/check-runs/*")
               if r.json.get("status") != "completed"]
    assert updates and all(re.fullmatch(r"[a-z]+: \d+ sequences, \d+ differences after \d+ s", u)
                           for u in updates), updates

    # the two sandboxed steps: dependencies through the egress proxy, the engine with no way out
    assert [request.egress is not None for request, _ in world.sandbox.calls] == [True, False]
    assert world.state.locked == [world.job.pull_key]

    assert decode_state(comment.body)[0].shown_after == 0  # listed: no comment was there yet
    remark = comment.id + 7  # a person's comment since, as its webhook recorded it
    world.state.stored.note_comment(world.job.pull_key, remark)

    second = world.run()  # the same job again, as after a worker was killed

    assert second.status == "published", second.detail
    runs_again, comments_again, reviews_again = world.ours()
    assert [r.id for r in runs_again] == [r.id for r in runs] and runs_again[0].status == "completed"
    assert [c.id for c in comments_again] == [comment.id]
    assert [r.id for r in reviews_again] == [review.id]
    assert fake.violations == []
    # the first run of a head has no review to look for; the second knows our comment from the queue's state
    listings = ("issues/list-comments", "pulls/list-reviews")
    listed = [r.operation for r in fake.requests if r.operation in listings]
    assert listed == ["issues/list-comments", "pulls/list-reviews"]
    assert world.state.summary_comment(world.job.pull_key) == {"id": comment.id, "state": encode_state(
        decode_state(comments_again[0].body)[0])}
    # not listed, yet the report records which commands it postdates (what `accept all` means)
    assert decode_state(comments_again[0].body)[0].shown_after == remark


@pytest.mark.slow
def test_no_secret_is_visible_inside_the_sandbox(tmp_path: Path, fake: FakeGitHub, any_sandbox: object,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    key_file = secrets_dir / "app.pem"
    credentials = tmp_path / "data" / "app-credentials.json"
    commands = ["env", f"cat {key_file} || echo no-key-file", f"cat {credentials} || echo no-credentials",
                "cat /proc/1/environ | tr '\\0' '\\n' || true", "ls -la / /work", "exit 3"]
    hostile = {"pyproject.toml": f"[tool.difforacle]\ninstall = {json.dumps(commands)}\n"}
    world = _world(tmp_path, fake, any_sandbox, before=hostile)
    key_file.write_text(world.key)
    credentials.parent.mkdir(parents=True, exist_ok=True)
    credentials.write_text(json.dumps({"id": 1, "pem": world.key, "webhook_secret": WEBHOOK_SECRET}))
    monkeypatch.setenv("DIFFORACLE_PRIVATE_KEY", world.key)
    monkeypatch.setenv("DIFFORACLE_WEBHOOK_SECRET", WEBHOOK_SECRET)
    monkeypatch.setenv("DIFFORACLE_PRIVATE_KEY_FILE", str(key_file))

    outcome = world.run()

    assert outcome.status == "failed"
    assert f"installing the dependencies failed in the {world.sandbox.name} sandbox (exit status 3)" \
        in outcome.detail
    # the head's install, then (it failed) the base's: the same hostile commands, twice
    assert [request.mounts[0].source.name for request, _ in world.sandbox.calls] == ["repo", "base"]
    [token] = world.tokens_used()
    key_body = world.key.splitlines()[1]
    for request, result in world.sandbox.calls:
        seen = result.stdout + result.stderr
        assert "VIRTUAL_ENV=/work/venv" in seen and "no-key-file" in seen and "no-credentials" in seen
        for secret in (token, key_body, WEBHOOK_SECRET):
            assert secret not in seen and secret not in json.dumps(request.env)
        assert not any(f"DIFFORACLE_{name}" in seen for name in ("PRIVATE_KEY", "WEBHOOK_SECRET", "APP_ID"))
        assert str(key_file) not in json.dumps(request.env)
    runs, comments, reviews = world.ours()
    assert [(r.conclusion, r.output["title"]) for r in runs] == [("failure", "difforacle could not run")]
    assert "exit status 3" in runs[0].output["summary"]
    assert comments == [] and reviews == []
    assert list((world.settings.data_dir / "work").iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("where", ["queue", "git", "api"])
def test_a_head_superseded_before_publishing_gets_nothing_published(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object, where: str) -> None:
    """`git`: GitHub has the push (its refs/pull/N/head moved) but its webhook has not arrived;
    `api`: the same where git cannot tell (no such ref), so the API is asked."""
    world = _world(tmp_path, fake, bubblewrap)
    newer = "f" * 40
    if where == "git":
        world.builder.switch("feature")
        newer = world.builder.commit({"notes.txt": "pushed while the engine ran\n"}, "a newer push")
        world.builder.switch("main")

    def push_after_the_engine(request: SandboxRequest, result: SandboxResult) -> None:
        if request.egress is None:  # the engine's step
            if where == "queue":
                world.state.latest[world.job.pull_key] = newer
            else:
                fake.set_pull_head(OWNER, NAME, NUMBER, newer)

    world.sandbox.after.append(push_after_the_engine)

    outcome = world.run()

    assert outcome.status == "superseded", outcome.detail
    if where != "queue":
        assert outcome.detail == f"the pull request moved on to {newer[:12]}"
    asked_the_api = fake.requests_to("GET", f"/repos/{OWNER}/{NAME}/pulls/{NUMBER}") != []
    assert asked_the_api == (where == "api")
    runs, comments, reviews = world.ours()
    assert comments == [] and reviews == []
    assert [(r.conclusion, r.output["title"], r.annotations) for r in runs] == [
        ("cancelled", "Superseded", [])]
    assert fake.requests_to("GET", "/repos/*/pulls/*/files") == []  # not even prepared


@pytest.mark.slow
def test_a_push_as_publishing_begins_stops_it_before_the_review(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """The head was checked under the lock, then moved while the review was being prepared (the
    files listed): GitHub would take a review of an older commit, outdated on arrival."""
    world = _world(tmp_path, fake, bubblewrap)
    listed = GitHubClient.pull_files

    def push_meanwhile(client: GitHubClient, number: int) -> list:
        world.builder.switch("feature")
        newer = world.builder.commit({"notes.txt": "pushed while publishing\n"}, "a newer push")
        world.builder.switch("main")
        fake.set_pull_head(OWNER, NAME, NUMBER, newer)
        return listed(client, number)

    monkeypatch.setattr(GitHubClient, "pull_files", push_meanwhile)

    outcome = world.run()

    assert outcome.status == "superseded", outcome.detail
    assert outcome.detail.endswith("as it was being published")
    runs, comments, reviews = world.ours()
    assert comments == [] and reviews == []
    assert [(r.conclusion, r.output["title"]) for r in runs] == [("cancelled", "Superseded")]
    assert fake.violations == []


def test_a_push_while_the_engine_runs_stops_it(tmp_path: Path, fake: FakeGitHub, bubblewrap: object,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "CURRENT_POLL", 0.2)
    world = _world(tmp_path, fake, bubblewrap, budget=60.0)

    def push_as_the_engine_starts(request: SandboxRequest) -> None:
        if request.egress is None:  # the engine's step
            world.state.latest[world.job.pull_key] = "f" * 40

    world.sandbox.before.append(push_as_the_engine_starts)

    outcome = world.run()

    assert outcome.status == "superseded", outcome.detail
    assert "while the engine ran: it was stopped" in outcome.detail
    [result] = [r for q, r in world.sandbox.calls if q.egress is None]
    assert result.cancelled and result.outcome == "cancelled" and result.exit_code is None
    assert result.seconds < 30  # stopped, not run to the end of its 60 s budget
    assert not (tmp_path / "data" / "work").exists() or not any((tmp_path / "data" / "work").iterdir())
    runs, comments, reviews = world.ours()
    assert comments == [] and reviews == []
    assert [(r.conclusion, r.output["title"]) for r in runs] == [("cancelled", "Superseded")]


@pytest.mark.slow
def test_a_job_that_outlives_its_token_publishes_with_a_renewed_one(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    skew = timedelta()

    def now() -> datetime:  # GitHub's clock and the worker's, both moved by the engine step
        return datetime.now(UTC) + skew

    def an_hour_passes(request: SandboxRequest) -> None:
        nonlocal skew
        if request.egress is None:
            skew = timedelta(minutes=61)

    fake.wall_clock = now
    world.sandbox.before.append(an_hour_passes)

    outcome = run_job(world.job, world.settings, world.state, sandbox=world.sandbox,
                      github=AppAccess(world.settings, FAST, clock=now))

    assert outcome.status == "published", outcome.detail
    assert [r for r in fake.requests if r.status == 401] == []
    minted = fake.requests_to("POST", "/app/installations/*/access_tokens")
    assert [r.json for r in minted] == [{"repository_ids": [world.job.repository_id],
                                         "permissions": TOKEN_PERMISSIONS}] * 2
    first, renewed = sorted(world.tokens_used(), key=lambda token: fake.tokens[token].expires_at)
    assert fake.tokens[renewed].repositories == {f"{OWNER}/{NAME}"}
    assert fake.tokens[renewed].permissions == TOKEN_PERMISSIONS
    assert fake.tokens[first].expires_at <= now()  # the first one would have been refused
    writes = [r for r in fake.requests if r.method in ("POST", "PATCH") and r.path.startswith("/repos/")]
    assert writes[0].token == first and writes[-1].token == renewed
    runs, comments, _ = world.ours()
    assert [r.conclusion for r in runs] == ["neutral"] and len(comments) == 1


def test_a_job_already_superseded_does_not_start(tmp_path: Path, fake: FakeGitHub,
                                                  bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    world.state.latest[world.job.pull_key] = "e" * 40

    assert world.run().status == "superseded"
    assert fake.requests == [] and world.sandbox.calls == []


def _redis_down(job: PullRequestJob) -> bool:
    """The state's is_current while Redis is away."""
    raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


@pytest.mark.slow
def test_a_storage_error_is_not_the_jobs_failure_the_job_runs_again_on_its_check_run(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    is_current = world.state.is_current

    def redis_goes_down(request: SandboxRequest, result: SandboxResult) -> None:
        if request.egress is not None:  # after the dependency step the runner asks if the head is current
            world.state.is_current = _redis_down

    world.sandbox.after.append(redis_goes_down)
    with pytest.raises(redis.exceptions.ConnectionError):  # to the queue, which runs the job again
        world.run()
    runs, comments, _ = world.ours()
    assert [(r.status, r.conclusion) for r in runs] == [("in_progress", None)] and comments == []

    world.sandbox.after.clear()
    world.state.is_current = is_current
    assert world.run().status == "published"
    runs, comments, _ = world.ours()
    assert [r.conclusion for r in runs] == ["neutral"] and len(comments) == 1  # the same check run


def test_a_check_run_left_in_progress_by_a_stopped_run_is_cancelled_once_a_newer_head_supersedes_it(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    """The run stops after creating its check run (its worker killed: here the storage fails, which
    leaves the lease to expire the same way); a push comes before the run is recovered."""
    world = _world(tmp_path, fake, bubblewrap)
    is_current = world.state.is_current

    def worker_dies(request: SandboxRequest, result: SandboxResult) -> None:
        if request.egress is not None:
            world.state.is_current = _redis_down

    world.sandbox.after.append(worker_dies)
    with pytest.raises(redis.exceptions.ConnectionError):
        world.run()
    [run] = world.ours()[0]
    assert run.status == "in_progress" and world.state.open_check_run(world.job)["id"] == run.id
    world.state.is_current = is_current
    world.state.latest[world.job.pull_key] = "e" * 40
    calls = len(world.sandbox.calls)

    assert world.run().status == "superseded"  # the recovered run
    assert [(r.id, r.status, r.conclusion, r.output["title"]) for r in world.ours()[0]] == [
        (run.id, "completed", "cancelled", "Superseded")]
    assert len(world.sandbox.calls) == calls and world.state.open_check_run(world.job) is None
    requests = len(fake.requests)
    assert world.run().status == "superseded"  # run once more: nothing left to cancel, no request
    assert len(fake.requests) == requests and fake.violations == []


@pytest.mark.slow
def test_a_completed_check_run_is_not_left_open(tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    assert world.run().status == "published"
    assert world.state.check_run(world.job) and world.state.open_check_run(world.job) is None


@pytest.mark.slow
def test_a_job_run_again_takes_its_check_run_over_and_looks_for_it_only_after_a_death_mid_creation(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)

    def listed() -> int:
        return len(fake.requests_to("GET", "/repos/*/commits/*/check-runs"))

    assert world.run().status == "published"
    assert listed() == 0  # the first run of a head creates its check run at once
    [run] = world.ours()[0]
    assert world.run().status == "published"  # run again (a redelivery, a rerun): the state knows it
    assert listed() == 0 and [r.id for r in world.ours()[0]] == [run.id]

    world.state.remember_check_run(world.job)  # a run that died between creating it and hearing its id
    assert world.run().status == "published"
    assert listed() == 1 and [r.id for r in world.ours()[0]] == [run.id]
    assert world.state.check_run(world.job)["id"] == run.id
    other = replace(world.job, head_sha="f" * 40)
    assert world.state.check_run(other) is None  # another head: none of its own yet
    assert fake.violations == []


@pytest.mark.slow
def test_github_failures_are_retried_or_degraded_never_lost_never_duplicated(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    fake.fail_next(1, status=502, method="POST", path="/app/installations/*/access_tokens")
    fake.rate_limit_next(1, status=403, method="POST", path="/repos/*/check-runs")
    fake.rate_limit_next(1, status=429, method="GET", path="/repos/*/pulls/*/files")
    fake.fail_next(1, status=502, method="PATCH", path="/repos/*/check-runs/*")
    fake.fail_next(1, status=422, method="POST", path="/repos/*/pulls/*/reviews",
                   message="Unprocessable Entity")
    fake.fail_next(1, status=502, method="POST", path="/repos/*/issues/*/comments", processed=True)

    first = world.run()

    # the comment was written although GitHub answered 502: the job says it is not sure
    assert first.status == "failed" and "published only in part" in first.detail
    runs, comments, reviews = world.ours()
    assert [r.conclusion for r in runs] == ["neutral"]  # retried past the 502
    [comment] = comments
    assert reviews == []  # refused with 422: the findings are in the comment in full instead
    assert "(review comment)" not in comment.body and "def test_discount_return_matches_base" in comment.body
    assert "cannot post the review: GitHub answered 422" in comment.body
    statuses = [r.status for r in fake.requests_to("POST", "/app/installations/*/access_tokens")]
    assert statuses[:2] == [502, 201]

    second = world.run()  # the queue's redelivery of the failed job

    assert second.status == "published", second.detail
    runs_again, comments_again, reviews_again = world.ours()
    assert [r.id for r in runs_again] == [runs[0].id]
    assert [c.id for c in comments_again] == [comment.id] and "(review comment)" in comments_again[0].body
    assert len(reviews_again) == 1 and reviews_again[0].commit_id == world.job.head_sha
    assert fake.requests_to("GET", f"/repos/{OWNER}/{NAME}/pulls/{NUMBER}") == []  # git told the head
    assert fake.violations == []


@pytest.mark.slow
def test_a_head_in_a_fork_is_fetched_as_the_pull_requests_ref(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap)
    git = world.builder.repo.git
    git.update_ref(f"refs/pull/{NUMBER}/head", world.job.head_sha)
    git.branch("-D", "feature")  # the head is in the fork: only refs/pull/N/head reaches it here
    fork_job = PullRequestJob(**{**world.job.__dict__, "head_repository": "forker/shop"})

    outcome = world.run(fork_job)

    assert outcome.status == "published", outcome.detail
    assert [r.conclusion for r in world.ours()[0]] == ["neutral"]


def test_a_bad_configuration_on_base_fails_the_check_run_with_one_line(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    world = _world(tmp_path, fake, bubblewrap, before={"pyproject.toml": "[tool.difforacle]\nbudgett = 3\n"})

    outcome = world.run()

    where = f"pyproject.toml of the base commit {world.job.base_sha[:12]} [tool.difforacle]"
    assert outcome == JobOutcome("failed", f"{where}: unknown key 'budgett' (did you mean 'budget'?)")
    [run] = world.ours()[0]
    assert run.conclusion == "failure" and "unknown key 'budgett'" in run.output["summary"]
    assert world.sandbox.calls == []


@pytest.mark.slow
def test_the_engine_judges_by_the_base_commits_settings_not_the_heads(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    """The base ignores the regression's target; the pull request's own pyproject.toml would
    stop ignoring it. The engine gets the base's file, so the regression is left out."""
    ignoring = {"pyproject.toml": '[tool.difforacle]\nignore-targets = ["shop.prices:*"]\n'}
    world = _world(tmp_path, fake, bubblewrap, before=ignoring,
                   after={"pyproject.toml": "[tool.difforacle]\nignore-targets = []\n"})
    given: list[str] = []  # what the engine's --config holds while it runs (the work folder goes after)

    def read_config(request: SandboxRequest) -> None:
        given.extend((m.source / "pyproject.toml").read_text() for m in request.mounts
                     if m.target == "/work/config" and m.read_only)

    world.sandbox.before.append(read_config)

    outcome = world.run()

    assert outcome.status == "published", outcome.detail
    engine = next(request for request, _ in world.sandbox.calls if "diff" in request.argv)
    assert engine.argv[engine.argv.index("--config") + 1] == "/work/config/pyproject.toml"
    # as many exploring workers as the sandbox has CPUs, not as the host has cores
    assert engine.argv[engine.argv.index("--jobs") + 1] == str(math.ceil(engine.limits.cpus))
    assert given == [ignoring["pyproject.toml"]]
    [run] = world.ours()[0]
    assert run.conclusion == "success", run.output["summary"]  # nothing reported: the target is ignored
    assert "targets the project ignores" in run.output["summary"]


@pytest.mark.slow
def test_the_pull_requests_own_words_reach_the_engine_and_explain_its_change(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    """The description names the changed function: its difference is explained, so it is folded in
    the summary and gets no review comment. A body starting with "-" is a text, never an option."""
    world = _world(tmp_path, fake, bubblewrap)
    job = replace(world.job, body="- `discount` takes 10% off now, as the shop asked.")

    outcome = world.run(job)

    assert outcome.status == "published", outcome.detail
    engine = next(request for request, _ in world.sandbox.calls if "diff" in request.argv)
    assert f"--pr-body={job.body}" in engine.argv and "--pr-title=Bigger discounts" in engine.argv
    [run], [comment], reviews = world.ours()
    assert "### Explained by the pull request" in comment.body and reviews == []
    # quoted as plain text: its backticks escaped, so that it renders as the author wrote it
    quoted = 'named by the pull request, in the body: "- \\`discount\\` takes 10% off now'
    assert quoted in comment.body.lower()
    assert run.conclusion == "neutral"


@pytest.mark.slow
def test_the_job_timeout_bounds_the_sandboxed_steps(tmp_path: Path, fake: FakeGitHub,
                                                    bubblewrap: object) -> None:
    slow = {"pyproject.toml": "[tool.difforacle]\ninstall = ['sleep 60']\n"}
    world = _world(tmp_path, fake, bubblewrap, before=slow, job_timeout=3.0)

    outcome = world.run()

    assert outcome.status == "failed" and "wall-clock limit" in outcome.detail
    [(_, result)] = world.sandbox.calls
    assert result.timed_out and result.seconds < 20
    assert [r.conclusion for r in world.ours()[0]] == ["timed_out"]


@pytest.mark.slow
def test_a_head_that_breaks_its_own_installation_is_tested_with_the_bases_dependencies(
        tmp_path: Path, fake: FakeGitHub, bubblewrap: object) -> None:
    """As a setup.py importing the package does: the head's install fails because of the very
    regression under test, so the base's dependencies are installed and the engine reports it."""
    checks_import = {"pyproject.toml": "[tool.difforacle]\ninstall = [\"python -c 'import shop.prices'\"]\n"}
    broken = {"shop/prices.py": PRICES.format(divisor=100) + "raise ImportError('the head broke this')\n"}
    world = _world(tmp_path, fake, bubblewrap, before=checks_import, after=broken)

    outcome = world.run()

    assert outcome.status == "published", outcome.detail
    steps = [(request.egress is not None, request.mounts[0].source.name)
             for request, _ in world.sandbox.calls]
    assert steps == [(True, "repo"), (True, "base"), (False, "repo")]  # base: the clone made beforehand
    [comment] = world.ours()[1]
    assert "Installing the head's dependencies failed" in comment.body
    assert "the head broke this" in comment.body and "shop.prices" in comment.body


def test_only_the_dependency_step_gets_the_package_index_settings() -> None:
    environ = {"PIP_INDEX_URL": "https://mirror.example/simple", "HTTPS_PROXY": "http://proxy:3128",
               "DIFFORACLE_WEBHOOK_SECRET": "no", "GITHUB_TOKEN": "no", "PIP_CERT": ""}
    # the worker's own proxy is not the sandbox's: the egress proxy goes through it (test_egress.py)
    assert package_index_environment(environ) == {"PIP_INDEX_URL": "https://mirror.example/simple"}


def test_a_failed_steps_message_is_its_error_line_not_pips_closing_note() -> None:
    pip = ("Processing /work/repo\n  error: subprocess-exited-with-error\n"
           "ERROR: Could not find a version that satisfies the requirement nothere\n"
           "note: This error originates from a subprocess, and is likely not a problem with pip.\n")
    assert last_error_line(pip) == "ERROR: Could not find a version that satisfies the requirement nothere"
    assert last_error_line("just one line\n") == "just one line"
    assert last_error_line("") == "no error output"


def test_work_directories_left_by_killed_workers_are_swept_and_running_ones_kept(tmp_path: Path) -> None:
    settings = AppSettings(data_dir=tmp_path, queue_url="sqlite:///unused", job_timeout=100.0,
                           lease_seconds=10.0)
    root = tmp_path / "work"
    stale, running = root / "octo-shop-7-aaaa-x1", root / "octo-shop-8-bbbb-x2"
    for work in (stale, running):
        (work / "repo").mkdir(parents=True)
        (work / "repo" / "file.py").write_text("x = 1\n")
    (stale / "repo").chmod(0o500)  # as a sandbox may leave it
    now = time.time()
    os.utime(stale, (now - 1000, now - 1000))  # older than 100 + 2 * 10 + 600 seconds
    os.utime(running, (now - 500, now - 500))

    assert sweep_stale_work(settings, now) == 1
    assert not stale.exists() and (running / "repo" / "file.py").exists()
    if os.geteuid() == 0:  # a root worker's job folder is a tmpfs: unmounted, then removed
        stale.mkdir()
        assert job_disk.cap(stale, 8) is None
        (stale / "left.txt").write_text("x")
        os.utime(stale, (now - 1000, now - 1000))
        assert sweep_stale_work(settings, now) == 1
        assert not stale.exists() and not os.path.ismount(stale)
    assert sweep_stale_work(AppSettings(data_dir=tmp_path / "none", queue_url="sqlite:///unused")) == 0


# The head's code, on import in the engine's worker: a process of its own that outlives the worker,
# waits for the engine's report, stops the engine (the same user may signal it), rewrites the
# report as clean and lets the engine go on; first it looks for what would let it sign the forgery.
FORGER = r'''

def _forge_the_report():
    import ctypes, json, os, signal, time
    try:
        os.close(os.open("/tmp/forger.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:
        return
    engine = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.fork() != 0:  # not os.fork: no audit event
        return
    libc.setsid()
    log = open("/work/out/forger.log", "a", buffering=1)
    for folder in ("/work/key", "/work/out", "/work/config"):
        for name in (os.listdir(folder) if os.path.isdir(folder) else []):
            log.write(f"file {folder}/{name}\n")
    for part in ("mem", "environ", "fd"):
        try:
            os.listdir(f"/proc/{engine}/fd") if part == "fd" else open(f"/proc/{engine}/{part}", "rb").close()
            log.write(f"engine {part} read\n")
        except OSError as exc:
            log.write(f"engine {part} {type(exc).__name__}\n")
    deadline = time.time() + 240
    while time.time() < deadline:
        try:
            report = json.loads(open("/work/out/report.json", "rb").read())
        except (OSError, ValueError):
            time.sleep(0.001)
            continue
        if report.get("differences"):
            libc.kill(engine, signal.SIGSTOP)
            report["differences"] = []
            with open("/work/out/report.json", "w") as handle:
                json.dump(report, handle)
            for name in os.listdir("/work/out"):
                if name.startswith("report.json."):
                    with open(f"/work/out/{name}", "w") as handle:
                        handle.write("0" * 64)
            log.write("forged\n")
            libc.kill(engine, signal.SIGCONT)
        time.sleep(0.001)
    os._exit(0)


_forge_the_report()
'''


@pytest.mark.slow
def test_the_projects_code_cannot_forge_the_engines_report(tmp_path: Path, fake: FakeGitHub,
                                                           any_sandbox: object) -> None:
    # the attack needs a report with a difference to rewrite: time enough to find it on a loaded machine
    world = _world(tmp_path, fake, any_sandbox, after={"shop/prices.py": PRICES.format(divisor=10) + FORGER},
                   budget=15.0)
    forger_log: list[str] = []

    def read_the_forgers_log(request: SandboxRequest, result: SandboxResult) -> None:
        for mount in request.mounts:
            if (mount.source / "forger.log").is_file():
                forger_log.extend((mount.source / "forger.log").read_text().splitlines())

    world.sandbox.after.append(read_the_forgers_log)

    outcome = world.run()

    assert "forged" in forger_log, forger_log  # the attack ran and rewrote the file
    # ... and found nothing that lets it sign: no key file left, the engine's memory closed to it
    assert not [line for line in forger_log if line.startswith("file /work/key/")], forger_log
    assert {"engine mem PermissionError", "engine environ PermissionError",
            "engine fd PermissionError"} <= set(forger_log), forger_log
    assert outcome.status == "failed", outcome.detail
    assert "the engine's report was changed after the engine wrote it" in outcome.detail
    runs, comments, reviews = world.ours()
    assert [r.conclusion for r in runs] == ["failure"] and comments == [] and reviews == []


def test_a_non_root_worker_says_why_its_job_folders_are_not_capped(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_disk.os, "geteuid", lambda: 1000)
    assert "needs a root worker" in (job_disk.cap(tmp_path, 16) or "")
    job_disk.release(tmp_path)  # not a mount: nothing to do
    assert tmp_path.is_dir() and not os.path.ismount(tmp_path)
