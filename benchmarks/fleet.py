"""Bench: the GitHub App as deployed at an organisation's load, with its machines failing.

What runs: `difforacle app serve` (the receiver), one Redis server of our own (its own port and
folder, append-only file, a password, as compose.yaml runs it) and M workers standing for M
machines, each a process group of its own (start_new_session) with its own DIFFORACLE_DATA_DIR,
all against the fake GitHub of the tests (tests/support/fake_github.py: request bodies checked
against GitHub's OpenAPI description, tokens minted and narrowed). The workers are
benchmarks/fleet_worker.py: the App's worker and job runner with the engine, the git fetch and
the App's wall-clock pauses stubbed (that file says why and how).

What is sent: signed `pull_request` deliveries as GitHub sends them, each its own POST answered
within 10 s or failed: `opened`, `synchronize` in bursts (several pushes to one pull request in
quick succession), `closed`, redeliveries of the same delivery id, and failed deliveries
redelivered later (GitHub does not retry; an operator or a script does). Pull requests arrive
over a day at `--per-day` (10,000: ~7 a minute) with an hourly profile peaking at 3x the mean;
`--prs N` below a day's worth runs the N around the peak (after pull requests opened in the two
hours before, which push into it without being waited for). Real-day seconds are compressed by
`--compression` (96: a day in 15 minutes). Meanwhile workers are SIGKILLed at random (the whole
process group) and started again, and Redis is restarted once halfway. After the day drains, a
burst of 1,000 deliveries in 10 s times the receiver (GitHub waits 10 s for an answer).

What is reported (Markdown table; JSON with --out): delivery to completed check run (p50/p95,
compressed and real-day seconds), deliveries lost (a head neither superseded nor closed without
a completed check run: must be 0), summary comments duplicated (must be 0), superseded heads
and what became of their runs, the receiver's answer times, GitHub API requests per pull request
and the peak per installation per real hour (of GitHub's 5,000). With --find-workers, instead of
the day: the smallest fleet that keeps the p95 under 3 real minutes at the peak rate (runs of the
peak alone, one per worker count, without failures).

Real-day figures are compressed seconds times the compression, so the App's own work (API calls
to the fake, Redis, the receiver), which is not compressed, counts `--compression` times over: the
line on a published job's phases says how much ("the rest" beyond the stubbed steps), the CPU line
what it cost, and the harness lag whether the bench itself kept time. On a small machine shared
with other work, keep the compression where that rest stays a few real-day seconds (as GitHub's
own latency would); a full day at 96x needs more CPU than two cores give.

    python benchmarks/fleet.py [--prs 10000] [--compression 96] [--workers 8] [--slots 4] [--out FILE]
    python benchmarks/fleet.py --compression 10 --find-workers 6,8,10,12 [--peak-minutes 20]
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import heapq
import http.client
import itertools
import json
import math
import os
import random
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fake GitHub and its helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # fleet_worker and figures

from figures import percentile
from fleet_worker import CHANGED_PATH, PATCH
from support.app_helpers import (
    ROOT,
    SECRET,
    app_environment,
    headers,
    install_app,
    pull_request_payload,
    wait_for,
)
from support.fake_github import FakeGitHub, RecordedRequest, _basic_auth_token

DAY = 86_400.0
HOUR = 3_600.0
RATE_LIMIT = 5_000  # requests per hour of an installation token (GitHub's base figure)
TARGET_P95 = 180.0  # real-day seconds: what --find-workers holds at the peak
GITHUB_TIMEOUT = 10.0  # seconds GitHub waits for a webhook's answer
MAX_ATTEMPTS = 5  # a delivery failing this often is given up (counted as never answered)
LEAD_IN = 2 * 3_600.0  # real-day seconds of pull requests opened before a window of the day (plan_pulls)
PEAK_SHARE = 2.5  # arrivals in hours at least this many times the mean rate count as "at the peak"
# the shape of a working day, hour by hour (0 at night): scaled by `hourly_rates` to a mean of 1
DAY_SHAPE = (0, 0, 0, 0, 0, 0, 0, 0.1, 0.4, 0.8, 1.0, 0.8, 0.45, 0.7, 0.95, 0.85, 0.6, 0.3, 0.15, 0.1,
             0.05, 0, 0, 0)
BURST_OWNER = "renovate-org"


# ------------------------------------------------------------------ the load (pure)

@dataclass(frozen=True)
class Load:
    """The day's pull requests and how they behave; times are real-day seconds."""

    prs: int = 10_000
    per_day: int = 10_000
    peak: float = 3.0  # the busiest hour's rate over the day's mean
    installations: int = 4
    repos: int = 25  # per installation
    sessions: float = 0.8  # mean rounds of pushes after the pull request is opened
    burst: float = 2.0  # mean pushes per round (at least one), seconds apart
    burst_gap: tuple[float, float] = (3.0, 40.0)
    session_gap: float = 1_800.0  # mean seconds between rounds (and from opening to the first)
    close_share: float = 0.85
    close_after: float = 3_600.0  # mean seconds from the last push to closing
    redeliver_share: float = 0.02  # deliveries redelivered (same id) by hand
    redeliver_gap: tuple[float, float] = (5.0, 600.0)


@dataclass(frozen=True)
class PullPlan:
    index: int
    installation: int  # 0-based, weighted towards the first (Zipf)
    repo: int
    opened: float  # real-day seconds from the window's start
    pushes: tuple[float, ...]  # each `synchronize`: head k + 1
    closed: float | None


@dataclass(frozen=True)
class Delivery:
    at: float  # real-day seconds from the window's start
    kind: str  # "opened", "synchronize", "closed", "redelivery"
    pull: int
    head: int  # the head the delivery names (0: the opening one)
    id: str  # X-GitHub-Delivery: a redelivery repeats its original's


def hourly_rates(peak: float, shape: tuple[float, ...] = DAY_SHAPE) -> list[float]:
    """Each hour's arrival rate over the day's mean: mean 1, the busiest hour `peak` (the night is
    lifted to the level that makes both hold)."""
    mean_shape = sum(shape) / len(shape) / max(shape)
    floor = (1 - peak * mean_shape) / (1 - mean_shape)
    if floor < 0:
        raise ValueError(f"a {peak:g}x peak is too high for this day's shape")
    return [floor + (peak - floor) * value / max(shape) for value in shape]


def expected(rates: list[float], per_day: float, start: float, end: float) -> float:
    """Pull requests expected between two times of the day (seconds) at `per_day` a day."""
    total = 0.0
    for hour, rate in enumerate(rates):
        overlap = min(end, (hour + 1) * HOUR) - max(start, hour * HOUR)
        total += max(0.0, overlap) * rate
    return total * per_day / DAY


def window(rates: list[float], per_day: float, prs: int) -> tuple[float, float]:
    """The stretch of the day that holds `prs` pull requests: all of it, or one centred on the peak."""
    if prs >= expected(rates, per_day, 0, DAY):
        return 0.0, DAY
    busiest = rates.index(max(rates))
    centre = (busiest + 0.5) * HOUR
    low, high = 0.0, DAY
    for _ in range(60):
        half = (low + high) / 2
        if expected(rates, per_day, max(0.0, centre - half), min(DAY, centre + half)) < prs:
            low = half
        else:
            high = half
    return max(0.0, centre - high), min(DAY, centre + high)


def arrivals(rates: list[float], start: float, end: float, count: int, rng: random.Random) -> list[float]:
    """`count` arrival times in [start, end) drawn from the hourly rates (a Poisson process given its
    count), sorted, from `start`."""
    if count <= 0:
        return []
    pieces = [(max(start, h * HOUR), min(end, (h + 1) * HOUR), rate) for h, rate in enumerate(rates)]
    pieces = [(a, b, rate) for a, b, rate in pieces if b > a and rate > 0]
    weights = [(b - a) * rate for a, b, rate in pieces]
    chosen = rng.choices(pieces, weights=weights, k=count)
    return sorted(rng.uniform(a, b) - start for a, b, _ in chosen)


def _geometric(rng: random.Random, mean: float) -> int:
    """0, 1, 2, ... with the given mean."""
    if mean <= 0:
        return 0
    stop = 1 / (1 + mean)
    count = 0
    while rng.random() > stop:
        count += 1
    return count


def plan_pulls(load: Load, rng: random.Random) -> tuple[list[PullPlan], float]:
    """The pull requests of the run and the window's length (real-day seconds).

    A window that starts after midnight is preceded by LEAD_IN of pull requests opened before it,
    whose later pushes and closings fall in the window as they would on the day (without them, a
    window of the peak would have its openings and few of their pushes). Pushes and closings past
    the window's end are dropped: the pull request stays open at its last head.
    """
    rates = hourly_rates(load.peak)
    start, end = window(rates, load.per_day, load.prs)
    length, lead = end - start, min(start, LEAD_IN)
    early = round(expected(rates, load.per_day, start - lead, start))
    opened = [t - lead for t in arrivals(rates, start - lead, start, early, rng)]
    opened += arrivals(rates, start, end, load.prs, rng)
    weights = [1 / (i + 1) for i in range(load.installations)]
    plans = []
    for index, first in enumerate(opened):
        pushes: list[float] = []
        at = first
        for _ in range(_geometric(rng, load.sessions)):
            at += rng.expovariate(1 / load.session_gap)
            for push in range(1 + _geometric(rng, load.burst - 1)):
                at += rng.uniform(*load.burst_gap) if push else 0.0
                pushes.append(at)
        closed = at + rng.expovariate(1 / load.close_after) if rng.random() < load.close_share else None
        installation = rng.choices(range(load.installations), weights=weights)[0]
        plans.append(PullPlan(index, installation, rng.randrange(load.repos), first,
                              tuple(t for t in pushes if t < length),
                              closed if closed is not None and closed < length else None))
    return plans, length


def plan_deliveries(plans: list[PullPlan], load: Load, length: float, rng: random.Random) -> list[Delivery]:
    """Every delivery of the window in time order, redeliveries included (none before it starts)."""
    out = []
    for plan in plans:
        out.append(Delivery(plan.opened, "opened", plan.index, 0, str(uuid.UUID(int=rng.getrandbits(128)))))
        for k, at in enumerate(plan.pushes, start=1):
            out.append(Delivery(at, "synchronize", plan.index, k, str(uuid.UUID(int=rng.getrandbits(128)))))
        if plan.closed is not None:
            out.append(Delivery(plan.closed, "closed", plan.index, len(plan.pushes),
                                str(uuid.UUID(int=rng.getrandbits(128)))))
    out = [d for d in out if d.at >= 0]
    again = [Delivery(d.at + rng.uniform(*load.redeliver_gap), "redelivery", d.pull, d.head, d.id)
             for d in out if rng.random() < load.redeliver_share]
    return sorted(out + [d for d in again if d.at < length], key=lambda d: (d.at, d.kind == "redelivery"))


@dataclass(frozen=True)
class ChaosStep:
    at: float  # wall seconds from the day's start
    action: str  # "kill", "start" (a worker), "redis" (restart it)
    worker: int = -1


def plan_chaos(duration: float, workers: int, kill_every: float, restart_after: float,
               rng: random.Random, redis: bool = True) -> list[ChaosStep]:
    """Workers killed at random (exponential gaps, mean `kill_every`), each started again after
    `restart_after`, never the last one running; Redis restarted once halfway."""
    steps = [ChaosStep(duration / 2, "redis")] if redis else []
    down: dict[int, float] = {}  # worker -> when it comes back
    at = 0.0
    while kill_every > 0:
        at += rng.expovariate(1 / kill_every)
        if at >= duration:
            break
        down = {w: back for w, back in down.items() if back > at}
        alive = [w for w in range(workers) if w not in down]
        if len(alive) < 2:
            continue
        victim = rng.choice(alive)
        down[victim] = at + restart_after
        steps += [ChaosStep(at, "kill", victim), ChaosStep(at + restart_after, "start", victim)]
    return sorted(steps, key=lambda step: step.at)


# ------------------------------------------------------------------ metrics (pure)

def peak_in_window(times: list[float], width: float) -> int:
    """The most times within any span of `width` (a sliding window)."""
    ordered = sorted(times)
    return max((bisect.bisect_left(ordered, t + width) - i for i, t in enumerate(ordered)), default=0)


def hourly_peak(times: list[float], span: float) -> int:
    """The most requests in any hour of a run `span` seconds long; a run shorter than an hour gives its
    busiest stretch as long as it is, scaled to an hour."""
    width = min(HOUR, span)
    return round(peak_in_window(times, width) * HOUR / width) if width > 0 else 0


@dataclass(frozen=True)
class RunSeen:
    """A check run as the fake holds it, with the wall times of its completions (conclusion, when)."""

    head: str
    conclusion: str | None
    title: str
    completions: tuple[tuple[str, float], ...] = ()


@dataclass
class Outcomes:
    final_heads: int = 0  # heads that must end with a completed check run
    lost: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # wall seconds, delivery to completion
    peak_latencies: list[float] = field(default_factory=list)
    failed: int = 0  # completed, but "difforacle could not run"
    superseded: Counter = field(default_factory=Counter)  # what became of superseded heads
    stuck: list[str] = field(default_factory=list)  # superseded heads whose check run stays in progress
    duplicated_comments: int = 0
    duplicated_check_runs: int = 0


def assess(heads: dict[str, tuple[int, int, bool, bool]], sent: dict[str, float], runs: list[RunSeen],
           comments: dict[int, int], peak: Callable[[str], bool]) -> Outcomes:
    """What became of each head. `heads`: sha -> (pull, index, final, closed); `sent`: sha -> wall time
    its delivery was first sent; `comments`: pull -> our summary comments on it."""
    by_head: dict[str, list[RunSeen]] = defaultdict(list)
    for run in runs:
        by_head[run.head].append(run)
    out = Outcomes()
    for sha, (_, _, final, closed) in heads.items():
        mine = by_head.get(sha, [])
        out.duplicated_check_runs += max(0, len(mine) - 1)
        done = [(when, run) for run in mine for conclusion, when in run.completions
                if conclusion != "cancelled"]
        if final and not closed:
            out.final_heads += 1
            if not done:
                out.lost.append(sha)
                continue
            when, run = min(done, key=lambda item: item[0])
            out.failed += run.title == "difforacle could not run"
            latency = when - sent[sha]
            out.latencies.append(latency)
            if peak(sha):
                out.peak_latencies.append(latency)
        elif not final:
            if any(run.conclusion == "cancelled" for run in mine):
                out.superseded["cancelled"] += 1
            elif done:
                out.superseded["checked before the next push"] += 1
            elif mine:
                out.superseded["left in progress"] += 1
                out.stuck.append(sha)
            else:
                out.superseded["never started"] += 1
    out.duplicated_comments = sum(1 for count in comments.values() if count > 1)
    return out


# ------------------------------------------------------------------ the fake GitHub at fleet scale

REPO_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)")
PULL_REF_PATH = re.compile(r"^/([^/]+)/([^/]+)\.git/refs/pull/(\d+)/head$")
GIT_OPERATION = "git/ls-remote"  # git's traffic: not counted against the API's rate limit


@dataclass
class Shard:
    """One repository's part of the fake's state."""

    pulls: dict = field(default_factory=dict)
    check_runs: dict = field(default_factory=dict)
    issue_comments: dict = field(default_factory=dict)
    reviews: dict = field(default_factory=dict)


class RequestLog:
    """Stands in for the fake's request list: keeps the wall time, installation (None: the App's own
    JWT), operation and status of each request, and when each check run was completed; not the bodies,
    of which there are hundreds of thousands."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self.entries: list[tuple[float, int | None, str, int]] = []
        self.completions: dict[int, list[tuple[str, float]]] = defaultdict(list)

    def append(self, request: RecordedRequest) -> None:
        now = time.monotonic()
        identity = self.fake.tokens.get(request.token or "")
        self.entries.append((now, identity.installation_id if identity else None, request.operation or "",
                             request.status))
        body = request.json if isinstance(request.json, dict) else {}
        if request.operation == "checks/update" and request.status == 200 and body.get("conclusion"):
            self.completions[int(request.path.rsplit("/", 1)[1])].append((body["conclusion"], now))

    def __iter__(self) -> Iterator[tuple[float, int | None, str, int]]:
        return iter(list(self.entries))

    def __len__(self) -> int:
        return len(self.entries)


class FleetGitHub(FakeGitHub):
    """The tests' fake GitHub, its state kept per repository.

    Why: its endpoints filter the whole state by repository on each request (every pull request for a
    check run's JSON, every comment for a listing), which is quadratic over 10,000 pull requests. Here
    each request sees only its repository's shard (under the fake's lock, which serialises requests
    anyway), so every such filter gives the same answer, over a few hundred items.
    """

    def __init__(self) -> None:
        super().__init__(strict_tokens=True)
        self.shards: dict[str | None, Shard] = {None: Shard()}  # None: requests outside a repository
        self.requests = RequestLog(self)  # type: ignore[assignment]

    @contextmanager
    def shard(self, full_name: str | None) -> Iterator[Shard]:
        """Holds the fake's lock with `full_name`'s state in place."""
        with self._lock:
            shard = self.shards.setdefault(full_name, Shard())
            self.pulls, self.check_runs = shard.pulls, shard.check_runs
            self.issue_comments, self.reviews = shard.issue_comments, shard.reviews
            yield shard

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        ref = PULL_REF_PATH.match(environ.get("PATH_INFO", ""))
        if ref:
            return self._git_pull_head(environ, start_response, f"{ref[1]}/{ref[2]}", int(ref[3]))
        match = REPO_PATH.match(environ.get("PATH_INFO", ""))
        with self.shard(f"{match[1]}/{match[2]}" if match else None):
            return super().__call__(environ, start_response)

    def _git_pull_head(self, environ: dict[str, Any], start_response: Callable[..., Any], full_name: str,
                  number: int) -> Any:
        """What `git ls-remote URL refs/pull/N/head` tells the worker (its stub asks here: these
        repositories are not served over git): the pull request's head SHA, for the token's
        installation; logged as GIT_OPERATION."""
        token = _basic_auth_token(environ.get("HTTP_AUTHORIZATION", ""))
        with self.shard(full_name):
            pull = self.pulls.get((full_name, number))
            status = 401 if token not in self.tokens else 404 if pull is None else 200
            self.requests.append(RecordedRequest("GET", environ["PATH_INFO"], {}, None, status, token,
                                                 GIT_OPERATION))
        start_response(f"{status} {'OK' if status == 200 else 'Not Found'}", [("Content-Type", "text/plain")])
        return [f"{pull.head_sha}\n".encode() if status == 200 and pull is not None else b""]


# ------------------------------------------------------------------ processes

class Service:
    """A process in a session of its own, as on a machine of its own: killed with its whole group."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path) -> None:
        self.name, self.argv, self.env, self.log_path = name, argv, env, log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal_group(self, signum: int) -> None:
        if self.process is not None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)  # start_new_session: its pid is its group's id

    def kill(self) -> None:
        """SIGKILL to the whole group, as a machine dies."""
        if self.process is not None:
            self.signal_group(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM, as a service manager stops it; SIGKILL past `timeout`."""
        if self.alive:
            assert self.process is not None
            self.signal_group(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout)
        self.kill()

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """The tests' `wait_for`, but a timeout ends the bench with its message, not a traceback."""
    try:
        wait_for(predicate, timeout, what)
    except AssertionError as exc:
        raise SystemExit(str(exc)) from None


class RedisServer(Service):
    """Our own redis-server: a free port, its own folder, the append-only file and a password."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True)
        self.port, self.password = free_port(), secrets.token_hex(16)
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder),
                "--appendonly", "yes", "--save", "", "--requirepass", self.password, "--daemonize", "no"]
        super().__init__("redis", argv, {"PATH": os.environ.get("PATH", os.defpath)}, folder / "redis.log")

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        super().start()
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password, socket_timeout=1)

        def answers() -> bool:
            if not self.alive:
                raise SystemExit(f"redis-server exited:\n{self.log()[-2000:]}")
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        wait_until(answers, 30, "redis-server")
        client.close()

    def restart(self, down: float) -> float:
        """A graceful restart (SIGTERM: the append-only file is flushed), `down` seconds off; its outage."""
        began = time.monotonic()
        self.stop()
        time.sleep(down)
        self.start()
        return time.monotonic() - began


LISTENING = re.compile(r"listening on http://([0-9.]+):([0-9]+)")


@dataclass(frozen=True)
class Fleet:
    """Everything a run needs, started; `Fleet.up` stops and removes all of it on the way out."""

    folder: Path
    fake: FleetGitHub
    redis: RedisServer
    receiver: Service
    workers: list[Service]
    url: str
    app_login: str
    installations: list[int]  # ids, by the load's installation index; the burst's last

    @staticmethod
    @contextmanager
    def up(args: argparse.Namespace, workers: int, load: Load, keep: bool = False) -> Iterator[Fleet]:
        folder = Path(tempfile.mkdtemp(prefix="difforacle-bench-fleet-"))
        services: list[Service] = []
        with ExitStack() as stack:
            stack.callback(lambda: None if keep else shutil.rmtree(folder, ignore_errors=True))
            stack.callback(lambda: [service.kill() for service in services])
            fake = stack.enter_context(FleetGitHub().serve())
            owners = [f"org{i}" for i in range(load.installations)] + [BURST_OWNER]
            repos = {owner: [f"repo{r}" for r in range(load.repos)] for owner in owners}
            installed = install_app(fake, folder / "secrets", owners[0], repos[owners[0]])
            app = fake.apps[installed.app_id]
            ids = [installed.installation_id] + [fake.add_installation(app, owner, repos[owner]).id
                                                 for owner in owners[1:]]
            redis = RedisServer(folder / "redis")
            services.append(redis)
            redis.start()

            def environment(data: str) -> dict[str, str]:
                env = app_environment(folder / data, fake, installed, budget=60)
                env.update(DIFFORACLE_QUEUE_URL=redis.url, DIFFORACLE_WORKERS=str(args.slots),
                           DIFFORACLE_LEASE_SECONDS=f"{args.lease:g}", PYTHONUNBUFFERED="1")
                return env

            receiver = Service("receiver", [sys.executable, "-m", "difforacle.bot", "app", "serve", "--host",
                                            "127.0.0.1", "--port", "0", "--threads", str(args.threads)],
                               environment("receiver"), folder / "receiver.log")
            services.append(receiver)
            receiver.start()
            worker_argv = [sys.executable, str(Path(__file__).resolve().parent / "fleet_worker.py"),
                           "--compression", f"{args.compression:g}", "--seed", str(args.seed),
                           "--engine-median", f"{args.engine_median:g}",
                           "--install-median", f"{args.install_median:g}",
                           "--fetch-median", f"{args.fetch_median:g}"]
            fleet_workers = [Service(f"worker{i}", worker_argv, environment(f"worker{i}"),
                                     folder / f"worker{i}.log") for i in range(workers)]
            services.extend(fleet_workers)
            for worker in fleet_workers:
                worker.start()
            listening = None

            def receiver_listens() -> bool:
                nonlocal listening
                if not receiver.alive:
                    raise SystemExit(f"the receiver exited:\n{receiver.log()[-3000:]}")
                listening = LISTENING.search(receiver.log())
                return listening is not None

            wait_until(receiver_listens, 60, "the receiver to listen")
            assert listening is not None
            wait_until(lambda: all("worker: " in w.log() for w in fleet_workers) or _dead(fleet_workers), 120,
                       "the workers to start")
            if dead := _dead(fleet_workers):
                raise SystemExit(f"a worker exited:\n{dead.log()[-3000:]}")
            yield Fleet(folder, fake, redis, receiver, fleet_workers,
                        f"http://{listening[1]}:{listening[2]}", installed.login, ids)


def _dead(services: list[Service]) -> Service | None:
    return next((s for s in services if not s.alive), None)


# ------------------------------------------------------------------ GitHub's side: the deliveries

@dataclass
class Attempt:
    delivery: str
    tag: str  # "day" or "burst"
    sent: float  # wall (monotonic)
    seconds: float  # to the answer, or to the failure
    status: int  # 0: no answer (connection refused, or GitHub's 10 s ran out)
    answer: str = ""  # the receiver's own word: "queued", "duplicate", "superseded", ...


def post(url: str, event: str, body: bytes, delivery: str) -> tuple[int, float, str]:
    """One delivery as GitHub makes it: a new connection, signed, 10 s to answer; the status, the
    seconds to the answer and the answer's `status` word."""
    host, port = url.removeprefix("http://").split(":")
    began = time.monotonic()
    connection = http.client.HTTPConnection(host, int(port), timeout=GITHUB_TIMEOUT)
    try:
        connection.request("POST", "/webhook", body=body, headers={
            **headers(event, body, delivery, SECRET), "User-Agent": "GitHub-Hookshot/fleet"})
        answer = connection.getresponse()
        text = answer.read()
        status = answer.status
    except OSError:
        status, text = 0, b""
    finally:
        connection.close()
    took = time.monotonic() - began
    try:
        word = str(json.loads(text).get("status", "")) if text else ""
    except (ValueError, AttributeError):
        word = ""
    return status, took, word


def head_shas(plan: PullPlan) -> list[str]:
    """The pull request's heads in push order, distinct in the whole run (check runs are per commit)."""
    return [hashlib.sha1(f"{plan.index}:{k}".encode()).hexdigest() for k in range(len(plan.pushes) + 1)]


class Day:
    """Plays the planned deliveries against the fleet in compressed time, keeping the fake GitHub's pull
    requests in step (a push moves the head before its `synchronize` is sent), and redelivers the ones
    that failed after `redeliver_after` real-day seconds."""

    def __init__(self, fleet: Fleet, plans: list[PullPlan], deliveries: list[Delivery], compression: float,
                 senders: int, redeliver_after: float) -> None:
        self.fleet, self.plans, self.deliveries = fleet, plans, deliveries
        self.compression, self.redeliver_after = compression, redeliver_after
        self.pool = ThreadPoolExecutor(senders, thread_name_prefix="github")
        self.attempts: list[Attempt] = []
        self.bodies: dict[str, tuple[str, bytes]] = {}
        self.answered: set[str] = set()
        self.sent: dict[str, float] = {}  # head sha -> first send of its delivery
        self.delivery_of: dict[str, str] = {}  # head sha -> its delivery
        self.lag: list[float] = []  # wall seconds each delivery was sent late
        self.numbers: dict[tuple[str, int], int] = defaultdict(int)
        self.where: dict[int, tuple[str, int]] = {}  # pull -> (full name, number)
        self.lock = threading.Lock()  # the queue, the attempts, the counts: the senders write them too
        self.queue: list[tuple[float, int, Delivery]] = []
        self.order = itertools.count()
        self.in_flight = 0
        self.failures: Counter = Counter()
        self.start = 0.0

    def describe(self, sha: str, pull: int) -> dict[str, Any]:
        """A lost head: its job and what the receiver answered to each attempt of its delivery."""
        name, number = self.where.get(pull, ("?", 0))
        delivery = self.delivery_of.get(sha, "")
        return {"job": f"{name}#{number}@{sha}", "delivery": delivery,
                "answers": [f"{a.status} {a.answer}".strip() for a in self.attempts
                            if a.delivery == delivery]}

    def run(self, on_tick: Callable[[float], None] = lambda _: None) -> None:
        """Send every delivery at its time, and the failed ones again, until all are answered or given up."""
        self.start = time.monotonic()
        self.queue = [(d.at / self.compression, next(self.order), d) for d in self.deliveries]
        heapq.heapify(self.queue)
        try:
            while True:
                with self.lock:
                    if not self.queue and not self.in_flight:
                        return
                    due = self.queue[0][0] if self.queue else None
                now = time.monotonic() - self.start
                on_tick(now)
                if due is None or due > now:
                    time.sleep(0.05 if due is None else min(due - now, 0.05))
                    continue
                with self.lock:
                    _, _, delivery = heapq.heappop(self.queue)
                    self.in_flight += 1
                self.lag.append(now - due)
                event, body = self._prepare(delivery)
                self.pool.submit(self._send, delivery, event, body)
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _send(self, delivery: Delivery, event: str, body: bytes) -> None:
        began = time.monotonic()
        status, seconds, word = post(self.fleet.url, event, body, delivery.id)
        with self.lock:
            self.in_flight -= 1
            self.attempts.append(Attempt(delivery.id, "day", began, seconds, status, word))
            if 200 <= status < 300:
                self.answered.add(delivery.id)
                return
            self.failures[delivery.id] += 1
            if self.failures[delivery.id] < MAX_ATTEMPTS:  # GitHub lists it as failed: redelivered later
                again = Delivery(delivery.at, "redelivery", delivery.pull, delivery.head, delivery.id)
                due = time.monotonic() - self.start + self.redeliver_after / self.compression
                heapq.heappush(self.queue, (due, next(self.order), again))

    def _prepare(self, delivery: Delivery) -> tuple[str, bytes]:
        """The delivery's event and body; GitHub's state changes first, as the push or close happens."""
        if delivery.kind == "redelivery":
            return self.bodies[delivery.id]
        plan = self.plans[delivery.pull]
        owner = f"org{plan.installation}"
        name = f"repo{plan.repo}"
        full_name = f"{owner}/{name}"
        heads = head_shas(plan)
        fake = self.fleet.fake
        with fake.shard(full_name):
            if plan.index not in self.where:  # opened now, or before the window at the head it has now
                self.numbers[(full_name, 0)] += 1
                number = self.numbers[(full_name, 0)]
                self.where[plan.index] = (full_name, number)
                head = 0 if delivery.kind == "opened" else delivery.head - (delivery.kind == "synchronize")
                fake.add_pull(owner, name, number, hashlib.sha1(full_name.encode()).hexdigest(), heads[head],
                              files=[{"filename": CHANGED_PATH, "patch": PATCH}],
                              title=f"Change {plan.index}", head_ref=f"change-{plan.index}")
            full_name, number = self.where[plan.index]
            before = heads[delivery.head - 1] if delivery.kind == "synchronize" else None
            if delivery.kind == "synchronize":
                fake.set_pull_head(owner, name, number, heads[delivery.head])
            if delivery.kind == "closed":
                fake.pulls[(full_name, number)].state = "closed"
            action = "synchronize" if delivery.kind == "synchronize" else "opened"
            installation = self.fleet.installations[plan.installation]
            payload = pull_request_payload(fake, installation, full_name, number, action, before)
        if delivery.kind == "closed":
            payload["action"] = "closed"
            payload["pull_request"]["state"] = "closed"
        else:
            self.sent.setdefault(heads[delivery.head], time.monotonic())
            self.delivery_of.setdefault(heads[delivery.head], delivery.id)
        prepared = ("pull_request", json.dumps(payload).encode())
        self.bodies[delivery.id] = prepared
        return prepared


def burst(fleet: Fleet, count: int, seconds: float, repos: int) -> list[Attempt]:
    """`count` `opened` deliveries sent evenly over `seconds` (a bot opening pull requests everywhere),
    each on its own connection as GitHub sends them: the receiver's answer times."""
    fake, installation = fleet.fake, fleet.installations[-1]
    prepared = []
    for i in range(count):
        name = f"repo{i % repos}"
        full_name = f"{BURST_OWNER}/{name}"
        with fake.shard(full_name):
            number = 100_000 + i
            fake.add_pull(BURST_OWNER, name, number, hashlib.sha1(full_name.encode()).hexdigest(),
                          hashlib.sha1(f"burst:{i}".encode()).hexdigest(),
                          files=[{"filename": CHANGED_PATH, "patch": PATCH}], title=f"Bump dependency {i}")
            payload = pull_request_payload(fake, installation, full_name, number)
        prepared.append((str(uuid.uuid4()), json.dumps(payload).encode()))
    attempts: list[Attempt] = []
    lock = threading.Lock()
    start = time.monotonic()

    def send(i: int) -> None:
        time.sleep(max(0.0, start + i * seconds / count - time.monotonic()))
        delivery, body = prepared[i]
        began = time.monotonic()
        status, took, word = post(fleet.url, "pull_request", body, delivery)
        with lock:
            attempts.append(Attempt(delivery, "burst", began, took, status, word))

    with ThreadPoolExecutor(min(count, 256), thread_name_prefix="burst") as pool:
        list(pool.map(send, range(count)))
    return attempts


# ------------------------------------------------------------------ the run

class Chaos(threading.Thread):
    """Carries out the chaos plan against the fleet, in wall seconds from the day's start."""

    def __init__(self, fleet: Fleet, steps: list[ChaosStep], redis_down: float) -> None:
        super().__init__(name="chaos", daemon=True)
        self.fleet, self.steps, self.redis_down = fleet, steps, redis_down
        self.stopped = threading.Event()
        self.start_time = 0.0
        self.done: list[tuple[float, str, int]] = []
        self.redis_outage = 0.0

    def run(self) -> None:
        for step in self.steps:
            if self.stopped.wait(max(0.0, self.start_time + step.at - time.monotonic())):
                return
            if step.action == "kill":
                self.fleet.workers[step.worker].kill()
            elif step.action == "start":
                self.fleet.workers[step.worker].start()
            else:
                self.redis_outage = self.fleet.redis.restart(self.redis_down)
            self.done.append((time.monotonic() - self.start_time, step.action, step.worker))

    def stop(self) -> None:
        self.stopped.set()
        self.join()


def snapshot(fake: FleetGitHub, login: str) -> tuple[list[RunSeen], dict[str, int]]:
    """Our check runs (with their completions) and how many summary comments each pull request has."""
    from difforacle.bot.summary import SUMMARY_MARKER

    runs: list[RunSeen] = []
    comments: dict[str, int] = {}
    with fake._lock:
        for name, shard in fake.shards.items():
            for run in shard.check_runs.values():
                if run.app_login == login:
                    runs.append(RunSeen(run.head_sha, run.conclusion, run.output.get("title") or "",
                                        tuple(fake.requests.completions.get(run.id, ()))))
            for comment in shard.issue_comments.values():
                if comment.login == login and comment.body.startswith(SUMMARY_MARKER):
                    key = f"{name}#{comment.issue_number}"
                    comments[key] = comments.get(key, 0) + 1
    return runs, comments


@dataclass
class Result:
    """Everything a run measured (the JSON written by --out)."""

    prs: int
    window_hours: float
    compression: float
    workers: int
    slots: int
    deliveries: int = 0
    wall_seconds: float = 0.0
    latency: dict[str, float] = field(default_factory=dict)
    lost: int = 0
    final_heads: int = 0
    failed_jobs: int = 0
    duplicated_comments: int = 0
    duplicated_check_runs: int = 0
    superseded: dict[str, int] = field(default_factory=dict)
    receiver_day: dict[str, float] = field(default_factory=dict)
    receiver_burst: dict[str, float] = field(default_factory=dict)
    unanswered: int = 0
    redelivered_after_failure: int = 0
    requests_per_pr: dict[str, float] = field(default_factory=dict)
    peak_per_hour: dict[str, int] = field(default_factory=dict)
    hour_observed: float = 60.0  # real-day minutes the busiest stretch behind peak_per_hour lasted
    chaos: dict[str, float] = field(default_factory=dict)
    worker_log: dict[str, int] = field(default_factory=dict)
    harness_lag: dict[str, float] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)  # requests GitHub would refuse (422)
    drained: bool = True
    lost_heads: list[dict[str, Any]] = field(default_factory=list)
    stuck_heads: list[str] = field(default_factory=list)  # superseded, their check run left in progress
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    phases: dict[str, dict[str, float]] = field(default_factory=dict)


WORKER_EVENTS = {  # log lines of the workers worth counting, by what they say
    "jobs published": re.compile(r"job \S+: published: "),
    "engine runs": re.compile(r"job \S+: the engine ran in the "),
    "superseded before starting": re.compile(r"superseded by head \S+ before it started"),
    "superseded after the engine": re.compile(r"job \S+: superseded: "),
    "engine stopped by a new push": re.compile(r"superseded: .*while the engine ran: it was stopped"),
    "recovered: lease expired": re.compile(r"its worker stopped \(lease expired\); queued again"),
    "recovered: lost from the queue": re.compile(r"taken from the queue by a worker that stopped"),
    "given up": re.compile(r"given up \(redeliver it to retry\)"),
    "failed": re.compile(r"job \S+ failed: "),
    "lease renewals failed": re.compile(r"lease renewal failed"),
}


def count_log(text: str) -> Counter:
    return Counter({name: len(pattern.findall(text)) for name, pattern in WORKER_EVENTS.items()})


def answer_times(attempts: list[Attempt]) -> dict[str, float]:
    ms = [a.seconds * 1000 for a in attempts]
    return {"count": len(ms), "p50_ms": percentile(ms, 0.5), "p95_ms": percentile(ms, 0.95),
            "max_ms": max(ms, default=math.nan),
            **{f"status_{status}": n for status, n in sorted(Counter(a.status for a in attempts).items())}}


def run_fleet(args: argparse.Namespace, load: Load, workers: int, chaos_on: bool, with_burst: bool,
              log: Callable[[str], None]) -> Result:
    """One run: the fleet up, the day played (with failures if `chaos_on`), drained, then the burst."""
    rng = random.Random(args.seed)
    plans, length = plan_pulls(load, rng)
    deliveries = plan_deliveries(plans, load, length, rng)
    duration = length / args.compression
    rates = hourly_rates(load.peak)
    day_start = window(rates, load.per_day, load.prs)[0]
    result = Result(load.prs, length / HOUR, args.compression, workers, args.slots, len(deliveries))
    log(f"{load.prs} pull requests over {length / HOUR:.1f} real hours from {day_start / HOUR:.1f} h: "
        f"{len(deliveries)} deliveries in {duration:.0f} s at {args.compression:g}x; {workers} workers x "
        f"{args.slots} jobs")
    heads = {sha: (plan.index, k, k == len(plan.pushes), plan.closed is not None)
             for plan in plans for k, sha in enumerate(head_shas(plan))}
    cpu_before = _cpu_seconds()
    with Fleet.up(args, workers, load, keep=args.keep) as fleet:
        if args.keep:
            log(f"logs in {fleet.folder}")
        day = Day(fleet, plans, deliveries, args.compression, args.senders, args.redeliver_after)
        chaos = Chaos(fleet, plan_chaos(duration, workers, args.kill_every, args.restart_after, rng)
                      if chaos_on else [], args.redis_down)
        began = chaos.start_time = time.monotonic()
        chaos.start()
        try:
            day.run(_progress(day, log))
        finally:
            chaos.stop()
        for worker in fleet.workers:  # one killed last may still be down
            if not worker.alive:
                worker.start()
        heads = {sha: head for sha, head in heads.items() if sha in day.sent}  # not those pushed before
        result.drained = drain(fleet, heads, args.drain)
        result.wall_seconds = time.monotonic() - began
        day_end = time.monotonic()
        log(f"day done in {result.wall_seconds:.0f} s" + ("" if result.drained else ", drain timed out"))
        runs, comments_by_pull = snapshot(fleet.fake, fleet.app_login)
        worker_logs = [w.log() for w in fleet.workers]
        result.worker_log = dict(sum((count_log(text) for text in worker_logs), Counter()))
        phases = job_phases(fleet.receiver.log(), worker_logs)
        burst_attempts = burst(fleet, args.burst, args.burst_seconds, load.repos) if with_burst else []
        for service in [fleet.receiver, *fleet.workers, fleet.redis]:
            service.kill()
        entries = list(fleet.fake.requests)
        result.violations = [f"{v.operation} ({v.kind}): {'; '.join(v.errors)[:300]}"
                             for v in fleet.fake.violations]
        names = {inst: f"org{i}" for i, inst in enumerate(fleet.installations[:-1])}
    result.cpu_seconds = {k: round(v - cpu_before[k], 1) for k, v in _cpu_seconds().items()}
    result.cpu_seconds["load_average"] = round(os.getloadavg()[1], 1)
    peak_hours = {h for h, rate in enumerate(rates) if rate >= PEAK_SHARE}

    def at_peak(sha: str) -> bool:
        return int((day_start + (day.sent[sha] - began) * args.compression) // HOUR) in peak_hours

    comments = {pull: comments_by_pull.get(f"{name}#{number}", 0)
                for pull, (name, number) in day.where.items()}
    outcomes = assess(heads, day.sent, runs, comments, at_peak)
    c = args.compression
    latency = {"p50": percentile(outcomes.latencies, 0.5), "p95": percentile(outcomes.latencies, 0.95),
               "max": max(outcomes.latencies, default=math.nan),
               "peak_p95": percentile(outcomes.peak_latencies, 0.95)}
    result.latency = {**latency, **{f"{key}_real": value * c for key, value in latency.items()},
                      "measured": len(outcomes.latencies), "at_peak": len(outcomes.peak_latencies)}
    result.lost, result.final_heads = len(outcomes.lost), outcomes.final_heads
    result.failed_jobs = outcomes.failed
    result.lost_heads = [day.describe(sha, heads[sha][0]) for sha in outcomes.lost[:20]]
    for lost in result.lost_heads:
        lost["last_logged"] = last_logged(lost["job"], worker_logs)
    result.stuck_heads = [day.describe(sha, heads[sha][0])["job"] for sha in outcomes.stuck[:20]]
    result.duplicated_comments = outcomes.duplicated_comments
    result.duplicated_check_runs = outcomes.duplicated_check_runs
    result.superseded = dict(outcomes.superseded)
    result.receiver_day = answer_times(day.attempts)
    result.receiver_burst = answer_times(burst_attempts)
    result.unanswered = len({d.id for d in deliveries} - day.answered)
    result.redelivered_after_failure = sum(1 for delivery in day.failures if delivery in day.answered)
    by_installation: dict[int | None, list[float]] = defaultdict(list)
    operations: Counter = Counter()
    for t, inst, operation, _ in entries:
        if began <= t <= day_end:
            operations[operation] += 1
            if operation != GIT_OPERATION:
                by_installation[inst].append((t - began) * c)
    result.requests_per_pr = {
        "installation": sum(len(v) for k, v in by_installation.items() if k is not None) / max(1, load.prs),
        "app_jwt": len(by_installation[None]) / max(1, load.prs),
        **{operation: round(n / max(1, load.prs), 2) for operation, n in operations.most_common()}}
    span = (day_end - began) * c
    result.peak_per_hour = {names[inst]: hourly_peak(by_installation.get(inst, []), span)
                            for inst in sorted(names)}
    result.hour_observed = min(HOUR, span) / 60
    result.chaos = {"worker_kills": sum(1 for _, action, _ in chaos.done if action == "kill"),
                    "redis_restarts": sum(1 for _, action, _ in chaos.done if action == "redis"),
                    "redis_outage_s": round(chaos.redis_outage, 2)}
    result.harness_lag = {"p95_s": percentile(day.lag, 0.95), "max_s": max(day.lag, default=math.nan)}
    result.phases = {name: {"p50_real": percentile(values, 0.5) * c, "p95_real": percentile(values, 0.95) * c}
                     for name, values in phases.items()}
    return result


def drain(fleet: Fleet, heads: dict[str, tuple[int, int, bool, bool]], quiet: float) -> bool:
    """Wait for every final head of an open pull request to be checked, or until no check run has
    completed for `quiet` seconds (a head left unchecked then never is); whether all were."""
    waiting = {sha for sha, (_, _, final, closed) in heads.items() if final and not closed}
    last_change, left = time.monotonic(), len(waiting)
    while waiting and time.monotonic() - last_change < quiet:
        time.sleep(0.5)
        runs, _ = snapshot(fleet.fake, fleet.app_login)
        waiting -= {r.head for r in runs if any(c != "cancelled" for c, _ in r.completions)}
        if len(waiting) < left:
            last_change, left = time.monotonic(), len(waiting)
    return not waiting


LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (.*)$")
QUEUED = re.compile(r"^delivery \S+: pull_request \S+ queued (.+)$")
STEP = re.compile(r"^job (\S+): (fetching|dependencies installed in the \S+ sandbox in ([0-9.]+) s|"
                  r"the engine ran in the \S+ sandbox in ([0-9.]+) s|published: )")


def job_phases(receiver_log: str, worker_logs: list[str], skip: str = BURST_OWNER) -> dict[str, list[float]]:
    """Wall seconds of each published job, from the App's logs: `wait` from being queued to the start of
    the run that published (queue, token, check run), `sandbox` the stubbed install and engine, `rest`
    the remainder of that run (the stubbed fetch, publishing)."""
    def lines(text: str) -> Iterator[tuple[float, str]]:
        for line in text.splitlines():
            if match := LOG_LINE.match(line):
                stamp = time.mktime(time.strptime(match[1][:19], "%Y-%m-%d %H:%M:%S"))
                yield stamp + int(match[1][20:]) / 1000, match[2]

    queued: dict[str, float] = {}
    for at, message in lines(receiver_log):
        if match := QUEUED.match(message):
            for job in match[1].split(", "):
                queued.setdefault(job, at)
    phases: dict[str, list[float]] = {"wait": [], "sandbox": [], "rest": []}
    for text in worker_logs:
        runs: dict[str, list[float]] = {}  # job -> [started fetching, sandbox seconds]
        for at, message in lines(text):
            match = STEP.match(message)
            if match is None or match[1].startswith(skip) or match[1] not in queued:
                continue
            job, step = match[1], match[2]
            if step == "fetching":
                runs[job] = [at, 0.0]
            elif job in runs and step.startswith(("dependencies", "the engine")):
                runs[job][1] += float(match[3] or match[4])
            elif job in runs:
                started, sandbox = runs.pop(job)
                phases["wait"].append(started - queued[job])
                phases["sandbox"].append(sandbox)
                phases["rest"].append(at - started - sandbox)
    return phases


def last_logged(job: str, logs: list[str]) -> str:
    """What the workers last logged about a job (how a lost head ended), without the timestamp."""
    lines = [line for text in logs for line in text.splitlines() if f"job {job}" in line]
    return max(lines, default="").partition(": ")[2][:300]


def _progress(day: Day, log: Callable[[str], None]) -> Callable[[float], None]:
    last = [0.0]

    def tick(now: float) -> None:
        if now - last[0] >= 30:
            last[0] = now
            log(f"  {now:.0f} s: {len(day.attempts)} deliveries answered, load {os.getloadavg()[0]:.1f}")

    return tick


def _cpu_seconds() -> dict[str, float]:
    """CPU time of this process (the fake GitHub, the deliveries) and of the children waited for (the App)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"bench": own.ru_utime + own.ru_stime, "app": children.ru_utime + children.ru_stime}


# ------------------------------------------------------------------ the table

def _s(value: float, digits: int = 1) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def table(result: Result, args: argparse.Namespace) -> str:
    lat, c, cpu = result.latency, result.compression, result.cpu_seconds
    rows = [
        ("load", f"{result.prs} PRs over {result.window_hours:.1f} real-day hours, "
                 f"{result.deliveries} deliveries; compression {c:g}x ({result.wall_seconds:.0f} s wall)"),
        ("fleet", f"{result.workers} workers x {result.slots} jobs at once, lease {args.lease:g} s, "
                  f"engine median {args.engine_median:g} s real-day"),
        ("delivery to check run completed, p50 / p95 / max",
         f"{_s(lat['p50'], 2)} / {_s(lat['p95'], 2)} / {_s(lat['max'], 2)} s "
         f"({_s(lat['p50_real'], 0)} / {_s(lat['p95_real'], 0)} / {_s(lat['max_real'], 0)} s real-day), "
         f"{lat['measured']} heads"),
        ("... arrived at the peak (>= 2.5x the mean rate), p95",
         f"{_s(lat['peak_p95'], 2)} s ({_s(lat['peak_p95_real'], 0)} s real-day), {lat['at_peak']} heads"),
        ("a published job, p50 / p95 real-day: queued to its run (queue, token, check run); stubbed "
         "install and engine; the rest (stubbed fetch, publishing)",
         "; ".join(f"{_s(result.phases.get(k, {}).get('p50_real', math.nan), 0)} / "
                   f"{_s(result.phases.get(k, {}).get('p95_real', math.nan), 0)} s"
                   for k in ("wait", "sandbox", "rest"))),
        ("deliveries lost (final heads without a completed check run)",
         f"**{result.lost}** of {result.final_heads}" + ("" if result.drained else " (drain timed out)")),
        ("jobs that completed as \"could not run\"", str(result.failed_jobs)),
        ("summary comments duplicated (PRs with more than one)", f"**{result.duplicated_comments}**"),
        ("check runs duplicated (more than one on a head)", str(result.duplicated_check_runs)),
        ("superseded heads", ", ".join(f"{k} {v}" for k, v in sorted(result.superseded.items())) or "none"),
        ("receiver during the day, p50 / p95 / max",
         _answers(result.receiver_day)),
        ("deliveries failed then redelivered / never answered",
         f"{result.redelivered_after_failure} / {result.unanswered}"),
    ]
    if result.receiver_burst.get("count"):
        rows.append((f"receiver under a burst of {args.burst} in {args.burst_seconds:g} s, p50 / p95 / max",
                     _answers(result.receiver_burst)))
    rows += [
        ("GitHub API requests per PR: installation token / App JWT",
         f"{result.requests_per_pr['installation']:.1f} / {result.requests_per_pr['app_jwt']:.1f}"),
        (f"peak requests per real hour per installation (limit {RATE_LIMIT:,})",
         ", ".join(f"{name} {count:,}" for name, count in result.peak_per_hour.items())
         + ("" if result.hour_observed >= 60 else
            f" (the busiest {result.hour_observed:.0f} real-day minutes, scaled to an hour)")),
        ("failures injected", f"{result.chaos.get('worker_kills', 0)} worker kills (SIGKILL to the group), "
                              f"{result.chaos.get('redis_restarts', 0)} Redis restart "
                              f"({_s(result.chaos.get('redis_outage_s', math.nan), 2)} s down)"),
        ("workers' log", ", ".join(f"{k} {v}" for k, v in result.worker_log.items() if v)),
        ("harness lag (deliveries sent late), p95 / max", f"{_s(result.harness_lag['p95_s'], 2)} / "
                                                          f"{_s(result.harness_lag['max_s'], 2)} s wall"),
        ("requests GitHub would refuse (the fake's 422s)", str(len(result.violations))),
        ("CPU seconds: the App's processes / the bench (fake GitHub, deliveries); load average",
         f"{_s(cpu.get('app', math.nan))} / {_s(cpu.get('bench', math.nan))}; "
         f"{_s(cpu.get('load_average', math.nan))} on {os.cpu_count()} CPUs"),
    ]
    lines = ["| figure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    for violation in result.violations[:5]:
        lines.append(f"\nrefused: {violation}")
    for lost in result.lost_heads:
        lines.append(f"\nlost: {lost['job']}: delivery {lost['delivery']} answered "
                     + ", then ".join(lost["answers"] or ["never"])
                     + f"; the workers last logged: {lost.get('last_logged') or 'nothing'}")
    return "\n".join(lines)


def _answers(figures: dict[str, float]) -> str:
    """ "4.7 / 44.2 / 175.8 ms; 990x 202, 10x no answer" """
    answers = {k.removeprefix("status_"): int(v) for k, v in figures.items() if k.startswith("status_")}
    return (f"{_s(figures.get('p50_ms', math.nan))} / {_s(figures.get('p95_ms', math.nan))} / "
            f"{_s(figures.get('max_ms', math.nan))} ms; "
            + ", ".join(f"{n}x {'no answer' if status == '0' else status}" for status, n in answers.items()))


# ------------------------------------------------------------------ command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=10_000, help="pull requests (default: 10000)")
    parser.add_argument("--per-day", type=int, default=10_000, help="arrivals a day (default: 10000)")
    parser.add_argument("--compression", type=float, default=96.0,
                        help="real-day seconds per wall second (default: 96, a day in 15 minutes)")
    parser.add_argument("--workers", type=int, default=8, help="worker processes, one a machine (default: 8)")
    parser.add_argument("--slots", type=int, default=4, help="DIFFORACLE_WORKERS: jobs a worker runs at once")
    parser.add_argument("--threads", type=int, default=8, help="the receiver's --threads (default: 8)")
    parser.add_argument("--installations", type=int, default=4)
    parser.add_argument("--repos", type=int, default=25, help="repositories per installation (default: 25)")
    parser.add_argument("--engine-median", type=float, default=40.0, help="real-day seconds (default: 40)")
    parser.add_argument("--install-median", type=float, default=8.0, help="real-day seconds (default: 8)")
    parser.add_argument("--fetch-median", type=float, default=2.0, help="real-day seconds (default: 2)")
    parser.add_argument("--lease", type=float, help="DIFFORACLE_LEASE_SECONDS, wall seconds "
                        "(default: 60 s real-day compressed, at least 2)")
    parser.add_argument("--kill-every", type=float, help="mean wall seconds between worker kills "
                        "(default: a tenth of the day's wall time; 0: none)")
    parser.add_argument("--restart-after", type=float, default=2.0,
                        help="wall seconds a killed worker stays down (default: 2)")
    parser.add_argument("--redis-down", type=float, default=1.0, help="wall seconds Redis stays down")
    parser.add_argument("--redeliver-after", type=float, default=600.0,
                        help="real-day seconds before a failed delivery is redelivered (default: 600)")
    parser.add_argument("--senders", type=int, default=64, help="deliveries in flight at once (default: 64)")
    parser.add_argument("--burst", type=int, default=1000, help="deliveries in the receiver burst (0: none)")
    parser.add_argument("--burst-seconds", type=float, default=10.0)
    parser.add_argument("--drain", type=float, default=60.0, help="after the day, wall seconds without a "
                        "check run completed before the heads still unchecked count as lost (default: 60)")
    parser.add_argument("--find-workers", metavar="M,M,...", help="instead of the day, run the peak alone "
                        "with each worker count, from the first, until the p95 stays under 3 real minutes")
    parser.add_argument("--peak-minutes", type=float, default=60.0,
                        help="real-day minutes of each --find-workers run (default: 60)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (the logs)")
    args = parser.parse_args(argv)
    if args.lease is None:
        args.lease = max(2.0, 60.0 / args.compression)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleans up as Ctrl-C does

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    load = Load(prs=args.prs, per_day=args.per_day, installations=args.installations, repos=args.repos)
    if args.kill_every is None:
        start, end = window(hourly_rates(load.peak), load.per_day, load.prs)
        args.kill_every = (end - start) / args.compression / 10
    if args.find_workers:
        trials = find_workers(args, load, [int(m) for m in args.find_workers.split(",")], log)
        print(trials_table(trials, args))
        figures: dict[str, Any] = {"find_workers": [asdict(t) for t in trials]}
        status = 0
    else:
        result = run_fleet(args, load, args.workers, chaos_on=True, with_burst=args.burst > 0, log=log)
        print(table(result, args))
        figures = {"run": asdict(result)}
        status = 0 if result.lost == 0 and result.duplicated_comments == 0 else 1
    if args.out:
        args.out.write_text(json.dumps(_finite(figures), indent=2) + "\n", encoding="utf-8")
    return status


def _finite(data: Any) -> Any:
    """NaN (a percentile of nothing) as null: JSON has no NaN."""
    if isinstance(data, float) and math.isnan(data):
        return None
    if isinstance(data, dict):
        return {str(k): _finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v) for v in data]
    return data


def find_workers(args: argparse.Namespace, load: Load, counts: list[int],
                 log: Callable[[str], None]) -> list[Result]:
    """Runs of the peak alone, without failures or the burst, with each worker count until one holds."""
    prs = max(1, round(load.per_day * load.peak * args.peak_minutes / (24 * 60)))
    peak = Load(**{**asdict(load), "prs": prs})
    trials = []
    for count in counts:
        trial = run_fleet(args, peak, count, chaos_on=False, with_burst=False, log=log)
        trials.append(trial)
        log(f"{count} workers: p95 {_s(trial.latency['p95_real'], 0)} s real-day")
        if trial.latency["p95_real"] < TARGET_P95 and trial.lost == 0:
            break
    return trials


def trials_table(trials: list[Result], args: argparse.Namespace) -> str:
    """The --find-workers runs, real-day seconds."""
    lines = [f"The peak alone ({args.peak_minutes:g} real-day minutes at {Load().peak:g}x the mean rate, no "
             f"failures): delivery to check run against the worker count (target: p95 under {TARGET_P95:g} s "
             "real-day)", "",
             "| workers | jobs at once | PRs | p50 | p95 | p95 queued to its run | lost | holds |",
             "|---|---|---|---|---|---|---|---|"]
    for t in trials:
        holds = "yes" if t.latency["p95_real"] < TARGET_P95 and t.lost == 0 else "no"
        wait = t.phases["wait"]["p95_real"]
        lines.append(f"| {t.workers} | {t.workers * t.slots} | {t.prs} | {_s(t.latency['p50_real'], 0)} s | "
                     f"{_s(t.latency['p95_real'], 0)} s | {_s(wait, 0)} s | {t.lost} | {holds} |")
    return "\n".join(lines)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # everything started is stopped and removed by then
        sys.exit(130)
