"""The worker's request loop: JSON lines in on stdin, JSON lines out on a private descriptor.

Protocol `difforacle.worker/1`. Requests:

    {"cmd": "init", "roots": [...], "modules": [...], "units": [[module, qualname]],
     "lines": {file: [n]}, "call_timeout": s, "sequence_timeout": s, "memory_mb": n}
        -> {"ok": true, "protocol": ..., "catalog": {...}, "unwrapped": [units],
            "covered_at_import": [[file, line], ...], "python": "3.11.7"}
    {"cmd": "run", "sequences": [[stmt, ...], ...], "random_seed": n, "isolate": bool,
     "callees": bool, "lines": bool, "disabled_observers": [type names]}
        -> {"ok": true, "results": [...], "covered": [[statement-free file, line], ...]}
    {"cmd": "quit"}

Any failure of the worker itself answers {"ok": false, "error": "..."}. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

from .execute import SequenceRunner
from .introspect import build_catalog
from .observe import Observer
from .resolve import Resolver
from .sandbox import ForkRunner
from .tracer import ChangeTracer, install_hit_wrappers

PROTOCOL = "difforacle.worker/1"


class RawReply:
    """A reply that is already JSON text (the children's results are passed through, not re-encoded)."""

    def __init__(self, text: str) -> None:
        self.text = text


class Worker:
    def __init__(self, out_fd: int) -> None:
        self.out_fd = out_fd
        self.runner: SequenceRunner | None = None
        self.forks: ForkRunner | None = None

    def handle(self, request: dict) -> dict | RawReply:
        command = request.get("cmd")
        if command == "init":
            return self.init(request)
        if command == "run":
            return self.run(request)
        return {"ok": False, "error": f"unknown command {command!r}"}

    def init(self, request: dict) -> dict:
        for root in reversed(request["roots"]):
            sys.path.insert(0, root)
        tracer = ChangeTracer(request.get("lines", {}))
        catalog, covered_at_import = tracer.during_import(lambda: build_catalog(request["modules"]))
        codes, unwrapped = install_hit_wrappers(request.get("units", []), tracer)
        tracer.watch(codes)
        self.runner = SequenceRunner(Resolver(), Observer(), tracer, request.get("call_timeout", 1.0), 0)
        self.forks = ForkRunner(request.get("memory_mb", 2048), request.get("sequence_timeout", 10.0))
        self.runner.on_statement = self.forks.set_statement
        return {"ok": True, "protocol": PROTOCOL, "catalog": catalog, "unwrapped": unwrapped,
                "covered_at_import": sorted(covered_at_import), "python": sys.version.split()[0]}

    def run(self, request: dict) -> dict | RawReply:
        if self.runner is None or self.forks is None:
            return {"ok": False, "error": "run before init"}
        runner = self.runner
        runner.random_seed = request.get("random_seed", 0)
        runner.observer.disabled = set(request.get("disabled_observers", ()))
        runner.tracer.record_lines = bool(request.get("lines"))
        want_callees = bool(request.get("callees"))

        def work(sequence: list[dict]) -> dict:
            runner.tracer.covered.clear()
            result = runner.run(sequence, want_callees)
            if runner.tracer.record_lines:
                result["covered"] = sorted(runner.tracer.covered)
            return result

        runner.hanging_ops.clear()

        def on_hang(sequence: list[dict], statement: int) -> None:
            runner.hanging_ops.add(sequence[min(statement, len(sequence) - 1)]["op"])

        results = self.forks.run(request["sequences"], work, bool(request.get("isolate")), on_hang)
        return RawReply('{"ok": true, "results": [' + ",".join(results) + "]}")

    def reply(self, message: dict[str, Any] | RawReply) -> None:
        text = message.text if isinstance(message, RawReply) else json.dumps(message, default=repr)
        data = (text + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view):]


def serve() -> None:
    """Keep the protocol channel private: the project's prints go to /dev/null, not to the host."""
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the process's stdout
    worker = Worker(out_fd)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            worker.reply({"ok": False, "error": "request is not JSON"})
            continue
        if request.get("cmd") == "quit":
            break
        try:
            reply = worker.handle(request)
        except BaseException as exc:  # report, never die silently: the host turns this into a message
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                     "traceback": traceback.format_exc(limit=8)}
        worker.reply(reply)
