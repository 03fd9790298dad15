"""DockerSandbox: each run is a fresh container, removed afterwards whatever happens.

The container has no network (a request with egress reaches the allow-listing proxy's socket,
mounted in, and nothing else: `egress.py`), a read-only root, tmpfs for
/tmp and HOME, memory (swap included), pids and CPU limits, a non-root user, no capabilities,
no-new-privileges, and only the request's mounts and environment. Output is streamed from the
attach socket and capped while it arrives (the log driver is off, so a flood never reaches the
daemon's disk). The wall clock is enforced twice: here (kill, report timed_out) and inside the
container by `timeout`, so a container whose worker died still ends on its own.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Ulimit
from docker.types import Mount as DockerMount

from .sandbox import (
    SANDBOX_HOME,
    SANDBOX_HOSTNAME,
    STOP_POLL,
    OutputCap,
    SandboxError,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
    egress_parts,
    handed_over,
    sandbox_ids,
)

LABEL = "difforacle.sandbox"  # every container we create carries it: tests and clean-up find them by it
IMAGE_PYTHON = "/opt/difforacle/bin/python"  # the venv the Dockerfile installs difforacle into
GUARD_SECONDS = 30  # the in-container `timeout` fires this long after our own kill should have
KILLED_STATUS = 137  # 128 + SIGKILL
MB = 1024 * 1024
log = logging.getLogger(__name__)


class DockerSandbox:
    """Runs requests in containers of `image` through the Docker engine the environment names."""

    name = "docker"
    python = IMAGE_PYTHON

    def __init__(self, image: str, client: docker.DockerClient | None = None) -> None:
        self.image = image
        self.client = client or _connect()
        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"the Docker engine has no image {image!r}: build it with `difforacle app build-image "
                f"--tag {image}` (or `docker build -t {image} .` in difforacle's source tree)") from None
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxUnavailable(f"cannot inspect the image {image!r}: {exc}") from None

    def run(self, request: SandboxRequest) -> SandboxResult:
        with handed_over(request.mounts):
            container = self._create(request)
            try:
                return self._run(container, request)
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                raise SandboxError(f"the Docker engine failed while running the sandbox: {exc}") from None
            finally:
                _remove(container)

    def _create(self, request: SandboxRequest) -> Any:
        limits = request.limits
        uid, gid = sandbox_ids()
        tmpfs_options = f"rw,exec,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"
        guard = ["timeout", "--signal=KILL", str(math.ceil(limits.wall_seconds) + GUARD_SECONDS)]
        command, egress_mounts = egress_parts(request, self.python)
        try:
            return self.client.containers.create(
                self.image,
                command=command,
                entrypoint=guard,
                name=f"difforacle-sandbox-{uuid.uuid4().hex[:12]}",
                labels={LABEL: f"{socket.gethostname()}:{os.getpid()}"},
                hostname=SANDBOX_HOSTNAME,
                user=f"{uid}:{gid}",
                working_dir=request.workdir,
                environment={"HOME": SANDBOX_HOME, **request.env},
                network_mode="none",
                read_only=True,
                tmpfs={"/tmp": tmpfs_options, SANDBOX_HOME: tmpfs_options},
                mounts=[DockerMount(m.target, str(m.source), type="bind", read_only=m.read_only)
                        for m in [*request.mounts, *egress_mounts]],
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                pids_limit=limits.pids,
                nano_cpus=int(limits.cpus * 1e9),
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                ulimits=[Ulimit(name="core", soft=0, hard=0), Ulimit(name="nofile", soft=4096, hard=4096),
                         Ulimit(name="fsize", soft=limits.file_mb * MB, hard=limits.file_mb * MB)],
                oom_score_adj=500,  # the host's OOM killer picks a sandbox before the worker
                init=True,  # reaps orphans and passes a crash's signal on as 128+N
                log_config=LogConfig(type=LogConfig.types.NONE),
                stdin_open=False,
                tty=False,
            )
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(f"the Docker engine has no image {self.image!r} any more") from None
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise SandboxError(f"the Docker engine refused the sandbox container: {_explain(exc)}") from None

    def _run(self, container: Any, request: SandboxRequest) -> SandboxResult:
        limits = request.limits
        stdout, stderr = OutputCap(limits.output_bytes), OutputCap(limits.output_bytes)
        stream = self.client.api.attach(container.id, stdout=True, stderr=True, stream=True, demux=True)
        reader = threading.Thread(target=_drain, args=(stream, stdout, stderr), daemon=True)
        reader.start()
        try:
            started = time.monotonic()
            container.start()
            status = _wait(container, limits.wall_seconds, request.stop)
            cancelled = status is None and request.stop is not None and request.stop.is_set()
            timed_out = status is None and not cancelled
            if status is None:
                _kill(container)
                status = _wait(container, 30.0)
            seconds = time.monotonic() - started
            reader.join(timeout=10.0)
        finally:
            stream.close()
        container.reload()
        oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
        killed = timed_out or cancelled or (oom and status == KILLED_STATUS)
        return SandboxResult(sandbox=self.name, exit_code=None if killed else status,
                             stdout=stdout.text(), stderr=stderr.text(), timed_out=timed_out,
                             out_of_memory=oom and not cancelled, seconds=round(seconds, 3),
                             truncated=bool(stdout.dropped or stderr.dropped), cancelled=cancelled)

    def remove_leftovers(self, min_age: float = 3600.0) -> int:
        """Remove stopped sandbox containers older than `min_age` seconds (a killed worker leaves them).

        Running ones are left alone: the in-container `timeout` ends them. Returns how many went.
        """
        removed = 0
        for container in self.client.containers.list(all=True, filters={"label": LABEL, "status": "exited"}):
            finished = container.attrs.get("State", {}).get("FinishedAt", "")
            if _age(finished) >= min_age:
                _remove(container)
                removed += 1
        return removed


def _connect() -> docker.DockerClient:
    """A client for the engine DOCKER_HOST names (default: the local socket), or SandboxUnavailable."""
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise SandboxUnavailable(f"no Docker engine answers at {where} ({_explain(exc)}); start dockerd, "
                                 "or give the worker access to its socket") from None
    return client


def _drain(stream: Any, stdout: OutputCap, stderr: OutputCap) -> None:
    """Read the attach stream to its end, keeping what the caps allow (runs in a thread)."""
    try:
        for out, err in stream:
            if out:
                stdout.add(out)
            if err:
                stderr.add(err)
    except (OSError, ValueError, requests.exceptions.RequestException, docker.errors.DockerException):
        pass  # the stream closes under us when the container is killed or removed


def _wait(container: Any, seconds: float, stop: threading.Event | None = None) -> int | None:
    """The exit status, or None if the container still runs after `seconds` or once `stop` is set
    (looked at every STOP_POLL seconds)."""
    deadline = time.monotonic() + max(seconds, 0.1)
    while True:
        remaining = deadline - time.monotonic()
        step = remaining if stop is None else min(remaining, STOP_POLL)
        try:
            return int(container.wait(timeout=max(step, 0.1))["StatusCode"])
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            container.reload()
            if container.status in ("exited", "dead"):
                return int(container.attrs["State"]["ExitCode"])
        if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
            return None


def _kill(container: Any) -> None:
    try:
        container.kill()
    except docker.errors.APIError as exc:
        if exc.status_code not in (404, 409):  # gone, or already stopped
            raise


def _remove(container: Any) -> None:
    """Force-remove, retried once; a failure is logged, not raised (remove_leftovers reaps it later)."""
    for attempt in range(2):
        try:
            container.remove(force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            if attempt:
                log.warning("could not remove sandbox container %s: %s", container.name, _explain(exc))
                return
            time.sleep(1.0)


def _age(timestamp: str) -> float:
    try:
        finished = datetime.fromisoformat(timestamp[:26].rstrip("Z") + "+00:00")
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - finished).total_seconds()


def _explain(exc: Exception) -> str:
    if isinstance(exc, docker.errors.APIError) and exc.explanation:
        return str(exc.explanation)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
