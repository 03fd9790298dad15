"""The fleet bench's worker: `difforacle app worker` with the slow, machine-bound steps stubbed.

benchmarks/fleet.py starts this instead of `difforacle app worker`. It builds the worker as that
command does (settings from DIFFORACLE_*, `JobQueue`, `run_worker`: consumer, lease recovery,
sweeping), and its executor is the App's own `runner.run_job`, so that tokens, check runs, the
summary comment, the review, leases, supersession and the publishing lock are the App's. Only
what a load test cannot afford to run thousands of times on a small machine is replaced, here
and not through a setting, so that production code keeps no backdoor:

- the sandbox (`run_job`'s `sandbox` parameter): the dependency step sleeps; the engine sleeps a
  lognormal time, rewrites its progress file as the engine does, and writes a small valid report
  (with one difference on a changed line for a share of the heads, so that reviews are posted);
- the checkout (runner's fetch, clone and file reads, replaced in this process only): git
  against the fake GitHub costs more CPU per job than the bench machine has at fleet load; the
  fetch sleeps instead, and the base commit has no `[tool.difforacle]`;
- the App's wall-clock pauses, divided by the bench's time compression: PyGithub's pauses
  between requests and writes (`Retries`, given through `run_job`'s `github` parameter), the
  check run's progress throttle and an idle consumer's poll (down to POLL_FLOOR). Stub times are
  drawn in real-day seconds and slept compressed. The lease is the App's setting
  (DIFFORACLE_LEASE_SECONDS), which fleet.py compresses too.

    python benchmarks/fleet_worker.py --compression 96 [--engine-median 40] [--seed 1]
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import json
import logging
import math
import os
import random
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path

from difforacle.bot import progress, publisher
from difforacle.bot.app import runner
from difforacle.bot.app.command import configure_logging, run_worker
from difforacle.bot.app.installation import AppAccess
from difforacle.bot.app.model import PullRequestJob
from difforacle.bot.app.queue import JobQueue
from difforacle.bot.app.runner import JobOutcome, run_job
from difforacle.bot.app.sandbox import SandboxRequest, SandboxResult
from difforacle.bot.app.settings import AppSettings, load_settings
from difforacle.bot.app.state import JobState
from difforacle.bot.github_client import Retries
from difforacle.generator import Progress
from difforacle.generator.report.json_form import report_to_json
from difforacle.generator.report.model import Coverage, Difference, Report, Stats

log = logging.getLogger("difforacle.bench.fleet")
POLL_FLOOR = 0.1  # wall seconds between polls of an idle job slot, at the least

# the file every pull request of the bench changes, and its patch (GitHub's `files` entry): a
# difference on the added line 10 anchors a review comment
CHANGED_PATH, CHANGED_LINE = "pkg/mod.py", 10
PATCH = ("@@ -9,4 +9,4 @@ def parse(text):\n     value = int(text[:-1])\n-    return value * 60\n"
         "+    return value * 61\n     # seconds\n     pass")


@dataclass(frozen=True)
class StubTimes:
    """Real-day seconds of the stubbed steps (lognormal medians, one sigma) and the compression."""

    compression: float
    engine_median: float = 40.0
    sigma: float = 0.5
    install_median: float = 8.0
    fetch_median: float = 2.0
    differences: float = 0.2  # share of heads whose report has a difference

    def draw(self, rng: random.Random, median: float) -> float:
        """A lognormal draw in real-day seconds (its median `median`)."""
        return rng.lognormvariate(math.log(median), self.sigma) if median > 0 else 0.0

    def sleep(self, real_seconds: float) -> None:
        time.sleep(real_seconds / self.compression)


class StubSandbox:
    """A `Sandbox` whose dependency step and engine only take (compressed) time."""

    name = "stub"
    python = sys.executable

    def __init__(self, times: StubTimes, rng: random.Random) -> None:
        self.times, self.rng = times, rng

    def run(self, request: SandboxRequest) -> SandboxResult:
        began = time.monotonic()
        if request.egress:  # the dependency step: the only one that reaches out
            self.times.sleep(self.times.draw(self.rng, self.times.install_median))
            return SandboxResult(self.name, 0, "", "", seconds=time.monotonic() - began)
        out = next(mount.source for mount in request.mounts if mount.target == runner.OUT)
        base, head = _option(request.argv, "--base"), _option(request.argv, "--head")
        real = self.times.draw(self.rng, self.times.engine_median)
        if not self._explore(out / runner.PROGRESS_NAME, real, request.stop):
            return SandboxResult(self.name, None, "", "", seconds=time.monotonic() - began, cancelled=True)
        report = stub_report(base, head, real, self.times.differences)
        (out / runner.REPORT_NAME).write_text(json.dumps(report), encoding="utf-8")
        return SandboxResult(self.name, 1 if report["differences"] else 0, "", "",
                             seconds=time.monotonic() - began)

    def _explore(self, path: Path, real: float, stop: threading.Event | None) -> bool:
        """Sleep `real` real-day seconds, compressed, rewriting the progress file as the engine does;
        False if `stop` was set first (the sandbox would kill the engine)."""
        compression = self.times.compression
        started = time.monotonic()
        write = progress.ProgressFile(path, clock=lambda: time.monotonic() * compression)
        while (elapsed := (time.monotonic() - started) * compression) < real:
            write(Progress("exploring", sequences=int(elapsed * 25), elapsed=elapsed))
            pause = min(progress.WRITE_INTERVAL, real - elapsed) / compression
            if stop is not None and stop.wait(pause):
                return False
            if stop is None:
                time.sleep(pause)
        write.flush()
        return True


def stub_report(base: str, head: str, seconds: float, share: float) -> dict:
    """A valid `difforacle.report/1`; whether it has a difference depends on the head only, so that a
    job run again reports the same."""
    draw = int(hashlib.sha256(head.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    differences = [Difference(
        id="D1", kind="return", target="pkg.mod:parse", path=CHANGED_PATH, line=CHANGED_LINE, side="head",
        base="3600", head="3660", test="def test_parse():\n    assert parse('1h') == 3600\n",
        key="s0.return")] if draw < share else []
    return report_to_json(Report(base, head, differences, Coverage(changed_lines=4, changed_lines_covered=3),
                                 Stats(sequences=int(seconds * 25), seconds=round(seconds, 1))))


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def stub_checkout(times: StubTimes, rng: random.Random) -> None:
    """The runner's git steps replaced in this process: the fetch sleeps, the base has no settings."""

    def fetch(job: PullRequestJob, repo: Path, url: str, token: str, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        repo.mkdir(parents=True)
        times.sleep(times.draw(rng, times.fetch_median))

    def clone(repo: Path, sha: str, destination: Path, home: Path) -> None:
        destination.mkdir(parents=True)

    def read_file(repo: Path, sha: str, path: str, home: Path) -> bytes | None:
        return None

    def pull_head(url: str, number: int, token: str, home: Path) -> str:  # `git ls-remote`, in the fleet
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        request = urllib.request.Request(f"{url}/refs/pull/{number}/head",
                                         headers={"Authorization": f"Basic {basic}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.read().decode().strip()
        except OSError as exc:
            raise runner.FetchError(f"cannot read refs/pull/{number}/head: {exc}") from None

    runner.fetch_pull_request, runner.clone_commit, runner.read_file = fetch, clone, read_file
    runner.pull_head = pull_head


def compressed_retries(compression: float) -> Retries:
    """PyGithub's pauses and backoffs, the check run's progress throttle and the look at whether a running
    job's head is current, divided by the compression:
    at the App's own values a job compressed to a second would be all pauses."""
    publisher.PROGRESS_INTERVAL = publisher.PROGRESS_INTERVAL / compression
    runner.CURRENT_POLL = runner.CURRENT_POLL / compression
    runner.watch_progress_file = functools.partial(progress.watch_progress_file,
                                                   interval=progress.WATCH_INTERVAL / compression)
    default = Retries()
    return replace(default, backoff_factor=default.backoff_factor / compression,
                   secondary_rate_wait=default.secondary_rate_wait / compression,
                   seconds_between_requests=default.seconds_between_requests / compression,
                   seconds_between_writes=default.seconds_between_writes / compression)


class StubbedRunner:
    """The queue's executor: the App's `run_job` with the stub sandbox and compressed pauses; a fresh
    `AppAccess` per job, as the App makes one (and so reads GET /app once per job)."""

    def __init__(self, sandbox: StubSandbox, retries: Retries) -> None:
        self.sandbox, self.retries = sandbox, retries

    def __call__(self, job: PullRequestJob, settings: AppSettings, state: JobState) -> JobOutcome:
        return run_job(job, settings, state, sandbox=self.sandbox, github=AppAccess(settings, self.retries))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compression", type=float, required=True, help="real-day seconds per wall second")
    parser.add_argument("--engine-median", type=float, default=40.0, help="real-day seconds (default: 40)")
    parser.add_argument("--install-median", type=float, default=8.0, help="real-day seconds (default: 8)")
    parser.add_argument("--fetch-median", type=float, default=2.0, help="real-day seconds (default: 2)")
    parser.add_argument("--sigma", type=float, default=0.5, help="lognormal sigma of the stub times")
    parser.add_argument("--differences", type=float, default=0.2, help="share of heads with a difference")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    times = StubTimes(args.compression, args.engine_median, args.sigma, args.install_median,
                      args.fetch_median, args.differences)
    rng = random.Random(f"{args.seed}:{os.getpid()}")
    configure_logging()
    settings = load_settings().require("worker")
    stub_checkout(times, rng)
    executor = StubbedRunner(StubSandbox(times, rng), compressed_retries(times.compression))
    queue = JobQueue(settings, executor=executor)
    # an idle slot polls every 0.5 s: compressed too, but not below POLL_FLOOR (the polls of every
    # idle slot would take the machine)
    poll = max(POLL_FLOOR, 0.5 / times.compression)
    queue.consumer = functools.partial(queue.consumer, poll=poll)  # type: ignore[method-assign]
    queue.check()
    log.info("fleet worker: stubbed engine (median %g s real, compression %g)", times.engine_median,
             times.compression)
    run_worker(queue)
    return 0


if __name__ == "__main__":
    sys.exit(main())
