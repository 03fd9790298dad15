"""Fork isolation for sequences: limits, guards, output capture and crash/hang detection.

The worker process imports the project once; each batch of sequences runs in a forked
child with resource limits, an audit hook that refuses new processes and network
connections, and bounded stdout/stderr. A child that exits, segfaults or hangs costs one
sequence: the parent notes which statement it was on (a shared counter) and carries on
with the rest of the batch in a new child (what a killed child measured, such as its
coverage, is lost with it). Standard library only.
"""

from __future__ import annotations

import json
import mmap
import os
import resource
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .protocol import lost_record

OUTPUT_LIMIT = 64 * 1024
BLOCKED_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                            "os.fork", "os.forkpty", "pty.spawn", "socket.connect", "socket.sendto",
                            "os.kill", "os.killpg"})


class BoundedSink:
    """A text stream that keeps the first OUTPUT_LIMIT characters and drops the rest."""

    def __init__(self) -> None:
        self.kept = 0

    def write(self, text: str) -> int:
        self.kept = min(OUTPUT_LIMIT, self.kept + len(text))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _audit(event: str, args: tuple) -> None:
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"difforacle sandbox: {event} is not allowed while generating tests")


def apply_limits(memory_mb: int, cpu_seconds: int) -> None:
    """Soft limits on CPU time, file size, processes and (unless 0) address space; never raised above hard."""
    limits = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_FSIZE, 32 * 1024 * 1024),
              (resource.RLIMIT_NPROC, 256)]
    if memory_mb:
        limits.append((resource.RLIMIT_AS, memory_mb * 1024 * 1024))
    for limit, value in limits:
        try:
            hard = resource.getrlimit(limit)[1]
            resource.setrlimit(limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        except (ValueError, OSError):
            pass


def install_audit_hook() -> None:
    """Refuse new processes, signals and network connections from now on (audit hooks cannot be removed)."""
    sys.addaudithook(_audit)


def _enter_child(memory_mb: int, cpu_seconds: int) -> None:
    """Limits and guards that only the forked child gets (audit hooks cannot be removed)."""
    apply_limits(memory_mb, cpu_seconds)
    sys.stdout = sys.stderr = BoundedSink()  # type: ignore[assignment]
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the protocol's stdin is not the project's
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the child
    install_audit_hook()


class ChildHooks:
    """What a forked child does before its first item and after its last (nothing here)."""

    def begin(self) -> None:
        pass

    def end(self) -> dict:
        """Extra fields for the child's last result."""
        return {}


class ForkRunner:
    """Runs sequences in forked children and streams back one result per sequence."""

    def __init__(self, memory_mb: int, sequence_timeout: float) -> None:
        self.memory_mb = memory_mb
        self.sequence_timeout = sequence_timeout
        self._progress = mmap.mmap(-1, 8)  # shared with children: (sequence, statement) in progress

    def run(self, items: list[Any], work: Callable[[Any], dict], isolate: bool,
            on_hang: Callable[[Any, int], None] = lambda item, statement: None,
            child: ChildHooks | None = None) -> list[str]:
        """One JSON text per item, in order (kept as text: the host decodes it, not us).

        `on_hang(item, statement)` runs in this (parent) process when a child had to be
        killed, before the next child is forked, so that the next child can avoid the cause.
        `child` brackets each child's items (e.g. coverage measurement); what its `end`
        returns is merged into the child's last result.
        """
        results: list[str] = []
        while len(results) < len(items):
            pending = items[len(results):len(results) + 1] if isolate else items[len(results):]
            results.extend(self._run_child(pending, work, on_hang, child or ChildHooks()))
        return results

    def _run_child(self, items: list[Any], work: Callable[[Any], dict],
                   on_hang: Callable[[Any, int], None], hooks: ChildHooks) -> Iterator[str]:
        struct.pack_into("ii", self._progress, 0, 0, 0)
        read_fd, write_fd = os.pipe()
        cpu = int(self.sequence_timeout * len(items)) + 5
        pid = os.fork()
        if pid == 0:  # child
            os.close(read_fd)
            code = 0
            try:
                _enter_child(self.memory_mb, cpu)
                hooks.begin()
                for index, item in enumerate(items):
                    struct.pack_into("ii", self._progress, 0, index, 0)
                    result = work(item)
                    if index == len(items) - 1:
                        result.update(hooks.end())
                    _write_all(write_fd, (json.dumps(result, default=repr) + "\n").encode())
            except BaseException:
                code = 70
            os._exit(code)
        os.close(write_fd)
        yield from self._collect(pid, read_fd, items, on_hang)

    def _collect(self, pid: int, read_fd: int, items: list[Any],
                 on_hang: Callable[[Any, int], None]) -> Iterator[str]:
        buffer = b""
        done = 0
        deadline = time.monotonic() + self.sequence_timeout
        status: str | None = None
        try:
            while done < len(items):
                ready, _, _ = select.select([read_fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    status = "hang"
                    break
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    done += 1
                    deadline = time.monotonic() + self.sequence_timeout
                    yield line.decode()
        finally:
            os.close(read_fd)
            _, wait_status = os.waitpid(pid, 0)
        if done < len(items):
            statement = struct.unpack_from("ii", self._progress, 0)[1]
            if status == "hang":
                on_hang(items[done], statement)
            yield json.dumps(lost_record(status or _describe_exit(wait_status), statement))

    def set_statement(self, index: int) -> None:
        """Called by the child before each statement so a crash can be placed."""
        struct.pack_into("i", self._progress, 4, index)


def _describe_exit(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        return f"killed by {signal.Signals(os.WTERMSIG(wait_status)).name}"
    return f"process exited with status {os.WEXITSTATUS(wait_status)}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
