"""The worker's request loop: JSON lines in on stdin, JSON lines out on a private descriptor.

The messages are those of `protocol` (`difforacle.worker/1`). The host names its protocol in
`init`; a worker that speaks another one refuses to start, with an error that says both.
Any failure of the worker itself answers {"ok": false, "error": "..."}. Standard library only.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import traceback
from typing import Any

from . import distance, literals, observe
from .execute import SequenceRunner
from .introspect import build_catalog
from .observe import Observer
from .probe import CoverageProbe
from .protocol import DUMP_SIGNAL, PROTOCOL, WORKER_DEFAULTS, InitReply, InitRequest, RunRequest
from .resolve import Resolver
from .sandbox import ChildHooks, ForkRunner, run_folders
from .tracer import ChangeTracer, install_hit_wrappers


class RawReply:
    """A reply that is already JSON text (the children's results are passed through, not re-encoded)."""

    def __init__(self, text: str) -> None:
        self.text = text


class _Measured(ChildHooks):
    """Coverage of the changed files over each forked child's sequences (and, with `branching`
    lines, each sequence's arcs out of them: its path)."""

    def __init__(self, probe: CoverageProbe, per_statement: bool, branching: dict[str, list[int]]) -> None:
        self.probe, self.per_statement, self.branching = probe, per_statement, branching

    def begin(self) -> None:
        self.probe.start(self.per_statement, self.branching)

    def end(self) -> dict:
        return self.probe.stop()


class Worker:
    def __init__(self, out_fd: int, writable: tuple[str, ...]) -> None:
        """`writable`: the run's folders, the only ones the forked children may change."""
        self.out_fd = out_fd
        self.writable = writable
        self.runner: SequenceRunner | None = None
        self.forks: ForkRunner | None = None
        self.probe: CoverageProbe | None = None

    def handle(self, request: dict) -> dict | RawReply:
        command = request.get("cmd")
        if command == "init":
            return self.init(request)  # type: ignore[arg-type]
        if command == "run":
            return self.run(request)  # type: ignore[arg-type]
        return {"ok": False, "error": f"unknown command {command!r}"}

    def init(self, request: InitRequest) -> InitReply | dict:
        if request.get("protocol") != PROTOCOL:
            return {"ok": False, "protocol": PROTOCOL,
                    "error": f"the host speaks {request.get('protocol')!r}, this worker {PROTOCOL!r}"}
        for root in reversed(request["roots"]):
            sys.path.insert(0, root)
        # as given (how modules' files are named) and resolved (a symlinked temporary folder)
        observe.PROJECT_ROOTS[:] = sorted({form for root in request["roots"]
                                           for form in (os.path.abspath(root), os.path.realpath(root))})
        observe.mask_folders(request.get("placeholders", []))
        probe = self.probe = CoverageProbe(request.get("lines", {}), request.get("coverage_path"))
        techniques = set(request.get("techniques", WORKER_DEFAULTS))
        if "divergence" in techniques:  # before the changed modules are imported
            distance.install(request.get("lines", {}))
        # Module and class bodies run only here: their changed lines are covered by the import.
        direct, asynchronous = request.get("direct", []), "asynchronous" in techniques
        catalog, at_import = probe.measure(lambda: build_catalog(
            request["modules"], direct, asynchronous, "duck" in techniques, request.get("subclassed", []),
            request.get("class_values", []), configured="configured" in techniques,
            volume="volume" in techniques))
        tracer = ChangeTracer()
        unwrapped = install_hit_wrappers(request.get("units", []), tracer)
        self.runner = SequenceRunner(Resolver(), Observer(), tracer, request.get("call_timeout", 1.0), 0,
                                     asynchronous)
        forks = self.forks = ForkRunner(request.get("memory_mb", 2048), request.get("sequence_timeout", 10.0),
                                       self.writable)

        def on_statement(index: int) -> None:
            forks.set_statement(index)
            probe.statement(index)

        self.runner.on_statement = on_statement
        self.runner.changed_entries = {table: [literals.decode(key) for key in keys]
                                       for table, keys in request.get("changed_entries", {}).items()}
        self.runner.prepare(op["id"] for op in catalog["operations"])
        probe.ready_for_children()
        return {"ok": True, "protocol": PROTOCOL, "catalog": catalog, "unwrapped": unwrapped,
                "at_import": at_import, "coverage": {"version": probe.version, "error": probe.error},
                "python": sys.version.split()[0]}

    def run(self, request: RunRequest) -> dict | RawReply:
        if self.runner is None or self.forks is None or self.probe is None:
            return {"ok": False, "error": "run before init"}
        runner = self.runner
        runner.random_seed = request.get("random_seed", 0)
        runner.observer.disabled = set(request.get("disabled_observers", ()))
        want_callees = bool(request.get("callees"))
        want_fields = bool(request.get("fields"))
        runner.distances = bool(request.get("distances"))
        isolate = bool(request.get("isolate"))
        probe = self.probe
        measured = (_Measured(probe, isolate, request.get("paths") or {}) if request.get("lines") else None)

        # each sequence with what to record for the dynamic influence check (None: nothing)
        influence = request.get("influence") or [None] * len(request["sequences"])

        def work(item: tuple[list[dict], dict | None, int]) -> dict:
            probe.sequence(item[2])
            return runner.run(item[0], want_callees, want_fields, item[1])

        runner.hanging_ops.clear()

        def on_hang(item: tuple[list[dict], dict | None, int], statement: int) -> None:
            sequence = item[0]
            runner.hanging_ops.add(sequence[min(statement, len(sequence) - 1)]["op"])

        items = list(zip(request["sequences"], influence, range(len(request["sequences"]))))
        results = self.forks.run(items, work, isolate, on_hang, measured)
        return RawReply('{"ok": true, "results": [' + ",".join(results) + "]}")

    def reply(self, message: dict[str, Any] | RawReply) -> None:
        text = message.text if isinstance(message, RawReply) else json.dumps(message, default=repr)
        data = (text + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.out_fd, view):]


def serve() -> None:
    """Keep the protocol channel private: the project's prints go to /dev/null, not to the host."""
    writable = run_folders()  # before the project's imports can move them
    # the host asks, before it stops a worker that does not answer, where each thread is
    faulthandler.register(DUMP_SIGNAL, file=sys.__stderr__, all_threads=True)
    out_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the process's stdout
    worker = Worker(out_fd, writable)
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
