"""Where untrusted code runs: a Docker container, or bubblewrap + rlimits where no Docker
engine exists. Both take the same request and give the same result.

The project under test, its dependency installation and the engine run here, never in the
worker's own process: a hostile pull request may fork-bomb, eat memory, loop, open sockets,
read the environment and files, delete what it can reach, exit or crash. The sandbox sees
only what is mounted into it and the environment it is given (never a secret).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class Mount:
    source: Path  # on the host
    target: str  # absolute path inside the sandbox
    read_only: bool = True


@dataclass(frozen=True)
class Limits:
    memory_mb: int = 4096
    pids: int = 512
    cpus: float = 1.0
    wall_seconds: float = 600.0
    output_bytes: int = 1_000_000  # of stdout and of stderr kept; the rest is dropped, not buffered


@dataclass(frozen=True)
class SandboxRequest:
    argv: list[str]
    mounts: list[Mount] = field(default_factory=list)
    workdir: str = "/work"
    env: dict[str, str] = field(default_factory=dict)  # the whole environment inside: nothing is inherited
    network: bool = False
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class SandboxResult:
    sandbox: str  # "docker" or "bubblewrap": the summary says which one ran
    exit_code: int | None  # None when it was killed
    stdout: str
    stderr: str
    timed_out: bool = False
    out_of_memory: bool = False
    seconds: float = 0.0


class Sandbox(Protocol):
    name: str

    def run(self, request: SandboxRequest) -> SandboxResult: ...


class SandboxUnavailable(Exception):
    """The requested sandbox cannot run here (no engine, no image, no bwrap); the message says why."""
