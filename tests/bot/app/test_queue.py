"""Tests for the App's queue (`difforacle.bot.app.queue`, with `difforacle.bot.app.state` and
`difforacle.bot.app.command`): the embedded mode end to end, two consumer processes sharing a
real Redis, a consumer killed with SIGKILL mid-job, leases, locks and the commands'
configuration errors.

Consumer processes are `tests/support/app_helpers.py consumer`; their executor counts its side
effects in an SQLite file, so lost and duplicated work are told apart. Redis is the one CI starts
(.ci/services); these tests fail under CI when it is unreachable, and skip elsewhere.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from huey import Huey, MemoryHuey, RedisHuey, SqliteHuey
from support.app_helpers import (
    SECRET,
    VICTIM,
    Recorder,
    drain,
    effects_db,
    headers,
    make_job,
    pull_event,
    sha,
    submit,
    wait_for,
)
from support.paths import SUPPORT
from support.services import service_unavailable

from difforacle.bot.app import command
from difforacle.bot.app import state as state_module
from difforacle.bot.app.model import AppError, PullRequestJob
from difforacle.bot.app.queue import MAX_RECOVERIES, JobQueue, Recovery, describe_queue, make_huey
from difforacle.bot.app.settings import AppSettings, load_settings
from difforacle.bot.app.state import JobState, LockTimeout
from difforacle.bot.app.webhook import create_app

REDIS_URL = "redis://127.0.0.1:6379/13"  # a database of its own; the keys also carry a unique queue name


def app_settings(tmp_path: Path, **env: str) -> AppSettings:
    return load_settings({"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_WEBHOOK_SECRET": SECRET, **env})


class Clock:
    """A wall clock the test moves (leases expire without waiting)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


# ------------------------------------------------------------------ queue URLs

def test_the_queue_url_picks_the_storage(tmp_path: Path) -> None:
    embedded = make_huey(f"sqlite:///{tmp_path}/deep/er/queue.sqlite3")
    assert isinstance(embedded, SqliteHuey) and (tmp_path / "deep" / "er" / "queue.sqlite3").exists()
    assert isinstance(make_huey("redis://127.0.0.1:6379/0"), RedisHuey)  # connects lazily
    for url in ("postgres://user:hunter2@db/queue", "sqlite://", "sqlite:///", "queue.db"):
        with pytest.raises(AppError) as error:
            make_huey(url)
        assert "DIFFORACLE_QUEUE_URL" in str(error.value) and "hunter2" not in str(error.value)
    assert describe_queue("redis://:hunter2@cache:6380/2") == "redis://cache:6380/2"


def test_the_default_queue_is_embedded_in_the_data_dir(tmp_path: Path) -> None:
    queue = JobQueue(app_settings(tmp_path))
    assert queue.kind == "sqlite" and (tmp_path / "queue.sqlite3").exists()


# ------------------------------------------------------------------ embedded mode, end to end

@pytest.fixture
def consumer_in_process() -> Iterator[Any]:
    """Starts a real huey consumer here (its workers are threads); stops it afterwards."""
    started: list[Any] = []
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    def start(queue: JobQueue) -> None:
        consumer = queue.consumer(poll=0.05)
        consumer.start()  # also installs its signal handlers: restored below
        started.append(consumer)

    yield start
    for consumer in started:
        consumer.stop(graceful=True)
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_embedded_mode_end_to_end(tmp_path: Path, consumer_in_process: Any) -> None:
    settings = app_settings(tmp_path, DIFFORACLE_WORKERS="2")
    recorder = Recorder()
    queue = JobQueue(settings, executor=recorder)
    client = create_app(settings, queue).test_client()
    consumer_in_process(JobQueue(settings, executor=recorder))  # the consumer's own connection
    deliveries = []
    for number in (2, 3, 4):
        body = json.dumps(pull_event(number, sha(number))).encode()
        delivery = f"e2e-{number}"
        answer = client.post("/webhook", data=body, headers=headers("pull_request", body, delivery))
        assert answer.status_code == 202
        deliveries.append(delivery)
    wait_for(lambda: all(queue.state.delivery_status(d) == "done" for d in deliveries), what="3 jobs done")
    assert sorted(job.number for job in recorder.calls) == [2, 3, 4] and all(recorder.current)
    assert queue.pending() == 0 and queue.state.running_jobs() == []


# ------------------------------------------------------------------ leases and recovery

def test_a_job_whose_worker_died_is_recovered_once_and_the_stalled_one_stops(tmp_path: Path) -> None:
    clock = Clock()
    settings = app_settings(tmp_path, DIFFORACLE_LEASE_SECONDS="30")
    recorder = Recorder()
    queue = JobQueue(settings, executor=recorder)
    queue.state.clock = clock
    stalled = JobState(queue.huey, lease_seconds=30, clock=clock)  # the worker that stops renewing
    job = make_job(2, 1)
    submit(queue, job)
    assert queue.huey.dequeue() is not None  # taken by the worker that will stall
    with stalled.running(job) as lease:
        assert lease is not None and stalled.is_current(job)
        assert queue.recover() == [] and queue.pending() == 0  # alive
        clock.now += 31  # no heartbeat for longer than the lease (its thread beats every 10 s of real time)
        assert queue.recover() == [job] and queue.recover() == []  # claimed once
        assert JobQueue(settings).recover() == []  # nor by another process
        assert drain(queue) == 1 and recorder.calls == [job]  # run again, under a new lease
        assert not stalled.is_current(job)  # the stalled worker must not publish now
    assert queue.state.running_jobs() == [] and queue.state.delivery_status(job.delivery) == "done"


def test_a_job_already_running_is_not_run_twice_at_once(tmp_path: Path) -> None:
    started, go = threading.Event(), threading.Event()

    def hold(job: PullRequestJob, state: JobState) -> None:
        if job.delivery == "first":
            started.set()
            assert go.wait(10)

    recorder = Recorder(hook=hold)
    queue = JobQueue(app_settings(tmp_path), executor=recorder)
    first, second = make_job(2, 1, "first"), make_job(2, 1, "second")  # same PR and head, two deliveries
    submit(queue, first)
    submit(queue, second)
    worker = threading.Thread(target=lambda: queue.huey.execute(queue.huey.dequeue()))
    worker.start()
    assert started.wait(10)
    assert drain(queue) == 1  # the second task finds the job running: coalesced into it
    go.set()
    worker.join(10)
    assert [job.delivery for job in recorder.calls] == ["first"]
    assert queue.state.delivery_status("second") == "done"


def test_an_executor_that_raises_fails_the_delivery_and_releases_the_lease(tmp_path: Path) -> None:
    def explode(job: PullRequestJob, settings: AppSettings, state: JobState) -> Any:
        raise RuntimeError("boom\nsecond line")

    queue = JobQueue(app_settings(tmp_path), executor=explode)
    job = make_job(2, 1)
    submit(queue, job)
    drain(queue)
    assert queue.state.delivery_status(job.delivery) == "failed"
    assert queue.state.running_jobs() == [] and queue.state.lock_holder(f"run:{job.job_id}") is None


@pytest.mark.parametrize("error", [
    redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
    redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
    redis.exceptions.TimeoutError("Timeout reading from socket"),
], ids=type)
def test_a_storage_error_inside_a_job_is_not_its_failure_the_job_runs_again(tmp_path: Path,
                                                                              error: Exception) -> None:
    clock = Clock()
    settings = app_settings(tmp_path, DIFFORACLE_LEASE_SECONDS="30")

    def storage_down_once(job: PullRequestJob, state: JobState) -> None:
        if len(recorder.calls) == 1:
            raise error  # what the runner's state.is_current or publish_lock raise while Redis is away

    recorder = Recorder(hook=storage_down_once)
    queue = JobQueue(settings, executor=recorder)
    queue.state.clock = clock
    job = make_job(2, 1)
    submit(queue, job)
    assert drain(queue) == 1 and len(recorder.calls) == 1
    assert queue.state.delivery_status(job.delivery) != "failed"  # Redis is back: still not the job's failure
    assert queue.state.running_jobs() == [job]  # its lease is left to expire
    assert queue.recover() == []
    clock.now += 31
    assert queue.recover() == [job]
    assert drain(queue) == 1 and len(recorder.calls) == 2 and recorder.current == [True]
    assert queue.state.delivery_status(job.delivery) == "done" and queue.state.running_jobs() == []


def test_a_superseded_job_whose_stopped_run_left_a_check_run_open_goes_to_the_runner(tmp_path: Path) -> None:
    """To cancel that check run: the queue alone has no GitHub access."""
    recorder = Recorder()
    queue = JobQueue(app_settings(tmp_path), executor=recorder)
    left, clean = make_job(2, 1), make_job(3, 1)
    for job in (left, clean):
        submit(queue, job)
        queue.state.record_head(replace(job, head_sha=sha(2)))
    queue.state.remember_check_run(left, 41, "https://github.example/run/41")
    assert drain(queue) == 2
    assert recorder.calls == [left] and recorder.current == [False]
    assert queue.state.delivery_status(left.delivery) == queue.state.delivery_status(clean.delivery) == "done"


def test_the_recovery_thread_requeues_expired_leases(tmp_path: Path) -> None:
    settings = app_settings(tmp_path, DIFFORACLE_LEASE_SECONDS="0.3")
    queue = JobQueue(settings)
    job = make_job(2, 1)
    submit(queue, job)
    queue.huey.dequeue()
    dead = JobState(queue.huey, lease_seconds=0.3)
    token = dead.acquire(f"run:{job.job_id}", 0.3)  # a lease and its log entry, never renewed: a dead worker
    dead._runs.append({"job": job.to_json(), "token": token, "at": 0})
    recovery = Recovery(queue)
    recovery.start()
    try:
        wait_for(lambda: queue.pending() == 1, timeout=10, what="the job queued again")
    finally:
        recovery.stop()


def test_a_job_taken_by_a_consumer_that_died_before_its_lease_is_queued_again_once(tmp_path: Path) -> None:
    recorder = Recorder()
    queue = JobQueue(app_settings(tmp_path), executor=recorder)
    job = make_job(2, 1)
    submit(queue, job)
    suspects: dict[int, float] = {}
    assert queue.recover_lost(suspects, settle=60) == [] and suspects == {}  # waiting in the queue: fine
    assert queue.huey.dequeue() is not None  # a consumer took it and died before taking the lease

    assert queue.recover_lost(suspects, settle=60) == []  # first sighting: a live consumer may be there
    [number] = suspects
    suspects[number] -= 61  # a lease period later, still in no queue and under no lease
    other_process: dict[int, float] = {number: suspects[number]}
    assert queue.recover_lost(suspects, settle=60) == [job]
    assert JobQueue(app_settings(tmp_path)).recover_lost(other_process, settle=60) == []  # claimed once
    assert queue.pending() == 1 and suspects == {}

    assert drain(queue) == 1 and recorder.calls == [job]
    assert queue.state.queued_jobs() == [] and queue.state.delivery_status(job.delivery) == "done"
    assert queue.recover_lost(suspects, settle=0) == [] and queue.pending() == 0  # nothing left to find


def test_queued_running_and_finished_jobs_are_never_taken_for_lost(tmp_path: Path) -> None:
    queue = JobQueue(app_settings(tmp_path), executor=Recorder())
    waiting, running, finished = make_job(2, 1), make_job(3, 1), make_job(4, 1)
    for job in (finished, running, waiting):
        submit(queue, job)
    drain_one = lambda: queue.huey.execute(queue.huey.dequeue())  # noqa: E731
    drain_one()  # `finished` ran to its end
    assert queue.huey.dequeue() is not None  # `running` was taken ...
    with queue.state.running(running):  # ... and its lease is held (its record not yet forgotten)
        assert queue.recover_lost({}, settle=0) == []
    assert queue.state.delivery_status(finished.delivery) == "done" and queue.pending() == 1  # `waiting`


def test_a_job_lost_again_and_again_is_given_up_and_its_delivery_failed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    queue = JobQueue(app_settings(tmp_path), executor=Recorder())
    job = make_job(2, 1)
    submit(queue, job)
    for _ in range(MAX_RECOVERIES):
        assert queue.huey.dequeue() is not None
        assert queue.recover_lost({}, settle=0) == [job]
    assert queue.huey.dequeue() is not None
    assert queue.recover_lost({}, settle=0) == [] and queue.pending() == 0
    assert queue.state.queued_jobs() == [] and queue.state.delivery_status(job.delivery) == "failed"
    assert "given up" in caplog.text


def test_tasks_queued_before_the_queued_log_still_run(tmp_path: Path) -> None:
    recorder = Recorder()
    queue = JobQueue(app_settings(tmp_path), executor=recorder)
    job = make_job(2, 1)
    assert queue.state.claim_delivery(job.delivery) and queue.state.record_head(job)
    queue._task(job.to_json())  # the one-argument task of an older version
    assert drain(queue) == 1 and recorder.calls == [job]


# ------------------------------------------------------------------ locks

def test_a_lock_is_exclusive_renewable_and_taken_over_once_when_stale(tmp_path: Path) -> None:
    clock = Clock()
    huey = make_huey(f"sqlite:///{tmp_path}/q.sqlite3")
    one, two, three = (JobState(huey, lease_seconds=10, clock=clock) for _ in range(3))
    token = one.acquire("x", 10)
    assert token and two.acquire("x", 10) is None
    clock.now += 9
    assert one.renew("x", token, 10)
    clock.now += 9
    assert two.acquire("x", 10) is None  # renewed: still held
    clock.now += 2
    winners = [state.acquire("x", 10) for state in (two, three)]
    assert sum(bool(token) for token in winners) == 1  # stale: exactly one takes it over
    assert not one.renew("x", token, 10)  # the old holder learns it lost the lock
    one.release("x", token)  # and its release does not free the new holder's lock
    assert two.acquire("x", 10) is None and three.acquire("x", 10) is None


def test_publishing_is_serialized_per_pull_request(tmp_path: Path) -> None:
    huey = make_huey(f"sqlite:///{tmp_path}/q.sqlite3")
    inside, most = [0], [0]
    counted = threading.Lock()
    barrier = threading.Barrier(4)

    def publish(state: JobState) -> None:
        barrier.wait()
        for _ in range(3):
            with state.publish_lock("octo/repo#2", timeout=20):
                with counted:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                threading.Event().wait(0.005)
                with counted:
                    inside[0] -= 1

    threads = [threading.Thread(target=publish, args=(JobState(huey, lease_seconds=5),)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert most[0] == 1
    state = JobState(huey, lease_seconds=5)
    with state.publish_lock("octo/repo#2"), pytest.raises(LockTimeout):  # noqa: SIM117
        with JobState(huey, lease_seconds=5).publish_lock("octo/repo#2", timeout=0.1):
            pass
    with state.publish_lock("octo/repo#3"):  # another pull request is not blocked
        pass


def test_two_pushes_received_at_once_cannot_take_the_head_back(tmp_path: Path) -> None:
    """Pushes 1 -> 2 -> 3 delivered together to two receivers: the one recording 2 read the pull
    request's record (head 1) before the one recording 3 wrote it, and writes after it. Without the
    head lock, 2 became the head again and 3, the last push, was never checked."""
    huey = make_huey(f"sqlite:///{tmp_path}/q.sqlite3")
    JobState(huey).record_head(make_job(2, 1))
    slow, fast = JobState(huey, lease_seconds=5), JobState(huey, lease_seconds=5)
    read, go = threading.Event(), threading.Event()
    get = slow._get

    def read_then_stall(key: str) -> Any:
        value = get(key)
        if key.startswith("head:"):
            read.set()
            go.wait(2)  # until the other receiver is done, or gave up waiting for the lock
        return value

    slow._get = read_then_stall  # type: ignore[method-assign]
    recorded: dict[int, bool] = {}

    def push(state: JobState, head: int) -> threading.Thread:
        thread = threading.Thread(target=lambda: recorded.__setitem__(
            head, state.record_head(make_job(2, head), sha(head - 1))))
        thread.start()
        return thread

    second = push(slow, 2)
    assert read.wait(10)
    third = push(fast, 3)
    third.join(0.3)  # blocked on the lock while 2 is being recorded
    go.set()
    for thread in (second, third):
        thread.join(10)
    assert recorded == {2: True, 3: True}
    assert fast.latest_head("octo/repo#2") == sha(3)
    assert not fast.record_head(make_job(2, 2, delivery="again"), sha(1))  # 2 redelivered: superseded


def test_a_dead_publishers_lock_expires(tmp_path: Path) -> None:
    huey = make_huey(f"sqlite:///{tmp_path}/q.sqlite3")
    JobState(huey, lease_seconds=0.2).acquire("publish:octo/repo#2", 0.2)  # never released: its holder died
    with JobState(huey, lease_seconds=0.2).publish_lock("octo/repo#2", timeout=10):
        pass


def test_old_deliveries_are_pruned(tmp_path: Path) -> None:
    clock = Clock()
    state = JobState(make_huey(f"sqlite:///{tmp_path}/q.sqlite3"), clock=clock)
    for delivery in ("old-1", "old-2"):
        assert state.claim_delivery(delivery)
    state.mark_delivery("old-2", "failed")
    assert state.claim_delivery("old-2")  # redelivered: a retry record too
    clock.now += 8 * 24 * 3600
    assert state.claim_delivery("new")
    assert state.prune_deliveries() == 2 and state.prune_deliveries() == 0
    assert state.delivery_status("old-1") is None and state.delivery_status("new") == "queued"
    assert state.claim_delivery("old-1")  # forgotten: GitHub no longer redelivers it anyway


# ------------------------------------------------------------------ consumer processes

def start_consumer(tmp_path: Path, env: dict[str, str], effects: Path, mode: str,
                   name: str) -> subprocess.Popen:
    log = (tmp_path / f"consumer-{uuid.uuid4().hex[:6]}.log").open("w")
    return subprocess.Popen(
        [sys.executable, str(SUPPORT / "app_helpers.py"), "consumer", "--effects", str(effects),
         "--mode", mode, "--name", name], env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT)


def stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # graceful: finishes the running job
    for process in processes:
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def published(effects: Path) -> dict[str, int]:
    db = effects_db(effects)
    try:
        return dict(db.execute("select job_id, count(*) from publishes group by job_id").fetchall())
    finally:
        db.close()


@pytest.mark.slow
def test_a_consumer_killed_mid_job_is_recovered_published_once(tmp_path: Path) -> None:
    env = {"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_QUEUE_URL": f"sqlite:///{tmp_path}/queue.sqlite3",
           "DIFFORACLE_LEASE_SECONDS": "1"}
    settings = load_settings(env)
    queue = JobQueue(settings)
    effects = tmp_path / "effects.sqlite3"
    effects_db(effects).close()
    jobs = [make_job(number, number) for number in (1, VICTIM, 3, 4)]
    for job in jobs:
        submit(queue, job)
    first = start_consumer(tmp_path, env, effects, "kill", "difforacle")
    try:
        victim = next(job for job in jobs if job.number == VICTIM)
        db = effects_db(effects)
        started = "select count(*) from runs where job_id = ?"
        wait_for(lambda: db.execute(started, (victim.job_id,)).fetchone()[0], what="the victim job to start")
        db.close()
        first.send_signal(signal.SIGKILL)
        assert first.wait(10) == -signal.SIGKILL
        assert queue.state.delivery_status(victim.delivery) == "running"
        second = start_consumer(tmp_path, env, effects, "kill", "difforacle")
        try:
            wait_for(lambda: all(queue.state.delivery_status(job.delivery) == "done" for job in jobs),
                     what="every job done after the restart")
        finally:
            stop(second)
    finally:
        stop(first)
    counts = published(effects)
    assert counts == {job.job_id: 1 for job in jobs}  # 0 lost, 0 duplicated
    db = effects_db(effects)
    runs = db.execute("select count(*) from runs where job_id = ?", (victim.job_id,)).fetchone()[0]
    comments = db.execute("select count(*), max(edits) from comments").fetchone()
    db.close()
    assert runs == 2 and comments == (len(jobs), 1)
    assert queue.state.running_jobs() == [] and queue.pending() == 0


@pytest.fixture
def redis_queue_name() -> Iterator[str]:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        service_unavailable("redis-server", f"not reachable at {REDIS_URL} ({exc}); .ci/services starts it")
    name = f"difforacle_test_{uuid.uuid4().hex[:12]}"
    yield name
    make_huey(REDIS_URL, name).storage.flush_all()


@pytest.mark.slow
def test_two_consumer_processes_share_the_jobs_of_a_redis_queue(tmp_path: Path,
                                                                redis_queue_name: str) -> None:
    env = {"DIFFORACLE_DATA_DIR": str(tmp_path), "DIFFORACLE_QUEUE_URL": REDIS_URL,
           "DIFFORACLE_LEASE_SECONDS": "5"}
    queue = JobQueue(load_settings(env), name=redis_queue_name)
    effects = tmp_path / "effects.sqlite3"
    effects_db(effects).close()
    jobs = [make_job(number, number) for number in range(1, 13)]
    for job in jobs:
        submit(queue, job)
    consumers = [start_consumer(tmp_path, env, effects, "share", redis_queue_name) for _ in range(2)]
    try:
        wait_for(lambda: all(queue.state.delivery_status(job.delivery) == "done" for job in jobs),
                 what="12 jobs done by 2 consumers")
    finally:
        stop(*consumers)
    assert published(effects) == {job.job_id: 1 for job in jobs}
    db = effects_db(effects)
    pids = {pid for (pid,) in db.execute("select distinct pid from publishes")}
    db.close()
    assert pids == {consumer.pid for consumer in consumers}  # both took jobs
    assert queue.state.running_jobs() == []


# ------------------------------------------------------------------ commands

def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="difforacle")
    command.add_arguments(parser.add_subparsers(dest="command").add_parser("app"))
    return parser.parse_args(["app", *argv])


@pytest.mark.parametrize(("argv", "env", "names"), [
    (("serve",), {}, ["DIFFORACLE_WEBHOOK_SECRET"]),
    (("worker",), {"DIFFORACLE_WEBHOOK_SECRET": "x"}, ["DIFFORACLE_APP_ID", "DIFFORACLE_PRIVATE_KEY"]),
    (("run",), {}, ["DIFFORACLE_WEBHOOK_SECRET", "DIFFORACLE_APP_ID", "DIFFORACLE_PRIVATE_KEY"]),
    (("worker",), {"DIFFORACLE_APP_ID": "1", "DIFFORACLE_PRIVATE_KEY": "k", "DIFFORACLE_QUEUE_URL": "mysql://x"},
     ["DIFFORACLE_QUEUE_URL"]),
    (("serve",), {"DIFFORACLE_WEBHOOK_SECRET": "x", "DIFFORACLE_QUEUE_URL": "redis://:hunter2@127.0.0.1:1/0"},
     ["cannot reach the queue at redis://127.0.0.1:1/0"]),
])
def test_commands_name_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple,
                                       env: dict, names: list[str]) -> None:
    monkeypatch.setattr(command, "registration_blueprints", lambda settings: [])  # no /setup to fall back on
    with pytest.raises(AppError) as error:
        command.run(parse(*argv), {"DIFFORACLE_DATA_DIR": str(tmp_path), **env})
    message = str(error.value)
    assert "\n" not in message and "hunter2" not in message
    for name in names:
        assert name in message


def test_command_arguments(capsys: pytest.CaptureFixture) -> None:
    args = parse("run", "--host", "0.0.0.0", "--port", "0")
    assert (args.app_command, args.host, args.port) == ("run", "0.0.0.0", 0)
    for bad in (("serve", "--port", "70000"), ("serve", "--threads", "0"), ()):
        with pytest.raises(SystemExit) as exit_:
            parse(*bad)
        assert exit_.value.code == 2


def test_the_cli_runs_the_app_commands(tmp_path: Path) -> None:
    from difforacle.bot.cli import build_parser

    commands = next(action for action in build_parser()._actions
                    if isinstance(action, argparse._SubParsersAction))
    assert {"serve", "worker", "run", "build-image"} <= set(commands.choices["app"]._subparsers
                                                          ._group_actions[0].choices)
    env = {**os.environ, "DIFFORACLE_DATA_DIR": str(tmp_path)}
    env.pop("DIFFORACLE_WEBHOOK_SECRET", None)
    result = subprocess.run([sys.executable, "-m", "difforacle.bot", "app", "worker"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "DIFFORACLE_APP_ID" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_runs_log_skips_numbers_never_written_once_settled(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    state = JobState(make_huey(f"sqlite:///{tmp_path}/q.sqlite3"))
    state._counter("runs:next")  # a writer took number 1 and died before writing it (or is writing it)
    number = state._runs.append({"job": make_job(2, 1).to_json(), "token": "t", "at": 0})
    assert [n for n, _ in state._runs.scan()] == [number] == [2]
    state._runs.pop(number)
    assert state._runs.scan() == [] and state._get("runs:low") in (None, 1)  # too recent to give 1 up
    monkeypatch.setattr(state_module, "LOG_SETTLE", 0.0)  # ... until the scans seeing it have aged
    assert state._runs.scan() == [] and state._get("runs:low") == 3


def _interleaved(huey: Huey) -> None:
    """Holder one reads its lease to renew or release it; holder two takes the lease over (it went
    stale) between that read and one's write. Neither renewing nor releasing may undo two's lease."""
    clock = Clock()
    one, two = (JobState(huey, lease_seconds=10, clock=clock) for _ in range(2))
    for step in ("renew", "release"):
        name = f"lease-{step}-{uuid.uuid4().hex[:6]}"
        token = one.acquire(name, 10)
        clock.now += 11  # one's heartbeat stalled: the lease is stale
        taken: list[str | None] = []
        read = one._get

        def read_then_lose(key: str, name: str = name, read: Callable[[str], Any] = read,
                           taken: list[str | None] = taken) -> Any:
            found = read(key)
            if key == f"lock:{name}" and not taken:
                taken.append(two.acquire(name, 10))  # two takes it over right after one's read
            return found

        one._get = read_then_lose  # type: ignore[method-assign]
        try:
            if step == "renew":
                assert one.renew(name, token, 10) is False
            else:
                one.release(name, token)
        finally:
            del one._get
        [second] = taken
        assert second is not None and two.lock_holder(name)["token"] == second
        assert one.acquire(name, 10) is None  # two's lease stands
        assert two.renew(name, second, 10)


def test_a_lease_taken_over_between_a_read_and_a_write_stays_the_new_holders(tmp_path: Path) -> None:
    _interleaved(make_huey(f"sqlite:///{tmp_path}/q.sqlite3"))
    _interleaved(MemoryHuey(name="leases"))


def test_a_lease_taken_over_between_a_read_and_a_write_stays_the_new_holders_on_redis(
        redis_queue_name: str) -> None:
    _interleaved(make_huey(REDIS_URL, redis_queue_name))
