"""A cgroup per bubblewrap run: the run's memory and processes counted and capped on their own.

rlimits are not enough for a shared worker: RLIMIT_AS caps each process, not their sum, and
RLIMIT_NPROC counts every process of the sandbox's uid, so one job's fork bomb leaves the job
beside it (same uid) unable to start a process. A cgroup of the run's own caps its total memory
(swap included) and its process count, and is the place to find and kill what it left behind.

Both layouts are served: cgroup v2 (one hierarchy with the memory and pids controllers) and v1
(a memory and a pids hierarchy). Runs' cgroups are made under the worker's own cgroup, where it
may write: as root, or where its service manager delegated that subtree. Elsewhere `find_root`
answers None with the reason, and the sandbox keeps to rlimits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids")
REMOVE_SECONDS = 5.0  # to kill what a run left behind and remove its cgroup
_SETUP = threading.Lock()  # v2: the runs' folder is made, and its controllers enabled, once


@dataclass(frozen=True)
class CgroupRoot:
    """Where runs' cgroups are made: one folder per controller (v2: the same folder twice)."""

    version: int
    parents: dict[str, Path]


def find_root(mountinfo: str = "/proc/self/mountinfo", membership: str = "/proc/self/cgroup",
              prefix: str = "") -> tuple[CgroupRoot | None, str]:
    """The worker's cgroup(s) with memory and pids, if it may make children there; else the reason.

    `prefix` is prepended to every path read (the tests' fake cgroup trees)."""
    try:
        mounts = Path(prefix + mountinfo).read_text().splitlines()
        groups = Path(prefix + membership).read_text().splitlines()
    except OSError as exc:
        return None, f"cannot read the process's cgroups ({exc})"
    v1: dict[str, tuple[str, str]] = {}  # controller -> (mount point, mount root)
    v2: tuple[str, str] | None = None
    for line in mounts:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        tail = line.split(" - ", 1)[1].split()
        if tail[0] == "cgroup2":
            v2 = (fields[4], fields[3])
        elif tail[0] == "cgroup" and len(tail) >= 3:
            for option in tail[2].split(","):
                if option in CONTROLLERS:
                    v1[option] = (fields[4], fields[3])
    paths: dict[str, str] = {}
    for line in groups:
        _, _, rest = line.partition(":")
        names, _, path = rest.partition(":")
        for name in names.split(",") if names else [""]:
            paths[name] = path
    if v2 and "" in paths:
        own = _inside(prefix, *v2, paths[""])
        try:
            enabled = set((own / "cgroup.controllers").read_text().split())
        except OSError:
            enabled = set()
        if set(CONTROLLERS) <= enabled:
            if os.access(own, os.W_OK):
                return CgroupRoot(2, {c: own / "difforacle-runs" for c in CONTROLLERS}), ""
            return None, f"the cgroup {own} is not writable by this worker (delegate it, or run as root)"
    if all(c in v1 and c in paths for c in CONTROLLERS):
        parents = {c: _inside(prefix, *v1[c], paths[c]) for c in CONTROLLERS}
        unwritable = [str(p) for p in parents.values() if not os.access(p, os.W_OK)]
        if unwritable:
            return None, f"the cgroup {unwritable[0]} is not writable by this worker (run it as root)"
        return CgroupRoot(1, parents), ""
    return None, "no cgroup hierarchy with the memory and pids controllers is mounted"


def _inside(prefix: str, point: str, root: str, path: str) -> Path:
    """The folder of cgroup `path` under a mount of the hierarchy's `root` at `point`."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root):]
    return Path(prefix + point + "/" + path.lstrip("/")).resolve() if path.strip("/") else \
        Path(prefix + point)


class RunCgroup:
    """One run's cgroup: made with its caps, entered by the run's first process, removed after.

    The first process enters by writing its own pid into `procs_files()` (a shell before it execs
    the sandbox: no preexec_fn in a threaded worker), so every process of the run is inside."""

    def __init__(self, root: CgroupRoot, memory_mb: int, pids: int) -> None:
        self.root = root
        name = f"run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs = {c: p / name for c, p in root.parents.items()}
        self.memory_mb, self.pids = memory_mb, pids

    def create(self) -> None:
        """Makes the cgroup(s) and writes the caps; OSError if the kernel refuses."""
        if self.root.version == 2:
            parent = self.root.parents["memory"]
            with _SETUP:
                if not parent.exists():
                    parent.mkdir()
                    _enable(parent.parent)
                    _enable(parent)
            folder = self.dirs["memory"]
            folder.mkdir()
            _write(folder / "memory.max", str(self.memory_mb * 1024 * 1024))
            _write(folder / "memory.swap.max", "0", optional=True)
            _write(folder / "pids.max", str(self.pids))
            return
        for folder in self.dirs.values():
            folder.mkdir()
        memory = self.dirs["memory"]
        _write(memory / "memory.limit_in_bytes", str(self.memory_mb * 1024 * 1024))
        _write(memory / "memory.memsw.limit_in_bytes", str(self.memory_mb * 1024 * 1024), optional=True)
        _write(self.dirs["pids"] / "pids.max", str(self.pids))

    def procs_files(self) -> list[str]:
        return sorted({str(folder / "cgroup.procs") for folder in self.dirs.values()})

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the run for the memory cap."""
        name = "memory.events" if self.root.version == 2 else "memory.oom_control"
        return _counter(self.dirs["memory"] / name, "oom_kill") > 0

    def remove(self) -> None:
        """Kills whatever of the run is left, then removes its cgroup(s); never raises."""
        _empty_and_remove(list(self.dirs.values()))


def _empty_and_remove(folders: list[Path]) -> None:
    deadline = time.monotonic() + REMOVE_SECONDS
    for folder in folders:
        while folder.exists():
            with contextlib.suppress(OSError):
                _write(folder / "cgroup.kill", "1", optional=True)
            for pid in _pids(folder):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            try:
                folder.rmdir()
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    break
                time.sleep(0.05)


def sweep_stale(root: CgroupRoot) -> int:
    """Removes the runs' cgroups a killed worker left: those named for a process that is gone
    (killing what is left in them). Returns how many went."""
    removed = 0
    for parent in {str(p): p for p in root.parents.values()}.values():
        try:
            folders = [f for f in parent.iterdir() if f.is_dir() and f.name.startswith("run-")]
        except OSError:
            continue
        for folder in folders:
            pid = folder.name.split("-")[1]
            if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                _empty_and_remove([folder])
                removed += not folder.exists()
    return removed


def _enable(folder: Path) -> None:
    """Lets `folder`'s children use memory and pids (v2). A folder with processes of its own
    cannot (no internal processes): the worker's own cgroup then has its processes moved into a
    leaf beside the runs' folder first, as a delegated service manager does."""
    control = folder / "cgroup.subtree_control"
    wanted = " ".join(f"+{c}" for c in CONTROLLERS)
    try:
        _write(control, wanted)
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
        leaf = folder / "difforacle-worker"
        leaf.mkdir(exist_ok=True)
        for pid in _pids(folder):
            with contextlib.suppress(ProcessLookupError, OSError):
                _write(leaf / "cgroup.procs", str(pid))
        _write(control, wanted)


def _write(path: Path, value: str, optional: bool = False) -> None:
    try:
        with open(path, "w") as handle:
            handle.write(value)
    except FileNotFoundError:
        if not optional:
            raise


def _pids(folder: Path) -> list[int]:
    try:
        return [int(line) for line in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0
