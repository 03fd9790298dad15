"""The App's shared state, kept in the queue's own storage (huey's key-value store).

Why there: the web server and every worker already reach the queue, whether it is an SQLite
file on one machine or Redis shared by many, so deliveries, heads, locks and leases need no
second database. huey's storage offers only plain keys, `put_if_empty`, an atomic `pop` and
atomic counters, so:

- locks (the lease of a running job, the per-PR publishing lock) are records with an owner
  token and an expiry, created with `put_if_empty`; a lock whose owner died expires and is
  taken over once, through a fence key per stale token (two takers cannot both win); renewing and
  releasing one is a compare-and-swap on the record as it was read (`_swap`: a Lua script on Redis,
  a conditional `UPDATE`/`DELETE` on SQLite), so that a holder whose lease was taken over can
  neither renew nor release the new holder's;
- the storage cannot list keys, so what must be found again later (the runs to recover, the
  deliveries to prune) is also appended to a numbered log (`_Log`) that can be scanned;
- clocks: expiries are wall-clock times, compared across machines (keep them NTP-synced).

Every record is JSON under the `difforacle:` prefix; no secret is ever stored here.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from huey import Huey
from huey.constants import EmptyData
from huey.storage import MemoryStorage, RedisStorage, SqliteStorage
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .model import PullRequestJob

log = logging.getLogger("difforacle.app")

PREFIX = "difforacle:"
DELIVERY_STATUSES = ("queued", "running", "done", "failed")
DELIVERY_RETENTION = 7 * 24 * 3600.0  # GitHub redelivers for 3 days; a record older than a week is dropped
CLAIM_GRACE = 5.0  # seconds a claim whose job is not queued yet counts as a receiver still at work
HEAD_LOCK_TIMEOUT = 5.0  # seconds a delivery waits to record its head: well within GitHub's 10 s
HEAD_HISTORY = 20  # superseded heads remembered per pull request: a late or redelivered event of one is stale
LOG_SETTLE = 5.0  # seconds after which a log number taken but never written is given up for lost
SCAN_CHUNK = 500


# The storage itself unreachable for a while (refused, timed out, or Redis still loading its data
# after a restart: BusyLoadingError is a ConnectionError). Not a job's failure: the job runs again.
STORAGE_ERRORS: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError)


class LockTimeout(TimeoutError):
    """The lock stayed held by someone else for the whole wait."""


@dataclass
class RunLease:
    """This process runs `job`: the lease is renewed by a heartbeat until `release`."""

    job: PullRequestJob
    token: str
    number: int  # in the runs log
    lost: threading.Event = field(default_factory=threading.Event)


class JobState:
    """Deliveries, latest heads, locks and leases of running jobs; shared by every process of the queue."""

    def __init__(self, huey: Huey, lease_seconds: float = 60.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.storage = huey.storage
        self.lease_seconds = lease_seconds
        self.clock = clock
        self.owner = {"host": socket.gethostname(), "pid": os.getpid()}
        self._held: dict[str, str] = {}  # job_id -> token of the run lease this process holds
        self._runs = _Log(self, "runs")
        self._deliveries = _Log(self, "deliveries")
        self._queued = _Log(self, "queued")

    # ------------------------------------------------------------------ records

    def _get(self, key: str) -> Any:
        data = self.storage.peek_data(PREFIX + key)
        return None if data is EmptyData else json.loads(bytes(data))

    def _put(self, key: str, value: Any) -> None:
        self.storage.put_data(PREFIX + key, _encode(value))

    def _put_if_empty(self, key: str, value: Any) -> bool:
        return bool(self.storage.put_if_empty(PREFIX + key, _encode(value)))

    def _pop(self, key: str) -> Any:
        data = self.storage.pop_data(PREFIX + key)
        return None if data is EmptyData else json.loads(bytes(data))

    def _swap(self, key: str, old: Any, new: Any | None) -> bool:
        """Replace the record `key` by `new` (None: delete it) only if it still is `old`, as one
        atomic step of the storage; whether it was."""
        full, was = PREFIX + key, _encode(old)
        storage = self.storage
        if isinstance(storage, RedisStorage):
            replacement = b"" if new is None else _encode(new)
            return bool(self._redis_swap(keys=[storage.result_key], args=[full, was, replacement]))
        if isinstance(storage, SqliteStorage):
            with storage.db(commit=True) as cursor:
                if new is None:
                    cursor.execute("delete from kv where queue = ? and key = ? and value = ?",
                                   (storage.name, full, storage.to_blob(was)))
                else:
                    cursor.execute("update kv set value = ? where queue = ? and key = ? and value = ?",
                                   (storage.to_blob(_encode(new)), storage.name, full, storage.to_blob(was)))
                return cursor.rowcount == 1
        if isinstance(storage, MemoryStorage):
            with storage._lock:
                if bytes(storage._results.get(full, b"")) != was:
                    return False
                if new is None:
                    del storage._results[full]
                else:
                    storage._results[full] = _encode(new)
                return True
        raise TypeError(f"no atomic compare-and-swap for {type(storage).__name__}")

    @cached_property
    def _redis_swap(self) -> Any:
        """`_SWAP` registered with this state's Redis connection (once)."""
        return self.storage.conn.register_script(_SWAP)

    def _get_many(self, keys: list[str]) -> dict[str, Any]:
        found = self.storage.peek_many([PREFIX + key for key in keys])
        return {_text(key).removeprefix(PREFIX): json.loads(bytes(value)) for key, value in found.items()}

    def _counter(self, key: str, amount: int = 1) -> int:
        return int(self.storage.incr(PREFIX + key, amount))

    def ping(self) -> int:
        """The number of tasks waiting; raises if the storage is unreachable (what /healthz checks)."""
        return int(self.storage.queue_size())

    # ------------------------------------------------------------------ deliveries

    def claim_delivery(self, delivery: str) -> bool:
        """True if this delivery should run: never seen, seen and failed (a manual redelivery), or
        claimed but its jobs never confirmed queued (`confirm_delivery`) CLAIM_GRACE seconds on.

        The last: the storage went away between the claim and the enqueue, so the receiver could
        not mark the delivery failed either; the claim alone must not make every redelivery a
        duplicate. Within CLAIM_GRACE the receiver may still be at work: a duplicate then (taking
        it over would at worst queue the job twice, which coalesces).
        Atomic across processes: of two concurrent redeliveries of one failed delivery, one wins.
        """
        now = self.clock()
        if self._put_if_empty(f"delivery:{delivery}", {"status": "queued", "attempt": 1, "at": now}):
            self._deliveries.append({"delivery": delivery, "at": now})
            return True
        record = self._get(f"delivery:{delivery}") or {}
        attempt = int(record.get("attempt", 1))
        unconfirmed = (record.get("status") == "queued" and now - record.get("at", 0) > CLAIM_GRACE
                       and self._get(f"delivery-queued:{delivery}") != attempt)
        if record.get("status") != "failed" and not unconfirmed:
            return False
        if not self._put_if_empty(f"delivery-retry:{delivery}:{attempt}", now):
            return False
        self._put(f"delivery:{delivery}", {"status": "queued", "attempt": attempt + 1, "at": now})
        return True

    def claim_body(self, digest: str, delivery: str) -> str | None:
        """None if the body with this digest is this delivery's (first seen now, or a redelivery,
        which keeps its id); else the delivery that brought it first. Forgotten with the deliveries."""
        name, now = f"body-{digest}", self.clock()
        if self._put_if_empty(f"delivery:{name}", {"status": "done", "delivery": delivery, "at": now}):
            self._deliveries.append({"delivery": name, "at": now})
            return None
        first = (self._get(f"delivery:{name}") or {}).get("delivery")
        return None if first in (None, delivery) else str(first)

    def confirm_delivery(self, delivery: str) -> None:
        """The claimed delivery's jobs are queued: from now on a redelivery of it is a duplicate.

        A key of its own, not the delivery's record: a worker may already have rewritten that
        record (running, done, failed), which must not go back to "queued".
        """
        record = self._get(f"delivery:{delivery}") or {}
        self._put(f"delivery-queued:{delivery}", int(record.get("attempt", 1)))

    def delivery_status(self, delivery: str) -> str | None:
        record = self._get(f"delivery:{delivery}")
        return record.get("status") if record else None

    def mark_delivery(self, delivery: str, status: str) -> None:
        if status not in DELIVERY_STATUSES:
            raise ValueError(f"delivery status {status!r} is not one of {DELIVERY_STATUSES}")
        record = self._get(f"delivery:{delivery}") or {}
        self._put(f"delivery:{delivery}", {"status": status, "attempt": record.get("attempt", 1),
                                           "at": record.get("at", self.clock())})
        if not record:
            self._deliveries.append({"delivery": delivery, "at": self.clock()})

    def prune_deliveries(self, older_than: float = DELIVERY_RETENTION) -> int:
        """Forget deliveries older than `older_than` seconds (GitHub can no longer redeliver them)."""
        cutoff = self.clock() - older_than
        pruned = 0
        for number, entry in self._deliveries.scan():
            if entry.get("at", 0) >= cutoff:
                break
            record = self._pop(f"delivery:{entry['delivery']}") or {}
            self._pop(f"delivery-queued:{entry['delivery']}")
            for attempt in range(1, int(record.get("attempt", 1))):
                self._pop(f"delivery-retry:{entry['delivery']}:{attempt}")
            self._deliveries.pop(number)
            pruned += 1
        return pruned

    # ------------------------------------------------------------------ heads

    def record_head(self, job: PullRequestJob, before: str | None = None, *, updated: float | None = None,
                    first: bool = False) -> bool:
        """Make `job.head_sha` the pull request's head; False if that head was superseded already.

        `before` is the head the event replaced (a `synchronize` event's `before`): remembered as
        superseded, so an older event delivered late (or redelivered) cannot win back. Nor can an
        older event whose head was never recorded (its delivery failed, then came back after a
        newer one's) take the head back; it is older than the recorded head if
        - its `before` is a superseded head: a head is replaced once, and that head's successor
          is the recorded head or older (a push always has the current head as its `before`);
        - it is `first` (an `opened` event: the pull request's first head) and another is recorded;
        - its pull request's `updated` (updated_at) is older than the recorded head's (a tie, in
          the same second, decides nothing).
        Otherwise the later delivery wins. The latest job is kept too: a check run's re-run reuses it.

        Deliveries of one pull request arrive at once (a burst of pushes, on several receiver
        threads or machines): the record is read and rewritten under the pull request's head lock,
        or an older head read before a newer one was written would overwrite it.
        """
        with self._locked(f"head:{job.pull_key}", HEAD_LOCK_TIMEOUT, "recording the head"):
            return self._record_head(job, before, updated, first)

    def _record_head(self, job: PullRequestJob, before: str | None, updated: float | None,
                     first: bool) -> bool:
        key = f"head:{job.pull_key}"
        record = self._get(key) or {}
        previous: list[str] = list(record.get("previous", []))
        current, recorded = record.get("sha"), record.get("updated")
        if job.head_sha in previous:
            return False
        if current and current != job.head_sha and (
                first or (before is not None and before in previous)
                or (updated is not None and recorded is not None and updated < recorded)):
            stale = [sha for sha in (job.head_sha, before) if sha and sha != current and sha not in previous]
            self._put(key, {**record, "previous": (stale + previous)[:HEAD_HISTORY]})
            return False
        for sha in (current, before):
            if sha and sha != job.head_sha and sha not in previous:
                previous.insert(0, sha)
        if recorded is not None and (updated is None or updated < recorded):
            updated = recorded  # what is known of the latest head's time is kept
        self._put(key, {"sha": job.head_sha, "previous": previous[:HEAD_HISTORY], "job": job.to_json(),
                        "at": self.clock(), "updated": updated})
        return True

    def latest_head(self, pull_key: str) -> str | None:
        record = self._get(f"head:{pull_key}")
        return record.get("sha") if record else None

    def latest_job(self, pull_key: str) -> PullRequestJob | None:
        """The job of the pull request's latest head, as its last event described it."""
        record = self._get(f"head:{pull_key}")
        return PullRequestJob.from_json(record["job"]) if record and record.get("job") else None

    def is_current(self, job: PullRequestJob) -> bool:
        """False once a newer head supersedes the job, or once this process lost the job's lease.

        The runner asks before starting, while running and before publishing. A command has no
        head: only its lease matters.
        """
        head = self.latest_head(job.pull_key)
        if not job.is_command and head is not None and head != job.head_sha:
            return False
        token = self._held.get(job.job_id)
        return token is None or self._holds(f"run:{job.job_id}", token)

    # ------------------------------------------------------------------ check runs

    def check_run(self, job: PullRequestJob) -> dict[str, Any] | None:
        """What an earlier run of the job's head left of its check run: `{"id", "url"}` once it was
        created, `{}` while it was being created (a worker that died then may have created it), None
        if no run of this head started one. One record per pull request: only its latest head runs."""
        record = self._get(f"check-run:{job.pull_key}")
        if not record or record.get("head") != job.head_sha:
            return None
        return {key: record[key] for key in ("id", "url") if key in record}

    def remember_check_run(self, job: PullRequestJob, check_run_id: int | None = None, url: str = "") -> None:
        """Record that the job's head is creating its check run (no id yet), or which one it has."""
        created = {"id": check_run_id, "url": url} if check_run_id is not None else {}
        self._put(f"check-run:{job.pull_key}", {"head": job.head_sha, **created})
        if created:
            self._put(f"open-check-run:{job.job_id}", created)

    def open_check_run(self, job: PullRequestJob) -> dict[str, Any] | None:
        """The job's check run, `{"id", "url"}`, if a run created it and none completed it yet.

        Kept per head, apart from the pull request's record (which the next head overwrites): a
        run killed mid-job leaves its check run in progress, and if a newer push supersedes the
        head before the run is recovered, only this tells the recovered run what to cancel.
        """
        return self._get(f"open-check-run:{job.job_id}")

    def check_run_completed(self, job: PullRequestJob) -> None:
        self._pop(f"open-check-run:{job.job_id}")

    # ------------------------------------------------------------------ summary comments

    def summary_comment(self, pull_key: str) -> dict[str, Any] | None:
        """Our summary comment as the last run wrote it, `{"id", "state"}` (its hidden state block),
        so that publishing again edits it without listing the comments; None if not known."""
        record = self._get(f"summary:{pull_key}")
        return record if record and "id" in record and "state" in record else None

    def remember_summary_comment(self, pull_key: str, comment_id: int, state_block: str) -> None:
        self._put(f"summary:{pull_key}", {"id": comment_id, "state": state_block})

    def forget_summary_comment(self, pull_key: str) -> None:
        """Someone else may have rewritten it (a command's answer): the next run reads it from GitHub."""
        self._pop(f"summary:{pull_key}")

    def note_comment(self, pull_key: str, comment_id: int) -> None:
        """A comment created on the pull request (any author; its webhook): the newest id is kept, so
        that a report published later records which commands were written before it (`accept all`,
        `acceptance.State.shown_after`) without listing the comments. Concurrent deliveries keep the
        larger id (a compare-and-swap)."""
        key = f"newest-comment:{pull_key}"
        for _ in range(50):
            known = self._get(key)
            if known is None:
                if self._put_if_empty(key, comment_id):
                    return
            elif not isinstance(known, int) or known < comment_id:
                if self._swap(key, known, comment_id):
                    return
            else:
                return
        log.warning("the newest comment of %s was not recorded: the record kept changing", pull_key)

    def newest_comment(self, pull_key: str) -> int:
        """The newest comment id a webhook delivered for the pull request (0: none seen)."""
        known = self._get(f"newest-comment:{pull_key}")
        return known if isinstance(known, int) else 0

    # ------------------------------------------------------------------ installations

    def record_installation(self, installation_id: int, record: dict[str, Any]) -> None:
        self._put(f"installation:{installation_id}", {**record, "at": self.clock()})

    def installation(self, installation_id: int) -> dict[str, Any] | None:
        return self._get(f"installation:{installation_id}")

    # ------------------------------------------------------------------ locks

    def acquire(self, name: str, seconds: float, **data: Any) -> str | None:
        """A token if the lock `name` was free or stale (its owner stopped renewing it), else None."""
        token = uuid.uuid4().hex
        record = {"token": token, "expires": self.clock() + seconds, "owner": self.owner, **data}
        key = f"lock:{name}"
        for _ in range(3):  # the holder may release between our two reads: try again
            if self._put_if_empty(key, record):
                return token
            current = self._get(key)
            if current is None:
                continue
            if current["expires"] > self.clock():
                return None
            fence = f"lock-takeover:{name}:{current['token']}"
            if not self._put_if_empty(fence, token):
                return None  # another process is taking this stale lock over
            try:
                now = self._get(key)
                if now is None or now["token"] != current["token"]:
                    continue
                record["expires"] = self.clock() + seconds
                self._put(key, record)
                return token
            finally:
                self._pop(fence)
        return None

    def renew(self, name: str, token: str, seconds: float) -> bool:
        """Extend the lock if `token` still holds it; False if it expired and was taken over (also
        when that happens between reading it and writing it: the write is a compare-and-swap)."""
        current = self._get(f"lock:{name}")
        if not current or current["token"] != token:
            return False
        return self._swap(f"lock:{name}", current, {**current, "expires": self.clock() + seconds})

    def release(self, name: str, token: str) -> None:
        """Free the lock if `token` holds it; a lease another process has taken over stays its."""
        current = self._get(f"lock:{name}")
        if current and current["token"] == token:
            self._swap(f"lock:{name}", current, None)

    def lock_holder(self, name: str) -> dict[str, Any] | None:
        return self._get(f"lock:{name}")

    def _holds(self, name: str, token: str) -> bool:
        current = self._get(f"lock:{name}")
        return bool(current) and current["token"] == token

    def publish_lock(self, pull_key: str, timeout: float = 120.0) -> AbstractContextManager[None]:
        """Serializes publishing on one pull request across processes and machines.

        Raises LockTimeout if it stays held by others for `timeout` seconds.
        """
        return self._locked(f"publish:{pull_key}", timeout, "publishing")

    @contextmanager
    def _locked(self, name: str, timeout: float, what: str) -> Iterator[None]:
        """Hold the lock `name`, waiting up to `timeout` seconds for it (LockTimeout after that).

        The lock is renewed while held; a holder that dies lets it expire after `lease_seconds`.
        """
        deadline = time.monotonic() + timeout
        delay = 0.02
        while (token := self.acquire(name, self.lease_seconds)) is None:
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{what} on {name.split(':', 1)[-1]} stayed locked for {timeout:g} s")
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 1.0)
        with _Heartbeat(lambda: self.renew(name, token, self.lease_seconds), self.lease_seconds / 3):
            try:
                yield
            finally:
                self.release(name, token)

    # ------------------------------------------------------------------ jobs queued, not yet running

    def note_queued(self, job: PullRequestJob, recoveries: int = 0) -> int:
        """Log a job about to be queued; its number travels with the task (see `forget_queued`).

        huey has no acknowledgement: a consumer that dies between taking a task and taking its
        lease loses the job. A job still in this log, but in no queue and under no lease, is
        such a job; `JobQueue.recover_lost` queues it again.
        """
        return self._queued.append({"job": job.to_json(), "at": self.clock(), "recoveries": recoveries})

    def forget_queued(self, number: int | None) -> None:
        """The queued job is running under its lease, or ended: the lease (or nothing) covers it now."""
        if number is not None:
            self._queued.pop(number)

    def queued_jobs(self) -> list[tuple[int, dict[str, Any]]]:
        """The log of queued jobs, oldest first: (number, {"job", "at", "recoveries"})."""
        return self._queued.scan()

    def claim_queued(self, number: int) -> bool:
        """Take a lost job's record; True for one caller only, across processes."""
        return self._queued.pop(number) is not None

    def is_running(self, job: PullRequestJob) -> bool:
        """Some process holds the job's live lease."""
        holder = self.lock_holder(f"run:{job.job_id}")
        return holder is not None and holder["expires"] > self.clock()

    # ------------------------------------------------------------------ leases of running jobs

    @contextmanager
    def running(self, job: PullRequestJob) -> Iterator[RunLease | None]:
        """Hold the job's lease while it runs (None: another live run holds it).

        The lease is logged so that, if this process dies, `expired_runs` finds the job again.
        """
        name = f"run:{job.job_id}"
        token = self.acquire(name, self.lease_seconds, delivery=job.delivery)
        if token is None:
            yield None
            return
        number = self._runs.append({"job": job.to_json(), "token": token, "at": self.clock()})
        lease = RunLease(job, token, number)
        self._held[job.job_id] = token

        def renew() -> bool:
            if self.renew(name, token, self.lease_seconds):
                return True
            lease.lost.set()
            log.warning("job %s: lease lost (taken over after it expired)", job.job_id)
            return False

        storage_failed = False
        try:
            with _Heartbeat(renew, self.lease_seconds / 3):
                yield lease
        except STORAGE_ERRORS:
            # The storage failed under the job: keep its lease and its entry in the runs log, so
            # that once the lease expires `expired_runs` finds the job and it runs again (releasing
            # now may fail as well, or succeed and leave the job in no queue and under no lease).
            storage_failed = True
            raise
        finally:
            self._held.pop(job.job_id, None)
            if not storage_failed:
                self._runs.pop(number)  # first: a crash before the release only delays the next run
                self.release(name, token)

    def expired_runs(self) -> list[PullRequestJob]:
        """Claims the runs whose process stopped renewing their lease; each is returned once, anywhere."""
        claimed: list[PullRequestJob] = []
        for number, entry in self._runs.scan():
            job = PullRequestJob.from_json(entry["job"])
            holder = self.lock_holder(f"run:{job.job_id}")
            if holder is None or holder["token"] != entry["token"]:
                self._runs.pop(number)  # finished, or taken over by a later run of the same job
            elif holder["expires"] <= self.clock() and self._runs.pop(number) is not None:
                claimed.append(job)
        return claimed

    def running_jobs(self) -> list[PullRequestJob]:
        return [PullRequestJob.from_json(entry["job"]) for _, entry in self._runs.scan()]


class _Log:
    """Numbered records under one name: the only listing that works on every huey storage.

    `append` takes the next number from an atomic counter, then writes the record; `scan` reads
    from a low mark up to the counter. The low mark moves past numbers whose record is gone,
    but past a number never written only once it is LOG_SETTLE seconds old (its writer was
    between taking it and writing it, or died there).
    """

    def __init__(self, state: JobState, name: str) -> None:
        self.state = state
        self.name = name
        self._tops: list[tuple[float, int]] = []  # (when, counter) seen by this process's scans

    def append(self, record: dict[str, Any]) -> int:
        number = self.state._counter(f"{self.name}:next")
        self.state._put(f"{self.name}:{number}", record)
        return number

    def pop(self, number: int) -> Any:
        return self.state._pop(f"{self.name}:{number}")

    def scan(self) -> list[tuple[int, Any]]:
        """The records present, oldest first."""
        state = self.state
        low = int(state._get(f"{self.name}:low") or 1)
        top = state._counter(f"{self.name}:next", 0)
        found: list[tuple[int, Any]] = []
        for start in range(low, top + 1, SCAN_CHUNK):
            numbers = range(start, min(start + SCAN_CHUNK, top + 1))
            records = state._get_many([f"{self.name}:{n}" for n in numbers])
            found += [(n, records[f"{self.name}:{n}"]) for n in numbers if f"{self.name}:{n}" in records]
        now = time.monotonic()
        ripe = [(when, seen) for when, seen in self._tops if now - when >= LOG_SETTLE]
        settled = max((seen for _, seen in ripe), default=low - 1)
        self._tops = ripe[-1:] + [(when, seen) for when, seen in self._tops if now - when < LOG_SETTLE]
        self._tops.append((now, top))
        new_low = min(found[0][0] if found else top + 1, settled + 1)
        if new_low > low:
            state._put(f"{self.name}:low", new_low)  # concurrent scans may write an older mark: harmless
        return found


class _Heartbeat:
    """Calls `renew` every `interval` seconds in a thread while the block runs, until it returns False."""

    def __init__(self, renew: Callable[[], bool], interval: float) -> None:
        self.renew = renew
        self.interval = max(interval, 0.05)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="difforacle-heartbeat", daemon=True)

    def _loop(self) -> None:
        while not self.stop.wait(self.interval):
            try:
                if not self.renew():
                    return
            except Exception as exc:  # the storage hiccuped: try again next beat, the lease has slack
                log.warning("lease renewal failed: %s: %s", type(exc).__name__, exc)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _encode(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _text(key: str | bytes) -> str:
    return key.decode() if isinstance(key, bytes) else key


# Redis: the record replaced (or deleted, for an empty new value) only if it is still the one read.
_SWAP = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  if ARGV[3] == '' then
    redis.call('HDEL', KEYS[1], ARGV[1])
  else
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  end
  return 1
end
return 0
"""
