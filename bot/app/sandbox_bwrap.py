"""BubblewrapSandbox: namespaces and rlimits, for hosts without a Docker engine.

bwrap gives the run its own mount, pid, ipc, uts, cgroup and network namespaces and a new root
holding only: the system's /usr (and the /bin, /lib links), the few /etc files the dynamic
linker and Python need (certificates only for a request with egress; passwd, group and hosts
are written fresh), the worker's Python installation read-only, the request's mounts, a fresh
/proc and /dev, and tmpfs for /tmp and HOME. The root itself is read-only. The environment is
exactly the request's (plus PATH and HOME defaults).

The network namespace is always the sandbox's own, with only a loopback: a request with egress
(the dependency step) reaches out through the allow-listing proxy's socket alone (`egress.py`),
never this machine's services on 127.0.0.1, the local network or a cloud metadata address.

Limits: a cgroup of the run's own (`cgroups.py`) caps its total memory and its processes, where
the worker may make one (as root, or in a delegated subtree); rlimits, set by `prlimit` before
bwrap starts (no preexec_fn: the worker has threads, and fork-then-Python in a threaded process
can deadlock), cap address space per process, CPU seconds, file size, no core dumps, and, without
a cgroup, the processes of the sandbox's uid. CPUs by `taskset`. The wall clock kills bwrap, and
with it (--die-with-parent, the pid namespace) everything inside; the cgroup is emptied after.

A non-root worker runs bwrap in a user namespace of its own uid and forbids nested ones. A root
worker cannot rely on rlimits (root ignores RLIMIT_NPROC), so bwrap runs without a user
namespace and `setpriv` drops the sandboxed command to SANDBOX_UID with no capabilities and
no-new-privileges.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import math
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from functools import cache
from pathlib import Path

from .cgroups import RunCgroup, find_root, sweep_stale
from .sandbox import (
    SANDBOX_HOME,
    SANDBOX_HOSTNAME,
    STOP_POLL,
    Limits,
    OutputCap,
    SandboxError,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
    egress_parts,
    handed_over,
    sandbox_ids,
)

SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf",
             "mime.types")
ETC_CERTIFICATES = ("ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies")
log = logging.getLogger("difforacle.app")
MB = 1024 * 1024
SETUP_FAILURE = "bwrap: loopback: "  # bwrap's own message when it cannot bring up the sandbox's loopback
SETUP_RETRIES = 2
# the run's first process enters its cgroup(s), named before `--`, then becomes the rest
ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
# how a process says it could not get memory (RLIMIT_AS makes allocations fail instead of OOM kills)
OUT_OF_MEMORY = re.compile(rb"MemoryError|Cannot allocate memory|std::bad_alloc|[Oo]ut of memory")


class BubblewrapSandbox:
    """Runs requests under bwrap with the worker's own Python installation mounted read-only."""

    name = "bubblewrap"

    def __init__(self) -> None:
        self.tools = _tools()
        self.python = sys.executable
        self.as_root = os.geteuid() == 0
        self.cgroups, reason = find_root()
        if self.cgroups is not None and (swept := sweep_stale(self.cgroups)):
            log.info("removed %d cgroups of bubblewrap runs whose worker has gone", swept)
        if self.cgroups is None:
            log.warning("bubblewrap runs get no cgroup of their own (%s): memory is capped per process "
                        "and processes per uid, so one job's fork bomb can starve the jobs beside it", reason)
        probe = self.run(SandboxRequest(argv=["true"], workdir="/", limits=Limits(wall_seconds=30)))
        if probe.exit_code != 0:
            detail = (probe.stderr.strip().splitlines() or [probe.outcome])[-1]
            raise SandboxUnavailable(f"bwrap cannot create a sandbox here ({detail}); it needs user "
                                     "namespaces (or root), which some container runtimes and AppArmor "
                                     "policies forbid")

    def run(self, request: SandboxRequest) -> SandboxResult:
        """Run the request; once more when bwrap itself failed to set the sandbox up (its loopback
        device, under load: the command never started, so running it again repeats nothing)."""
        result = self._run_once(request)
        for attempt in range(SETUP_RETRIES):
            if not (result.exit_code == 1 and result.stderr.startswith(SETUP_FAILURE)):
                break
            log.warning("bwrap could not set the sandbox up (%s); trying again", result.stderr.strip())
            time.sleep(0.2 * (attempt + 1))
            result = self._run_once(request)
        return result

    def _run_once(self, request: SandboxRequest) -> SandboxResult:
        cgroup = self._cgroup(request.limits)
        files = _etc_files(*sandbox_ids())
        info_read, info_write = os.pipe()  # bwrap writes the sandbox's pid 1 there
        try:
            argv = self._argv(request, files, info_write, cgroup)
            with handed_over(request.mounts):
                result = self._run(argv, request.limits, list(files.values()), info_read, info_write,
                                   request.stop)
            if cgroup and not (result.timed_out or result.cancelled) and cgroup.out_of_memory():
                # the kernel killed a process of the run for the cap: the run was killed if that was its first
                killed = result.exit_code == 128 + signal.SIGKILL
                result = replace(result, exit_code=None if killed else result.exit_code, out_of_memory=True)
            return result
        finally:
            for fd in files.values():
                os.close(fd)
            if cgroup:
                cgroup.remove()

    def _cgroup(self, limits: Limits) -> RunCgroup | None:
        if self.cgroups is None:
            return None
        cgroup = RunCgroup(self.cgroups, limits.memory_mb, limits.pids)
        try:
            cgroup.create()
        except OSError as exc:
            log.warning("cannot make the run's cgroup (%s); it runs under rlimits alone", exc)
            cgroup.remove()
            return None
        return cgroup

    def _argv(self, request: SandboxRequest, etc_fds: dict[str, int], info_fd: int,
              cgroup: RunCgroup | None = None) -> list[str]:
        limits = request.limits
        tools = self.tools
        argv = [tools["sh"], "-c", ENTER_CGROUP, "sh", *cgroup.procs_files(), "--"] if cgroup else []
        argv += [tools["prlimit"], f"--as={limits.memory_mb * MB}",
                 *([] if cgroup else [f"--nproc={limits.pids}"]),  # the cgroup counts this run's alone
                 f"--cpu={math.ceil(limits.wall_seconds) + 5}", f"--fsize={limits.file_mb * MB}", "--core=0",
                 "--nofile=4096", "--"]
        cpus = _cpu_list(limits.cpus)
        if cpus:
            argv += [tools["taskset"], "--cpu-list", cpus]
        argv += [tools["bwrap"], *self._namespaces(), "--die-with-parent", "--new-session",
                 "--hostname", SANDBOX_HOSTNAME, "--info-fd", str(info_fd), "--clearenv"]
        command, egress_mounts = egress_parts(request, self.python)
        env = {"PATH": f"{Path(self.python).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": SANDBOX_HOME,
               **request.env}
        for key, value in env.items():
            argv += ["--setenv", key, value]
        mounted = replace(request, mounts=[*request.mounts, *egress_mounts])
        argv += _filesystem(mounted, etc_fds, _python_dirs(), tools["size"])
        argv += ["--chdir", request.workdir, "--"]
        if self.as_root:
            uid, gid = sandbox_ids()
            argv += [tools["setpriv"], f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--no-new-privs",
                     "--inh-caps=-all", "--bounding-set=-all", "--"]
        return argv + command

    def _namespaces(self) -> list[str]:
        if self.as_root:  # no user namespace: setpriv needs real uids; caps only for setpriv's switch
            spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
                      "--unshare-net"]
            return [*spaces, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                    "--cap-add", "CAP_SETPCAP"]
        spaces = ["--unshare-all", "--unshare-user"]
        return spaces + (["--disable-userns"] if self.tools["disable-userns"] else [])

    def _run(self, argv: list[str], limits: Limits, fds: list[int], info_read: int, info_write: int,
             stop: threading.Event | None = None) -> SandboxResult:
        """Runs bwrap to its end, the deadline or `stop`; closes both ends of the info pipe."""
        stdout, stderr = OutputCap(limits.output_bytes), OutputCap(limits.output_bytes)
        info = OutputCap(4096)
        started = time.monotonic()
        deadline = started + limits.wall_seconds
        try:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, env={}, cwd="/", start_new_session=True,
                                       pass_fds=[*fds, info_write])
        except OSError as exc:
            os.close(info_read)
            raise SandboxError(f"cannot start bwrap: {exc}") from None
        finally:
            os.close(info_write)  # bwrap has its own copy: EOF once it has gone
        timed_out = cancelled = False
        try:
            streams = {process.stdout: stdout, process.stderr: stderr, info_read: info}
            ended = _collect(streams, deadline, stop)
            timed_out, cancelled = ended == "deadline", ended == "stopped"
            if ended == "read":
                try:
                    process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            if timed_out or cancelled or process.poll() is None:
                _kill(process, info)
            process.wait()
            for pipe in (process.stdout, process.stderr):
                if pipe:
                    pipe.close()
            os.close(info_read)
        seconds = time.monotonic() - started
        code = process.returncode if process.returncode >= 0 else 128 - process.returncode
        oom = not (timed_out or cancelled) and code != 0 and bool(OUT_OF_MEMORY.search(stderr.tail))
        return SandboxResult(sandbox=self.name, exit_code=None if timed_out or cancelled else code,
                             stdout=stdout.text(), stderr=stderr.text(), timed_out=timed_out,
                             out_of_memory=oom, seconds=round(seconds, 3),
                             truncated=bool(stdout.dropped or stderr.dropped), cancelled=cancelled)


def _sandbox_pid(info: OutputCap) -> int | None:
    found = re.search(rb'"child-pid"\s*:\s*(\d+)', b"".join(info.chunks))
    return int(found.group(1)) if found else None


@cache
def _tools() -> dict:
    """Absolute paths of the programs the sandbox needs, and what this bwrap supports."""
    tools: dict = {}
    needed = {"bwrap": "bubblewrap", "prlimit": "util-linux", "taskset": "util-linux", "sh": "dash"}
    if os.geteuid() == 0:
        needed["setpriv"] = "util-linux"
    for program, package in needed.items():
        path = shutil.which(program)
        if not path:
            raise SandboxUnavailable(f"{program} is not installed (apt-get install {package})")
        tools[program] = path
    try:
        usage = subprocess.run([tools["bwrap"], "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"bwrap does not run: {exc}") from None
    tools["size"] = "--size" in usage
    tools["disable-userns"] = "--disable-userns" in usage
    return tools


def _filesystem(request: SandboxRequest, etc_fds: dict[str, int], python_dirs: list[str],
                sized: bool) -> list[str]:
    """bwrap arguments for the new root: tmpfs first (mounts may lie inside /tmp), then the binds."""
    size = ["--size", str(request.limits.tmp_mb * MB)] if sized else []
    args = ["--proc", "/proc", "--dev", "/dev", *size, "--tmpfs", "/tmp", "--perms", "0755", "--dir", "/home",
            *size, "--tmpfs", SANDBOX_HOME, "--chmod", "1777", "/tmp", "--chmod", "1777", SANDBOX_HOME]
    for name in SYSTEM_DIRS:
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    etc = [name for name in ETC_FILES + (ETC_CERTIFICATES if request.egress else ()) if name not in etc_fds]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in etc:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for name, fd in etc_fds.items():
        args += ["--perms", "0644", "--ro-bind-data", str(fd), f"/etc/{name}"]
    binds = [(d, d, True) for d in python_dirs]
    binds += [(str(m.source), m.target, m.read_only) for m in request.mounts]
    taken = ["/usr", *(target for _, target, _ in binds)]
    workdir = f"{request.workdir.rstrip('/')}/-"  # its parents include it: created unless mounted
    for parent in _parents([*(target for _, target, _ in binds), workdir], taken):
        if parent not in ("/tmp", SANDBOX_HOME):  # the tmpfs themselves; what lies inside them is made
            # here: bwrap would make it 0700 (a checkout under /tmp), or copy a private mode (/root)
            args += ["--perms", "0755", "--dir", parent]
    for source, target, read_only in binds:
        if not Path(source).exists():
            raise SandboxError(f"the mount source {source} does not exist")
        args += ["--ro-bind" if read_only else "--bind", source, target]
    return [*args, "--remount-ro", "/"]


def _parents(targets: list[str], taken: list[str]) -> list[str]:
    """The directories to create above the bind targets, outermost first, except inside other mounts."""
    parents = {str(p) for target in targets for p in Path(target).parents if str(p) != "/"}
    inside = {p for p in parents if any(p == t or p.startswith(t.rstrip("/") + "/") for t in taken)}
    return sorted(parents - inside, key=lambda p: (p.count("/"), p))


@cache
def _python_dirs() -> list[str]:
    """The worker's Python installation and difforacle's packages (an editable install lives elsewhere)."""
    candidates = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix,
                  str(Path(sys.executable).resolve().parent.parent)}
    for package in ("difforacle.bot", "difforacle.generator"):
        spec = importlib.util.find_spec(package)
        candidates |= set(spec.submodule_search_locations or []) if spec else set()
    real = sorted({os.path.realpath(c) for c in candidates if c and Path(c).is_dir()})
    outside = [d for d in real if d != "/" and not any(d == f"/{s}" or d.startswith(f"/{s}/")
                                                       for s in SYSTEM_DIRS)]
    return [d for d in outside if not any(d != o and d.startswith(o + "/") for o in outside)]


def _etc_files(uid: int, gid: int) -> dict[str, int]:
    """Read-only /etc files written for the sandbox (the host's list users and hosts), as memfds."""
    contents = {
        "passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:{uid}:{gid}:sandbox:{SANDBOX_HOME}:"
                  "/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nsandbox:x:{gid}:\nnogroup:x:65534:\n",
        "hosts": f"127.0.0.1\tlocalhost {SANDBOX_HOSTNAME}\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    }
    fds = {}
    for name, text in contents.items():
        fd = os.memfd_create(f"sandbox-{name}")  # close-on-exec: only bwrap gets it (pass_fds)
        os.write(fd, text.encode())
        os.lseek(fd, 0, os.SEEK_SET)
        fds[name] = fd
    return fds


def _cpu_list(cpus: float) -> str:
    """The first ceil(cpus) CPUs this process may use, as taskset's list; '' when that is all of them."""
    allowed = sorted(os.sched_getaffinity(0))
    wanted = max(1, math.ceil(cpus))
    return "" if wanted >= len(allowed) else ",".join(str(c) for c in allowed[:wanted])


def _collect(streams: dict, deadline: float, stop: threading.Event | None = None) -> str:
    """Read the pipes to their end, capped: "read", or "deadline" when the deadline came first, or
    "stopped" when `stop` was set first."""
    selector = selectors.DefaultSelector()
    for pipe, cap in streams.items():
        os.set_blocking(pipe if isinstance(pipe, int) else pipe.fileno(), False)
        selector.register(pipe, selectors.EVENT_READ, cap)
    try:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "deadline"
            if stop is not None and stop.is_set():
                return "stopped"
            for key, _ in selector.select(timeout=remaining if stop is None else min(remaining, STOP_POLL)):
                try:
                    data = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if data:
                    key.data.add(data)
                else:
                    selector.unregister(key.fileobj)
        return "read"
    finally:
        selector.close()


def _kill(process: subprocess.Popen, info: OutputCap) -> None:
    """Kill the sandbox's pid 1: the kernel kills everything in its pid namespace and pid 1 only
    finishes exiting (so bwrap only returns) once they are all gone, which keeps a fork bomb's
    processes from counting against the next run's RLIMIT_NPROC. bwrap's group is the fallback."""
    child = _sandbox_pid(info)
    if child is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(child, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
            return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
