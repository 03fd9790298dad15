"""Bench: webhook-to-202 latency under a burst of deliveries, on loopback, against a real server.

Starts `difforacle app serve` (waitress) in its own process on the embedded SQLite queue, signs
a burst of real `pull_request.synchronize` payloads (distinct pull requests and heads), sends
them all at once from `--concurrency` keep-alive connections, and prints the median and p99
of the time from sending a request to reading its answer. Nothing consumes the queue: this
measures the receiver (signature, records, enqueueing), not the jobs.

    python benchmarks/webhook.py [--count 200] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fake GitHub and its helpers
sys.path.insert(0, str(Path(__file__).resolve().parent))  # figures

from figures import percentile
from support.app_helpers import ROOT, SECRET, headers, pull_event, sha


def server_command(port: int) -> list[str]:
    """`python -m difforacle.bot app serve` once bot/cli.py registers it, else the tests' equivalent."""
    probe = subprocess.run([sys.executable, "-m", "difforacle.bot", "app", "--help"], capture_output=True,
                           cwd=ROOT)
    if probe.returncode == 0:
        return [sys.executable, "-m", "difforacle.bot", "app", "serve", "--host", "127.0.0.1",
                "--port", str(port)]
    return [sys.executable, str(ROOT / "tests" / "support" / "app_helpers.py"), "serve", "--port", str(port)]


def start_server(data_dir: Path) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "DIFFORACLE_DATA_DIR": str(data_dir), "DIFFORACLE_WEBHOOK_SECRET": SECRET}
    env.pop("DIFFORACLE_QUEUE_URL", None)  # the embedded queue, in the temporary data dir
    server = subprocess.Popen(server_command(0), env=env, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert server.stderr is not None
    for line in server.stderr:
        if "listening on http://" in line:
            port = int(line.split("http://", 1)[1].split()[0].rsplit(":", 1)[1])
            threading.Thread(target=server.stderr.read, daemon=True).start()  # keep the pipe drained
            return server, port
    raise SystemExit(f"the server exited with status {server.wait()} before listening")


def deliveries(count: int) -> list[tuple[bytes, dict[str, str]]]:
    out = []
    for i in range(count):
        payload = pull_event(1000 + i % 50, sha(10_000 + i), action="synchronize", before=sha(i),
                             base="pull_request.synchronize")
        body = json.dumps(payload).encode()
        out.append((body, headers("pull_request", body, f"bench-{i:05d}-{time.time_ns()}")))
    return out


def burst(port: int, requests: list[tuple[bytes, dict[str, str]]], concurrency: int) -> tuple[list[float],
                                                                                               Counter]:
    local = threading.local()
    start = threading.Barrier(concurrency)
    statuses: Counter = Counter()
    lock = threading.Lock()

    def connection() -> http.client.HTTPConnection:
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            local.conn.connect()
            start.wait()  # every client connected: then all send at once
        return local.conn

    def send(item: tuple[bytes, dict[str, str]]) -> float:
        conn = connection()
        body, sent = item
        began = time.perf_counter()
        conn.request("POST", "/webhook", body=body, headers=sent)
        answer = conn.getresponse()
        answer.read()
        elapsed = time.perf_counter() - began
        with lock:
            statuses[answer.status] += 1
        return elapsed

    with ThreadPoolExecutor(concurrency) as pool:
        first = list(pool.map(send, requests[:concurrency], chunksize=1))  # one per client: opens them
        rest = list(pool.map(send, requests[concurrency:]))
    return first + rest, statuses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="deliveries in the burst (default: 200)")
    parser.add_argument("--concurrency", type=int, default=16, help="clients sending at once (default: 16)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="difforacle-bench-webhook-") as tmp:
        server, port = start_server(Path(tmp))
        try:
            burst(port, deliveries(20), 4)  # warm up: imports, first SQLite pages
            requests = deliveries(args.count)
            began = time.perf_counter()
            latencies, statuses = burst(port, requests, args.concurrency)
            wall = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(10)
    ms = [value * 1000 for value in latencies]
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    print(f"webhook-to-202 latency, burst of {args.count} deliveries from {args.concurrency} clients on "
          f"loopback, embedded SQLite queue ({load}):")
    print(f"  median {statistics.median(ms):.1f} ms, p90 {percentile(ms, 0.90):.1f} ms, "
          f"p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms")
    print(f"  {args.count / wall:.0f} deliveries/s over {wall:.2f} s; "
          f"answers: {dict(sorted(statuses.items()))}")
    return 0 if set(statuses) == {202} else 1


if __name__ == "__main__":
    sys.exit(main())
