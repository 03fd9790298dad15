"""Tests for the App's webhook receiver (`difforacle.bot.app.webhook` and
`difforacle.bot.app.events`): signatures, limits, events, de-duplication of deliveries and
coalescing per pull request.

The receiver runs on Flask's test client over a real embedded (SQLite) queue; queued tasks are
run here by `drain` with a recording executor instead of a consumer.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Blueprint
from support.app_helpers import SECRET, Recorder, drain, fixture, headers, pull_event, sha
from support.paths import SUPPORT

from difforacle.bot.app.events import BadPayload, route
from difforacle.bot.app.model import PullRequestJob
from difforacle.bot.app.queue import JobQueue
from difforacle.bot.app.settings import AppSettings, load_settings
from difforacle.bot.app.state import CLAIM_GRACE, JobState
from difforacle.bot.app.webhook import create_app, signature, verify_signature
from difforacle.bot.summary import ACCEPT_ALL_ACTION

OPENED = fixture("pull_request.opened")
OPENED_HEAD = OPENED["pull_request"]["head"]["sha"]
PULL_KEY = f"{OPENED['repository']['full_name']}#{OPENED['number']}"


@pytest.fixture
def settings(tmp_path: Path) -> AppSettings:
    return load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_WEBHOOK_SECRET": SECRET,
                          "DIFFORACLE_MAX_BODY": "65536"})


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def queue(settings: AppSettings, recorder: Recorder) -> JobQueue:
    return JobQueue(settings, executor=recorder)


@pytest.fixture
def client(settings: AppSettings, queue: JobQueue) -> Any:
    return create_app(settings, queue).test_client()


def post(client: Any, event: str, payload: dict | bytes, delivery: str = "d-1", secret: str | None = SECRET,
         **extra: str) -> Any:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return client.post("/webhook", data=body, headers={**headers(event, body, delivery, secret), **extra})


# ------------------------------------------------------------------ signatures and limits

def test_a_signed_pull_request_is_queued_with_202_and_runs_once(client: Any, queue: JobQueue,
                                                                 recorder: Recorder) -> None:
    answer = post(client, "pull_request", OPENED)
    assert answer.status_code == 202, answer.json
    assert answer.json == {"status": "queued", "jobs": [f"{PULL_KEY}@{OPENED_HEAD}"]}
    assert queue.pending() == 1 and queue.state.delivery_status("d-1") == "queued"
    assert drain(queue) == 1
    (job,) = recorder.calls
    pull = OPENED["pull_request"]
    assert (job.repository, job.number, job.base_sha, job.head_sha, job.installation_id) == (
        OPENED["repository"]["full_name"], pull["number"], pull["base"]["sha"], OPENED_HEAD,
        OPENED["installation"]["id"])
    assert (job.delivery, job.head_ref, job.base_ref, job.title, job.body, job.from_fork) == (
        "d-1", pull["head"]["ref"], pull["base"]["ref"], pull["title"], pull["body"] or "", False)
    assert queue.state.delivery_status("d-1") == "done"


@pytest.mark.parametrize("header", [None, "", "sha256=" + "0" * 64, "sha1=" + "0" * 40, "sha256=é",
                                    "wrong-secret"])
def test_missing_or_bad_signatures_are_401_and_queue_nothing(client: Any, queue: JobQueue,
                                                             header: str | None) -> None:
    body = json.dumps(OPENED).encode()
    sent = headers("pull_request", body, "d-1", secret=None)
    if header == "wrong-secret":
        sent["X-Hub-Signature-256"] = signature("not the secret", body)
    elif header is not None:
        sent["X-Hub-Signature-256"] = header
    answer = client.post("/webhook", data=body, headers=sent)
    assert answer.status_code == 401 and "X-Hub-Signature-256" in answer.json["error"]
    assert queue.pending() == 0 and queue.state.delivery_status("d-1") is None


def test_the_signature_is_over_the_raw_body(client: Any, queue: JobQueue) -> None:
    raw = json.dumps(OPENED, indent=3, sort_keys=True).encode()  # not how we would serialize it
    assert post(client, "pull_request", raw).status_code == 202
    tampered = raw.replace(b'"number": 2', b'"number": 3', 1)
    sent = headers("pull_request", raw, "d-2")
    assert client.post("/webhook", data=tampered, headers=sent).status_code == 401
    assert verify_signature(SECRET, raw, signature(SECRET, raw))
    assert not verify_signature(SECRET, raw, None)


@pytest.mark.parametrize(("body", "extra", "message"), [
    (b"{not json", {}, "not JSON"),
    (b"[1, 2]", {}, "not a JSON object"),
    (b"\xff\xfe", {}, "not JSON"),
    (json.dumps({**OPENED, "pull_request": {**OPENED["pull_request"], "head": {"sha": "nope"}}}).encode(), {},
     "pull_request.head.sha is not a commit SHA"),
    (json.dumps({k: v for k, v in OPENED.items() if k != "installation"}).encode(), {}, "no installation"),
    (json.dumps(OPENED).encode(), {"X-GitHub-Delivery": "../../etc"}, "X-GitHub-Delivery"),
    (json.dumps(OPENED).encode(), {"X-GitHub-Event": ""}, "X-GitHub-Event"),
])
def test_malformed_bodies_and_headers_are_400(client: Any, queue: JobQueue, body: bytes, extra: dict,
                                              message: str) -> None:
    answer = post(client, "pull_request", body, **extra)
    assert answer.status_code == 400 and message in answer.json["error"], answer.json
    assert queue.pending() == 0


def test_an_oversized_body_is_413_before_anything_else(client: Any, queue: JobQueue,
                                                       settings: AppSettings) -> None:
    body = b" " * (settings.max_body + 1)
    for secret in (SECRET, None):  # signed or not: the size is checked first
        answer = post(client, "pull_request", body, secret=secret)
        assert answer.status_code == 413 and "DIFFORACLE_MAX_BODY" in answer.json["error"]
    assert queue.pending() == 0


# ------------------------------------------------------------------ events

@pytest.mark.parametrize(("name", "event", "code", "status"), [
    ("pull_request.opened", "pull_request", 202, "queued"),
    ("pull_request.opened.fork", "pull_request", 202, "queued"),
    ("pull_request.synchronize", "pull_request", 202, "queued"),
    ("pull_request.reopened", "pull_request", 202, "queued"),
    ("pull_request.ready_for_review", "pull_request", 202, "queued"),
    ("pull_request.converted_to_draft", "pull_request", 204, None),  # nothing changes: nothing to do
    ("pull_request.closed", "pull_request", 200, "skipped"),
    ("check_run.rerequested", "check_run", 200, "skipped"),  # names no pull request we know
    ("check_run.requested_action", "check_run", 204, None),  # another App's button
    ("installation.created", "installation", 200, "recorded"),
    ("installation_repositories.added", "installation_repositories", 200, "recorded"),
    ("ping", "ping", 200, "pong"),
    ("push", "push", 204, None),
    ("issue_comment.created", "issue_comment", 204, None),  # an issue's comment
    ("issue_comment.created.pull_request", "issue_comment", 200, "skipped"),  # a comment, no command
])
def test_real_payloads(client: Any, queue: JobQueue, recorder: Recorder, name: str, event: str, code: int,
                       status: str | None) -> None:
    payload = fixture(name)
    answer = post(client, event, payload)
    assert answer.status_code == code, answer.json
    assert (answer.json or {}).get("status") == status
    drain(queue)
    assert len(recorder.calls) == (1 if code == 202 else 0)
    if name == "pull_request.opened.fork":
        head_repo = payload["pull_request"]["head"]["repo"]["full_name"]
        assert recorder.calls[0].head_repository == head_repo and recorder.calls[0].from_fork
    if event == "installation":
        assert queue.state.installation(payload["installation"]["id"])["account"] == \
            payload["installation"]["account"]["login"]


def test_a_command_on_a_pull_request_is_queued_for_the_worker_to_answer(client: Any, queue: JobQueue,
                                                                         recorder: Recorder) -> None:
    command = copy.deepcopy(fixture("issue_comment.created.pull_request"))
    command["comment"]["body"] = "/difforacle accept D1"
    by_bot = copy.deepcopy(command)
    by_bot["comment"]["user"].update(login="renovate[bot]", type="Bot")

    answer = post(client, "issue_comment", command, delivery="c-1")
    skipped = post(client, "issue_comment", by_bot, delivery="c-2")

    assert answer.status_code == 202 and answer.json["jobs"] == ["Codertocat/Hello-World#1!comment-492700400"]
    assert (skipped.status_code, skipped.json["status"]) == (200, "skipped")
    drain(queue)
    [job] = recorder.calls
    assert job.is_command and job.head_sha == ""
    assert (job.commenter, job.comment) == ("Codertocat", "/difforacle accept D1")
    assert recorder.current == [True]  # a command has no head to be superseded by
    assert queue.state.latest_head("Codertocat/Hello-World#1") is None  # nor does it record one


def test_every_comment_on_a_pull_request_records_its_newest_comment_id(client: Any, queue: JobQueue) -> None:
    """Which commands a report published later postdates (`accept all`), without listing comments:
    commands and plain remarks count, the larger id wins whatever order they arrive in, an issue's
    comment counts for no pull request."""
    remark = copy.deepcopy(fixture("issue_comment.created.pull_request"))
    remark["comment"]["body"] = "looks good to me"
    older = copy.deepcopy(remark)
    older["comment"]["id"] = remark["comment"]["id"] - 5
    command = copy.deepcopy(remark)
    command["comment"].update(id=remark["comment"]["id"] + 3, body="/difforacle accept all")
    on_issue = copy.deepcopy(remark)
    del on_issue["issue"]["pull_request"]
    on_issue["comment"]["id"] = remark["comment"]["id"] + 100
    key = "Codertocat/Hello-World#1"

    assert queue.state.newest_comment(key) == 0
    assert post(client, "issue_comment", remark, delivery="c-1").json["status"] == "skipped"
    assert queue.state.newest_comment(key) == remark["comment"]["id"]
    post(client, "issue_comment", older, delivery="c-2")
    assert queue.state.newest_comment(key) == remark["comment"]["id"]
    assert post(client, "issue_comment", command, delivery="c-3").status_code == 202
    assert queue.state.newest_comment(key) == command["comment"]["id"]
    assert post(client, "issue_comment", on_issue, delivery="c-4").status_code == 204
    assert queue.state.newest_comment(key) == command["comment"]["id"]


def test_unknown_events_and_actions_are_204(client: Any, queue: JobQueue) -> None:
    assert post(client, "issues", {"action": "opened"}, delivery="d-1").status_code == 204
    labeled = {**OPENED, "action": "labeled"}
    assert post(client, "pull_request", labeled, delivery="d-2").status_code == 204
    created = {**fixture("check_run.rerequested"), "action": "created"}  # our own check runs come back
    assert post(client, "check_run", created, delivery="d-3").status_code == 204
    assert queue.pending() == 0


def test_a_draft_is_skipped_but_its_head_supersedes_older_jobs(client: Any, queue: JobQueue,
                                                               recorder: Recorder) -> None:
    assert post(client, "pull_request", OPENED, delivery="d-1").status_code == 202
    draft = fixture("pull_request.converted_to_draft")
    draft["pull_request"]["head"]["sha"] = sha(99)
    draft["action"] = "synchronize"  # a push to the draft
    answer = post(client, "pull_request", draft, delivery="d-2")
    assert answer.status_code == 200 and "draft" in answer.json["reason"]
    drain(queue)
    assert recorder.calls == []  # the queued job was superseded before it started
    assert queue.state.delivery_status("d-1") == "done"
    ready = {**fixture("pull_request.ready_for_review")}
    ready["pull_request"]["head"]["sha"] = sha(99)
    assert post(client, "pull_request", ready, delivery="d-3").status_code == 202
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(99)]


# ------------------------------------------------------------------ check run re-runs

def _rerequest(head_sha: str, pull_requests: list | None = None, external_id: str = "") -> dict:
    """The real check_run.rerequested payload, moved onto the opened fixture's repository and head."""
    payload = copy.deepcopy(fixture("check_run.rerequested"))
    payload["repository"] = OPENED["repository"]
    payload["check_run"].update(head_sha=head_sha, external_id=external_id,
                                pull_requests=pull_requests or [])
    return payload


def _pull_ref(pull: dict) -> dict:
    """A check run's `pull_requests` item, as GitHub builds it from the pull request."""
    side = lambda branch: {"ref": branch["ref"], "sha": branch["sha"],  # noqa: E731
                           "repo": {key: branch["repo"][key] for key in ("id", "url", "name")}}
    return {"url": pull["url"], "id": pull["id"], "number": pull["number"], "head": side(pull["head"]),
            "base": side(pull["base"])}


def test_a_rerequested_check_run_runs_its_pull_request_again(client: Any, queue: JobQueue,
                                                            recorder: Recorder) -> None:
    listed = _rerequest(OPENED_HEAD, [_pull_ref(OPENED["pull_request"])])
    assert post(client, "check_run", listed, delivery="d-1").status_code == 202  # never seen: from the item
    assert post(client, "pull_request", OPENED, delivery="d-2").status_code == 202
    by_external_id = _rerequest(OPENED_HEAD, external_id=PULL_KEY)  # a fork's: GitHub lists no PR
    assert post(client, "check_run", by_external_id, delivery="d-3").status_code == 202
    drain(queue)
    first, second, third = recorder.calls
    assert first.head_sha == second.head_sha == third.head_sha == OPENED_HEAD
    assert third == PullRequestJob(**{**second.__dict__, "delivery": "d-3"})  # the stored job, re-run
    outdated = _rerequest(sha(5), [_pull_ref(OPENED["pull_request"])], external_id=PULL_KEY)
    answer = post(client, "check_run", outdated, delivery="d-4")
    assert answer.status_code == 200 and answer.json["status"] == "skipped"


def test_a_rerequested_check_suite_runs_its_pull_request_again(client: Any, queue: JobQueue,
                                                              recorder: Recorder) -> None:
    payload = copy.deepcopy(fixture("check_suite.rerequested"))  # "Re-run all checks"
    payload["repository"], payload["installation"] = OPENED["repository"], OPENED["installation"]
    payload["check_suite"].update(head_sha=OPENED_HEAD, pull_requests=[_pull_ref(OPENED["pull_request"])])
    assert post(client, "pull_request", OPENED, delivery="d-1").status_code == 202
    assert post(client, "check_suite", payload, delivery="d-2").status_code == 202
    drain(queue)
    first, second = recorder.calls
    assert second == PullRequestJob(**{**first.__dict__, "delivery": "d-2"})

    fork = {**payload, "check_suite": {**payload["check_suite"], "pull_requests": []}}  # GitHub lists none
    answer = post(client, "check_suite", fork, delivery="d-3")
    assert answer.status_code == 200 and answer.json["status"] == "skipped"
    requested = {**payload, "action": "requested"}  # every push: the pull_request event runs it
    assert post(client, "check_suite", requested, delivery="d-4").status_code == 204


def _click(head_sha: str, identifier: str = ACCEPT_ALL_ACTION, external_id: str = PULL_KEY) -> dict:
    """The real check_run.requested_action payload, moved onto the opened fixture's pull request."""
    payload = copy.deepcopy(fixture("check_run.requested_action"))
    payload["repository"], payload["installation"] = OPENED["repository"], OPENED["installation"]
    payload["check_run"].update(head_sha=head_sha, external_id=external_id, pull_requests=[])
    payload["requested_action"]["identifier"] = identifier
    return payload


def test_a_click_on_the_accept_all_button_is_a_command_of_whoever_clicked(client: Any, queue: JobQueue,
                                                                          recorder: Recorder) -> None:
    assert post(client, "pull_request", OPENED, delivery="d-1").status_code == 202
    clicked = _click(OPENED_HEAD)
    answer = post(client, "check_run", clicked, delivery="d-2")
    assert answer.status_code == 202, answer.json
    drain(queue)
    _, job = recorder.calls
    assert job.is_command and job.check_run_id == clicked["check_run"]["id"] and job.head_sha == OPENED_HEAD
    assert (job.commenter, job.commenter_type) == (clicked["sender"]["login"], clicked["sender"]["type"])
    assert job.comment == "/difforacle accept all" and job.comment_id == 0
    assert queue.state.latest_head(PULL_KEY) == OPENED_HEAD  # a click records no head

    by_another = copy.deepcopy(clicked)
    by_another["sender"]["login"] = "hubot"
    again = post(client, "check_run", by_another, delivery="d-3")  # another click: answered too
    assert again.status_code == 202 and again.json["jobs"] != answer.json["jobs"]
    older = post(client, "check_run", _click(sha(5)), delivery="d-4")  # an older push's check run
    assert (older.status_code, older.json["status"]) == (200, "skipped")
    assert "older head" in older.json["reason"]
    other = post(client, "check_run", _click(OPENED_HEAD, identifier="fix-it"), delivery="d-5")
    assert other.status_code == 204  # no button of ours
    nowhere = post(client, "check_run", _click(OPENED_HEAD, external_id=""), delivery="d-6")
    assert (nowhere.status_code, nowhere.json["status"]) == (200, "skipped")  # names no pull request


# ------------------------------------------------------------------ deliveries

def test_a_duplicate_delivery_is_queued_once(client: Any, queue: JobQueue, recorder: Recorder) -> None:
    assert post(client, "pull_request", OPENED).status_code == 202
    again = post(client, "pull_request", OPENED)
    assert again.status_code == 200 and again.json == {"status": "duplicate", "delivery_status": "queued"}
    assert queue.pending() == 1
    drain(queue)
    assert post(client, "pull_request", OPENED).json["delivery_status"] == "done"
    assert queue.pending() == 0 and len(recorder.calls) == 1


def test_a_body_replayed_under_another_delivery_id_runs_nothing(client: Any, queue: JobQueue,
                                                                recorder: Recorder) -> None:
    """A signature covers the body, not the delivery id: whoever captured one signed body could
    post it again under new ids, each a full analysis. GitHub never sends one body twice under
    two ids (its redeliveries keep the id)."""
    assert post(client, "pull_request", OPENED).status_code == 202
    drain(queue)
    for delivery in ("d-2", "d-3"):
        replayed = post(client, "pull_request", OPENED, delivery=delivery)
        assert replayed.status_code == 200 and replayed.json == {"status": "replayed", "delivery": "d-1"}
    assert post(client, "pull_request", OPENED).json["status"] == "duplicate"  # its own id: as before
    changed = {**OPENED, "pull_request": {**OPENED["pull_request"], "title": "Another title"}}
    assert post(client, "pull_request", changed, delivery="d-4").status_code == 202  # another body runs
    assert queue.pending() == 1 and len(recorder.calls) == 1


def test_a_redelivery_of_a_failed_delivery_runs_again(client: Any, queue: JobQueue,
                                                      recorder: Recorder) -> None:
    recorder.fail.add("d-1")
    assert post(client, "pull_request", OPENED).status_code == 202
    drain(queue)
    assert queue.state.delivery_status("d-1") == "failed"
    assert post(client, "pull_request", OPENED).status_code == 202  # GitHub's "Redeliver"
    drain(queue)
    assert queue.state.delivery_status("d-1") == "done" and len(recorder.calls) == 2
    assert post(client, "pull_request", OPENED).status_code == 200  # done now: not again


def test_only_one_of_two_redeliveries_of_a_failed_delivery_runs(queue: JobQueue) -> None:
    state = queue.state
    assert state.claim_delivery("d-1") and not state.claim_delivery("d-1")
    state.mark_delivery("d-1", "failed")
    other = JobState(JobQueue(queue.settings).huey)  # another process on the same queue
    assert [state.claim_delivery("d-1"), other.claim_delivery("d-1")].count(True) == 1
    with pytest.raises(ValueError):
        state.mark_delivery("d-1", "lost")


def test_the_queue_unavailable_is_503_and_the_delivery_stays_redeliverable(
        client: Any, queue: JobQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(job: PullRequestJob) -> None:
        raise ConnectionError("redis went away")

    monkeypatch.setattr(queue, "enqueue", broken)
    answer = post(client, "pull_request", OPENED)
    assert answer.status_code == 503 and "redis" not in answer.json["error"]
    assert queue.state.delivery_status("d-1") == "failed"
    monkeypatch.undo()
    assert post(client, "pull_request", OPENED).status_code == 202


def test_a_delivery_whose_job_never_reached_the_queue_runs_when_redelivered(
        client: Any, queue: JobQueue, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis went down between the claim and the enqueue: not even the failure could be recorded."""
    now = [1_000_000.0]
    queue.state.clock = lambda: now[0]

    def down(*args: Any, **kwargs: Any) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(queue, "enqueue", down)
    monkeypatch.setattr(queue.state, "mark_delivery", down)
    assert post(client, "pull_request", OPENED).status_code == 503
    monkeypatch.undo()
    assert queue.pending() == 0 and queue.state.delivery_status("d-1") == "queued"  # the claim stayed
    assert post(client, "pull_request", OPENED).json["status"] == "duplicate"  # as if still being received
    now[0] += CLAIM_GRACE + 1
    assert post(client, "pull_request", OPENED).status_code == 202  # GitHub's "Redeliver", later
    now[0] += CLAIM_GRACE + 1
    again = post(client, "pull_request", OPENED)  # queued this time: a duplicate, however late
    assert again.json == {"status": "duplicate", "delivery_status": "queued"}
    assert drain(queue) == 1 and len(recorder.calls) == 1
    assert queue.state.delivery_status("d-1") == "done"
    assert post(client, "pull_request", OPENED).json == {"status": "duplicate", "delivery_status": "done"}


# ------------------------------------------------------------------ coalescing per pull request

def test_a_newer_head_supersedes_a_queued_job(client: Any, queue: JobQueue, recorder: Recorder) -> None:
    assert post(client, "pull_request", pull_event(2, sha(1)), delivery="d-1").status_code == 202
    newer = pull_event(2, sha(2), action="synchronize", before=sha(1), base="pull_request.synchronize")
    assert post(client, "pull_request", newer, delivery="d-2").status_code == 202
    assert queue.pending() == 2
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(2)]  # the older never started
    assert queue.state.delivery_status("d-1") == queue.state.delivery_status("d-2") == "done"


def test_a_newer_head_supersedes_a_running_job(client: Any, queue: JobQueue, recorder: Recorder) -> None:
    started, go = threading.Event(), threading.Event()

    def hold_the_first(job: PullRequestJob, state: JobState) -> None:
        if job.head_sha == sha(1):
            assert state.is_current(job)
            started.set()
            assert go.wait(10)

    recorder.hook = hold_the_first
    assert post(client, "pull_request", pull_event(2, sha(1)), delivery="d-1").status_code == 202
    worker = threading.Thread(target=lambda: queue.huey.execute(queue.huey.dequeue()))
    worker.start()
    assert started.wait(10)
    newer = pull_event(2, sha(2), action="synchronize", before=sha(1), base="pull_request.synchronize")
    assert post(client, "pull_request", newer, delivery="d-2").status_code == 202
    go.set()
    worker.join(10)
    drain(queue)
    assert [(job.head_sha, current) for job, current in zip(recorder.calls, recorder.current, strict=True)] \
        == [(sha(1), False), (sha(2), True)]


def test_an_older_head_delivered_late_is_not_run(client: Any, queue: JobQueue, recorder: Recorder) -> None:
    newer = pull_event(2, sha(2), action="synchronize", before=sha(1), base="pull_request.synchronize")
    assert post(client, "pull_request", newer, delivery="d-2").status_code == 202
    late = post(client, "pull_request", pull_event(2, sha(1)), delivery="d-1")  # opened, delivered late
    assert late.status_code == 200 and late.json["status"] == "superseded"
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(2)]
    assert queue.state.delivery_status("d-1") == "done"


def _push(number: int, head: int, before: int | None = None, updated_at: str | None = None) -> dict:
    """The synchronize payload of a push moving pull request `number` from sha(head - 1) (or `before`)."""
    payload = pull_event(number, sha(head), action="synchronize",
                         before=sha(head - 1 if before is None else before), base="pull_request.synchronize")
    if updated_at is not None:
        payload["pull_request"]["updated_at"] = updated_at
    return payload


def test_older_pushes_delivered_after_a_newer_one_do_not_take_the_head_back(
        client: Any, queue: JobQueue, recorder: Recorder) -> None:
    """Pushes 1 -> 2 -> 3 -> 4: the deliveries of 2 and 3 failed and are redelivered after 4's."""
    assert post(client, "pull_request", pull_event(2, sha(1)), delivery="d-1").status_code == 202
    assert post(client, "pull_request", _push(2, 4), delivery="d-4").status_code == 202
    for head in (2, 3):  # 2's `before` (1) was superseded already; 3 was 4's `before`
        late = post(client, "pull_request", _push(2, head), delivery=f"d-{head}")
        assert late.status_code == 200 and late.json["status"] == "superseded", head
    assert queue.state.latest_head(PULL_KEY) == sha(4)  # PULL_KEY is pull request 2's
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(4)]
    assert post(client, "pull_request", _push(2, 5), delivery="d-5").status_code == 202  # newer: supersedes
    assert post(client, "pull_request", _push(2, 7), delivery="d-7").status_code == 202  # 6's not seen yet
    assert post(client, "pull_request", _push(2, 6), delivery="d-6").json["status"] == "superseded"
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(4), sha(7)]


def test_an_opened_event_delivered_late_never_takes_the_head_back(client: Any, queue: JobQueue,
                                                                   recorder: Recorder) -> None:
    assert post(client, "pull_request", _push(2, 3), delivery="d-3").status_code == 202  # 2's delivery lost
    late = post(client, "pull_request", pull_event(2, sha(1)), delivery="d-1")  # a pull request's first head
    assert late.status_code == 200 and late.json["status"] == "superseded"
    assert post(client, "pull_request", _push(2, 2), delivery="d-2").json["status"] == "superseded"
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(3)]


def test_a_delivery_older_by_the_pull_requests_updated_at_does_not_take_the_head_back(
        client: Any, queue: JobQueue, recorder: Recorder) -> None:
    newer = _push(2, 5, before=4, updated_at="2024-03-01T10:00:05Z")
    assert post(client, "pull_request", newer, delivery="d-5").status_code == 202
    reopened = pull_event(2, sha(9), action="reopened", base="pull_request.reopened")  # no `before`
    reopened["pull_request"]["updated_at"] = "2024-03-01T10:00:01Z"
    assert post(client, "pull_request", reopened, delivery="d-9").json["status"] == "superseded"
    later = pull_event(2, sha(10), action="reopened", base="pull_request.reopened")
    later["pull_request"]["updated_at"] = "2024-03-01T10:00:09Z"
    assert post(client, "pull_request", later, delivery="d-10").status_code == 202  # later: it wins
    drain(queue)
    assert [job.head_sha for job in recorder.calls] == [sha(10)]


def test_pull_requests_are_coalesced_separately(client: Any, queue: JobQueue, recorder: Recorder) -> None:
    for number in (2, 3):
        answer = post(client, "pull_request", pull_event(number, sha(number)), delivery=f"d-{number}")
        assert answer.status_code == 202
    drain(queue)
    assert sorted(job.number for job in recorder.calls) == [2, 3] and all(recorder.current)


def test_routing_needs_a_payload_with_the_events_fields() -> None:
    with pytest.raises(BadPayload, match=r"pull_request\.number"):
        route("pull_request", {**OPENED, "pull_request": {**OPENED["pull_request"], "number": "2"}}, "d",
              lambda key: None)
    assert route("pull_request", {**OPENED, "action": "edited"}, "d", lambda key: None).kind == "ignore"


# ------------------------------------------------------------------ the application around the receiver

def test_healthz_reports_the_queue(client: Any, queue: JobQueue, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = client.get("/healthz")
    assert answer.status_code == 200
    assert answer.json == {"status": "ok", "queue": "sqlite", "pending": 0, "registered": True}

    def unreachable() -> int:
        raise ConnectionError("down")

    monkeypatch.setattr(queue, "pending", unreachable)
    assert client.get("/healthz").status_code == 503


def test_blueprints_are_served_next_to_the_webhook(settings: AppSettings, queue: JobQueue) -> None:
    pages = Blueprint("pages", __name__)
    pages.add_url_rule("/setup", "setup", lambda: "register here")
    client = create_app(settings, queue, blueprints=[pages]).test_client()
    assert client.get("/setup").get_data(as_text=True) == "register here"
    assert client.get("/webhook").status_code == 405


def test_before_registration_the_webhook_is_503_then_uses_the_stored_secret(tmp_path: Path,
                                                                          recorder: Recorder) -> None:
    settings = load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path)})
    client = create_app(settings, JobQueue(settings, executor=recorder)).test_client()
    answer = post(client, "pull_request", OPENED)
    assert answer.status_code == 503 and "/setup" in answer.json["error"]
    assert client.get("/healthz").json["registered"] is False
    settings.credentials_path.write_text(json.dumps({"id": 1, "pem": "key", "webhook_secret": SECRET}))
    assert post(client, "pull_request", OPENED).status_code == 202


def test_serve_answers_on_a_real_port_and_stops_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_WEBHOOK_SECRET": SECRET}
    server = subprocess.Popen([sys.executable, str(SUPPORT / "app_helpers.py"), "serve", "--port",
                               "0"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        port = _listening_port(server)
        body = json.dumps(OPENED).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/webhook", data=body,
                                         headers=headers("pull_request", body, "d-1"))
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 202
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as answer:
            assert json.load(answer)["pending"] == 1
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)


def _listening_port(server: subprocess.Popen) -> int:
    assert server.stderr is not None
    for line in server.stderr:
        if "listening on http://" in line:
            return int(line.split("http://", 1)[1].split()[0].rsplit(":", 1)[1])
    raise AssertionError(f"the server exited ({server.wait()}) without listening")


def test_an_unregistered_server_prints_the_token_its_setup_page_asks_for(tmp_path: Path) -> None:
    env = {**os.environ, "DIFFORACLE_DATA_DIR": str(tmp_path)}
    for name in ("DIFFORACLE_WEBHOOK_SECRET", "DIFFORACLE_APP_ID", "DIFFORACLE_PRIVATE_KEY"):
        env.pop(name, None)
    server = subprocess.Popen([sys.executable, str(SUPPORT / "app_helpers.py"), "serve", "--port", "0"],
                              env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        lines = []
        for line in server.stderr:
            lines.append(line)
            if "listening on http://" in line:
                break
        [told] = [line for line in lines if "not registered yet" in line]
        address = re.search(r"(http://127\.0\.0\.1:\d+/setup)\?token=([\w-]+) ", told)
        assert address, told
        page, token = address.groups()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(page, timeout=10)
        assert refused.value.code == 403
        with urllib.request.urlopen(f"{page}?token={token}", timeout=10) as answer:
            assert answer.status == 200 and 'name="manifest"' in answer.read().decode()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)


def _fields(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The paths of a payload's fields, three levels deep (a list by its first item)."""
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = [(0, value[0])] if isinstance(value, list) and value else []
    for key, item in items:
        yield (*path, key)
        if len(path) < 2:
            yield from _fields(item, (*path, key))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pull_request.opened", "pull_request.synchronize", "issue_comment.created",
                                  "check_run.rerequested", "check_suite.rerequested", "installation.created"])
def test_a_signed_payload_of_the_wrong_shape_is_a_bad_request_never_a_server_error(
        client: Any, name: str) -> None:
    """Any field of a real payload replaced by a value of another type: the answer is 4xx or the
    event's own, never the 503 that tells GitHub to redeliver, or a 500."""
    payload, event = fixture(name), name.split(".")[0]
    answers: dict[int, list[str]] = {}
    for number, path in enumerate(_fields(payload)):
        for wrong in (None, "x", 7, []):
            changed = copy.deepcopy(payload)
            parent = changed
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = wrong
            answer = post(client, event, changed, delivery=f"d-{number}-{type(wrong).__name__}")
            answers.setdefault(answer.status_code, []).append(f"{'.'.join(map(str, path))}={wrong!r}")
    failed = {code: found[:5] for code, found in answers.items() if code >= 500}
    assert not failed
    if event != "installation":  # recorded as it comes; the others need fields, and check them
        assert 400 in answers
