"""The job queue: huey on an embedded SQLite file (one machine) or Redis (workers on many).

huey removes a task from its queue when a consumer takes it, so a consumer killed in the
middle of a job would lose it. Each job therefore runs under a lease (`JobState.running`):
recorded before the work starts, renewed by a heartbeat, released after the outcome is
recorded. `Recovery` re-enqueues the jobs whose lease expired, when a consumer starts and
then periodically; the lease also keeps two consumers from running one job at once.

That leaves the moment between a consumer taking the task and taking the lease. So a job is
also logged when it is queued (`JobState.note_queued`) and forgotten once its lease is held
or it ended; `Recovery` queues again a logged job found in no queue and under no lease twice,
a lease period apart (a live consumer takes the lease within milliseconds).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from huey import Huey, RedisHuey, SqliteHuey
from huey.consumer import Consumer

from .model import AppError, PullRequestJob
from .settings import AppSettings, with_stored_credentials
from .state import STORAGE_ERRORS, JobState

log = logging.getLogger("difforacle.app")

QUEUE_NAME = "difforacle"
TASK_NAME = "difforacle.run_job"
PRUNE_EVERY = 3600.0  # seconds between prunings of old delivery records
RETRIES, RETRY_DELAY = 5, 10  # a task whose bookkeeping failed (storage unreachable) runs again later
MAX_RECOVERIES = 3  # a job lost this often is given up (its delivery marked failed: redeliverable)


class Outcome(Protocol):
    status: str  # "published" | "superseded" | "failed" | "answered" (a command that ran nothing)
    detail: str


Executor = Callable[[PullRequestJob, AppSettings, JobState], Outcome]


def make_huey(queue_url: str, name: str = QUEUE_NAME) -> Huey:
    """The huey instance for DIFFORACLE_QUEUE_URL: sqlite:///path (embedded) or redis://host:port/db."""
    scheme = urlsplit(queue_url).scheme.lower()
    if scheme == "sqlite":
        if not queue_url.startswith("sqlite:///") or queue_url == "sqlite:///":
            raise AppError("DIFFORACLE_QUEUE_URL: an SQLite queue is sqlite:///relative/path or "
                             "sqlite:////absolute/path")
        path = Path(queue_url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return SqliteHuey(name, filename=str(path), results=False, utc=True)
        except OSError as exc:
            raise AppError(f"cannot open the queue database {path}: {exc.strerror or exc}") from None
    if scheme in ("redis", "rediss", "unix"):
        return RedisHuey(name, url=queue_url, results=False, utc=True)
    raise AppError(f"DIFFORACLE_QUEUE_URL must be sqlite:///path (embedded, the default) or "
                     f"redis://host:port/db (shared by many workers), not a {scheme or 'schemeless'} URL")


def describe_queue(queue_url: str) -> str:
    """The queue's URL without its credentials, for logs and errors."""
    parts = urlsplit(queue_url)
    if parts.scheme == "sqlite":
        return queue_url
    host = parts.hostname or "localhost"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


def run_with_runner(job: PullRequestJob, settings: AppSettings, state: JobState) -> Outcome:
    """The default executor: the worker's runner (imported here: it needs Docker, git, PyGithub)."""
    from .runner import run_job

    return run_job(job, settings, state)


class JobQueue:
    """The queue, its shared state, and the one task that runs a job."""

    def __init__(self, settings: AppSettings, executor: Executor | None = None,
                 name: str = QUEUE_NAME) -> None:
        self.settings = settings
        self.executor = executor or run_with_runner
        self.huey = make_huey(settings.queue_url, name)
        self.state = JobState(self.huey, lease_seconds=settings.lease_seconds)
        # retries: only our bookkeeping raises (the storage hiccuped); the executor's failures are outcomes
        self._task = self.huey.task(name=TASK_NAME, retries=RETRIES, retry_delay=RETRY_DELAY)(self._execute)

    @property
    def kind(self) -> str:
        return "sqlite" if isinstance(self.huey, SqliteHuey) else "redis"

    def enqueue(self, job: PullRequestJob, recoveries: int = 0) -> None:
        self._task(job.to_json(), self.state.note_queued(job, recoveries))

    def pending(self) -> int:
        return int(self.huey.pending_count())

    def check(self) -> None:
        """AppError if the queue's storage cannot be reached (checked when a command starts)."""
        try:
            self.state.ping()
        except Exception as exc:
            raise AppError(f"cannot reach the queue at {describe_queue(self.settings.queue_url)}: "
                             f"{exc}".splitlines()[0]) from None

    def _execute(self, job_json: str, queued: int | None = None) -> None:
        """One task: `queued` is the job's number in the queued log (absent in older tasks)."""
        job = PullRequestJob.from_json(job_json)
        state = self.state
        # a run of it that was killed left its check run in progress: the runner cancels it
        if not state.is_current(job) and state.open_check_run(job) is None:
            log.info("job %s: superseded by head %s before it started", job.job_id,
                     state.latest_head(job.pull_key))
            self._finish(job, "done")
            state.forget_queued(queued)
            return
        with state.running(job) as lease:
            state.forget_queued(queued)  # from here the lease, or the run holding it, covers the job
            if lease is None:
                log.info("job %s: already running elsewhere (delivery %s coalesced into it)", job.job_id,
                         job.delivery)
                holder = state.lock_holder(f"run:{job.job_id}") or {}
                finished = "done" if holder.get("delivery") != job.delivery else None
            else:
                if state.delivery_status(job.delivery) != "failed":  # a sibling job of the delivery failed
                    state.mark_delivery(job.delivery, "running")
                status, detail = self._call_executor(job)
                log.info("job %s: %s%s", job.job_id, status, f" ({detail})" if detail else "")
                finished = "failed" if status == "failed" else "done"
        # Only once the lease is released and the run is off the log: whoever sees the delivery
        # done then sees no run of it either.
        if finished is not None:
            self._finish(job, finished)

    def _call_executor(self, job: PullRequestJob) -> tuple[str, str]:
        try:
            self.settings = with_stored_credentials(self.settings)  # registered through /setup since start
            outcome = self.executor(job, self.settings, self.state)
        except STORAGE_ERRORS:
            # The queue's storage, not the job, failed (Redis down or still loading): no outcome is
            # recorded, the lease is kept (JobState.running) and the job runs again once it expires.
            log.warning("job %s: the queue's storage failed under it; it runs again after its lease",
                        job.job_id)
            raise
        except Exception as exc:  # a bug, or the runner's own failure: the delivery can be redelivered
            log.error("job %s failed: %s: %s", job.job_id, type(exc).__name__, _first_line(exc))
            log.debug("job %s traceback", job.job_id, exc_info=True)
            return "failed", f"{type(exc).__name__}: {_first_line(exc)}"
        return str(getattr(outcome, "status", "failed")), str(getattr(outcome, "detail", ""))

    def _finish(self, job: PullRequestJob, status: str) -> None:
        if status == "done" and self.state.delivery_status(job.delivery) == "failed":
            return  # another job of the same delivery failed: keep it redeliverable
        self.state.mark_delivery(job.delivery, status)

    def recover(self) -> list[PullRequestJob]:
        """Re-enqueue the jobs whose consumer died (their lease expired); returns them."""
        jobs = self.state.expired_runs()
        for job in jobs:
            log.warning("job %s: its worker stopped (lease expired); queued again", job.job_id)
            self.enqueue(job)
        return jobs

    def recover_lost(self, suspects: dict[int, float], settle: float | None = None) -> list[PullRequestJob]:
        """Re-enqueue the logged jobs that are in no queue and under no lease, now and `settle`
        seconds ago (default: a lease period); `suspects` carries the first sightings between calls."""
        settle = self.settings.lease_seconds if settle is None else settle
        entries = self.state.queued_jobs()  # before the queue: a job queued in between is not listed
        waiting = {task.args[1] for task in [*self.huey.pending(), *self.huey.scheduled()]
                   if len(task.args) > 1}
        now, recovered = time.monotonic(), []
        for number in set(suspects) - {n for n, _ in entries}:
            del suspects[number]  # it ran, or another process recovered it
        for number, entry in entries:
            job = PullRequestJob.from_json(entry["job"])
            if number in waiting or self.state.is_running(job):
                suspects.pop(number, None)
                continue
            first_seen = suspects.setdefault(number, now)
            if now - first_seen < settle or not self.state.claim_queued(number):
                continue
            del suspects[number]
            recoveries = int(entry.get("recoveries", 0)) + 1
            if recoveries > MAX_RECOVERIES:
                log.error("job %s: lost from the queue %d times; given up (redeliver it to retry)",
                          job.job_id, MAX_RECOVERIES)
                self.state.mark_delivery(job.delivery, "failed")
                continue
            log.warning("job %s: taken from the queue by a worker that stopped before running it; "
                        "queued again", job.job_id)
            self.enqueue(job, recoveries)
            recovered.append(job)
        return recovered

    def consumer(self, poll: float = 0.5, **options: Any) -> Consumer:
        """A huey consumer running settings.workers jobs at once (threads: jobs wait on subprocesses)."""
        return self.huey.create_consumer(
            workers=self.settings.workers, worker_type="thread", periodic=False,
            initial_delay=min(0.05, poll), max_delay=poll, graceful_signal="TERM", shutdown_timeout=30,
            **options)


class Recovery(threading.Thread):
    """Recovers expired leases and lost queued jobs when started and every half lease; prunes old
    deliveries hourly."""

    def __init__(self, queue: JobQueue, interval: float | None = None) -> None:
        super().__init__(name="difforacle-recovery", daemon=True)
        self.queue = queue
        self.interval = interval if interval is not None else max(queue.settings.lease_seconds / 2, 0.1)
        self.stopped = threading.Event()

    def run(self) -> None:
        since_prune = PRUNE_EVERY
        suspects: dict[int, float] = {}  # queued-log numbers seen lost, and since when
        while True:
            try:
                self.queue.recover()
                self.queue.recover_lost(suspects)
                if since_prune >= PRUNE_EVERY:
                    self.queue.state.prune_deliveries()
                    since_prune = 0.0
            except Exception as exc:  # storage unreachable for a moment: the next round retries
                log.warning("recovery round failed: %s: %s", type(exc).__name__, exc)
            if self.stopped.wait(self.interval):
                return
            since_prune += self.interval

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0]
