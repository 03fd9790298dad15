"""Where untrusted code runs: a Docker container, or bubblewrap + rlimits where no Docker
engine exists. Both take the same request and give the same result.

The project under test, its dependency installation and the engine run here, never in the
worker's own process: a hostile pull request may fork-bomb, eat memory, loop, open sockets,
read the environment and files, delete what it can reach, exit or crash. The sandbox sees
only what is mounted into it and the environment it is given (never a secret).

    sandbox.py          this interface and the shared pieces
    sandbox_docker.py   DockerSandbox: a container per run (docker SDK)
    sandbox_bwrap.py    BubblewrapSandbox: bwrap namespaces + rlimits (prlimit), no daemon
    sandbox_choice.py   `select_sandbox`: Docker when it can run, else bubblewrap
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from difforacle.bot.app import egress_bridge

SANDBOX_UID = 10001  # the image's `difforacle` user; a root worker runs sandboxed code as this uid
SANDBOX_HOME = "/home/sandbox"  # a tmpfs in both sandboxes; HOME unless the request sets it
SANDBOX_HOSTNAME = "sandbox"
STOP_POLL = 1.0  # seconds between looks at a request's `stop` while its run goes on
EGRESS_DIR = "/run/difforacle-egress"  # where a request's egress socket is mounted
BRIDGE_PATH = "/run/difforacle-egress-bridge.py"  # and the bridge that forwards the sandbox's loopback to it


@dataclass(frozen=True)
class Mount:
    source: Path  # on the host (with a containerised worker: the path on the Docker host)
    target: str  # absolute path inside the sandbox
    read_only: bool = True  # a writable source is handed to the sandbox's uid for the run, then back


@dataclass(frozen=True)
class Limits:
    # Docker: the container's cgroup; bubblewrap: the run's cgroup (where the worker can make one:
    # `cgroups.py`) and the address space of each process
    memory_mb: int = 4096
    pids: int = 512  # Docker: the container's cgroup; bubblewrap: the run's cgroup, else RLIMIT_NPROC
    cpus: float = 1.0  # Docker: CPU quota; bubblewrap: pinned to ceil(cpus) CPUs
    wall_seconds: float = 600.0
    output_bytes: int = 1_000_000  # of stdout and of stderr kept; the rest is dropped, not buffered
    tmp_mb: int = 1024  # size of each tmpfs (/tmp and HOME)
    file_mb: int = 2048  # the largest file a process may write (RLIMIT_FSIZE); writable mounts have no quota


@dataclass(frozen=True)
class SandboxRequest:
    argv: list[str]
    mounts: list[Mount] = field(default_factory=list)
    workdir: str = "/work"
    env: dict[str, str] = field(default_factory=dict)  # the whole environment inside: nothing is inherited
    # the unix socket of an allow-listing proxy (`egress.py`), the run's one way out: the command
    # runs under `egress_bridge`, which points the proxy variables at it. None: no way out at all
    egress: Path | None = None
    limits: Limits = field(default_factory=Limits)
    # set by the caller while the run goes on (the pull request moved on): the run is killed within
    # STOP_POLL seconds and its result says `cancelled`
    stop: threading.Event | None = field(default=None, compare=False)


@dataclass(frozen=True)
class SandboxResult:
    sandbox: str  # "docker" or "bubblewrap": the summary says which one ran
    exit_code: int | None  # None when the sandbox killed it (time or memory); 128+N when signal N ended it
    stdout: str
    stderr: str
    timed_out: bool = False
    out_of_memory: bool = False
    seconds: float = 0.0
    truncated: bool = False  # stdout or stderr went over limits.output_bytes (the rest was dropped)
    cancelled: bool = False  # killed because the request's `stop` was set

    @property
    def outcome(self) -> str:
        """One phrase for a summary: how the run ended."""
        if self.cancelled:
            return "cancelled"
        if self.timed_out:
            return "killed at the wall-clock limit"
        if self.out_of_memory:
            return "ran out of memory"
        return f"exit status {self.exit_code}"


class Sandbox(Protocol):
    name: str
    python: str  # an interpreter inside the sandbox that has difforacle (`python -m difforacle.bot diff ...`)

    def run(self, request: SandboxRequest) -> SandboxResult: ...


class SandboxError(Exception):
    """The sandbox itself failed, not the code in it (the Docker engine broke off, a mount was refused)."""


class SandboxUnavailable(SandboxError):
    """The requested sandbox cannot run here (no engine, no image, no bwrap); the message says why."""


def egress_parts(request: SandboxRequest, python: str) -> tuple[list[str], list[Mount]]:
    """The command to run and the mounts to add: the request's own, or, with an egress socket,
    the command under the bridge and the socket's folder mounted (read-only: connecting needs
    no write access to the mount). The bridge's file is mounted on its own: it runs under any
    interpreter the sandbox has, whether or not difforacle is installed there."""
    if request.egress is None:
        return list(request.argv), []
    socket_path = f"{EGRESS_DIR}/{request.egress.name}"
    argv = [python, "-I", BRIDGE_PATH, socket_path, *request.argv]
    return argv, [Mount(request.egress.parent, EGRESS_DIR), Mount(Path(egress_bridge.__file__), BRIDGE_PATH)]


def sandbox_ids() -> tuple[int, int]:
    """The uid and gid sandboxed code runs as: the worker's own, or SANDBOX_UID for a root worker."""
    if os.geteuid() == 0:
        return SANDBOX_UID, SANDBOX_UID
    return os.geteuid(), os.getegid()


class OutputCap:
    """Keeps the first `limit` bytes of a stream and its last few, and counts the rest without keeping it."""

    TAIL = 4096  # enough to recognise how a truncated run ended (a MemoryError, a traceback's last line)

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0
        self.tail = b""

    def add(self, data: bytes) -> None:
        room = self.limit - self.kept
        if room > 0:
            self.chunks.append(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))
        self.tail = (self.tail + data[-self.TAIL:])[-self.TAIL:]

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


@contextmanager
def handed_over(mounts: list[Mount]) -> Iterator[None]:
    """Writable mounts owned by the sandbox's uid during the run, and by the worker again after it.

    Only a root worker runs code as another uid; without this the sandbox could not write its
    report, and git inside it would refuse a repository owned by someone else. Giving the tree
    back afterwards keeps git usable for the worker (it refuses repositories it does not own).
    """
    uid, gid = sandbox_ids()
    writable = [m.source for m in mounts if not m.read_only]
    if os.geteuid() != 0 or uid == 0 or not writable:
        yield
        return
    owners = {path: path.stat() for path in writable}
    try:
        for path in writable:
            _chown_tree(path, uid, gid)
        yield
    finally:
        for path, stat in owners.items():
            _chown_tree(path, stat.st_uid, stat.st_gid)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """chown -R that never follows a symbolic link (the sandbox may have planted some)."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            with suppress(FileNotFoundError):
                os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)
