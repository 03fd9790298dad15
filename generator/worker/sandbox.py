"""Fork isolation for sequences: limits, guards, output capture and crash/hang detection.

The worker process imports the project once; each batch of sequences runs in a forked
child with resource limits, an audit hook that refuses new processes, network connections
and changes to the file system outside the run's own folders, and bounded stdout/stderr. A
child that exits, segfaults or hangs costs one sequence: the parent notes which statement it
was on (a shared counter) and carries on with the rest of the batch in a new child (what a
killed child measured, such as its coverage, is lost with it). Standard library only.
"""

from __future__ import annotations

import gc
import json
import mmap
import os
import resource
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Iterable, Iterator
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


# Python's audit events that change the file system, with where each changed path is in the
# event's arguments: (its position, the position of the folder descriptor a relative path is
# taken from or None, whether the call may follow a symlink at the path's end). os.* paths may be
# open descriptors. A symlink's target is not a change: what is written through it is checked
# where it lands. shutil's events come before any of the os calls they make, so nothing is done
# by halves. The "open" event (checked below) names no folder descriptor: os.open(name,
# dir_fd=...) is judged as if `name` were relative to the working folder.
FILE_SYSTEM_EVENTS: dict[str, tuple[tuple[int, int | None, bool], ...]] = {
    "os.remove": ((0, 1, False),), "os.rmdir": ((0, 1, False),), "os.mkdir": ((0, 2, False),),
    "os.rename": ((0, 2, False), (1, 3, False)), "os.link": ((0, 2, True), (1, 3, False)),
    "os.symlink": ((1, 2, False),), "os.truncate": ((0, None, True),), "os.chmod": ((0, 2, True),),
    "os.chown": ((0, 3, True),), "os.utime": ((0, 3, True),), "os.setxattr": ((0, None, True),),
    "os.removexattr": ((0, None, True),), "os.chflags": ((0, None, True),),
    "os.lchflags": ((0, None, False),), "shutil.rmtree": ((0, 1, True),),
    "shutil.move": ((0, None, False), (1, None, True)), "shutil.copyfile": ((1, None, True),),
    "shutil.copymode": ((1, None, True),), "shutil.copystat": ((1, None, True),),
    "shutil.copytree": ((1, None, True),), "shutil.chown": ((0, None, True),),
    "shutil.make_archive": ((0, None, True),), "shutil.unpack_archive": ((1, None, True),),
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_writable: tuple[str, ...] | None = None  # the real paths of the run's folders; None: not guarded (yet)


def _audit(event: str, args: tuple) -> None:
    if event in BLOCKED_EVENTS:
        raise PermissionError(f"difforacle sandbox: {event} is not allowed while generating tests")
    if _writable is None:
        return
    changes = FILE_SYSTEM_EVENTS.get(event)
    if changes is not None:
        for path_at, dir_fd_at, follows in changes:
            _check_writable(event, _arg(args, path_at), _arg(args, dir_fd_at), follows)
    elif event == "open":  # (path, mode or None for os.open, flags); a descriptor is already open
        path, mode, flags = _arg(args, 0), _arg(args, 1), _arg(args, 2)
        writes = isinstance(mode, str) and any(c in mode for c in "wax+")
        if (writes or (isinstance(flags, int) and flags & WRITE_FLAGS)) and not isinstance(path, int):
            _check_writable(event, path, None, True)


def _arg(args: tuple, at: int | None) -> Any:
    return args[at] if at is not None and at < len(args) else None


def _check_writable(event: str, path: Any, dir_fd: Any, follows: bool) -> None:
    """Refuse a change to `path` unless it lands in the run's folders (or is a write to /dev/null)."""
    try:
        landing: tuple[str, ...] | None = _landing(path, dir_fd, follows)
    except (TypeError, ValueError):  # not a path: the call itself fails, without changing anything
        return
    except OSError:  # a descriptor or working folder that cannot be placed: it could be anywhere
        landing = None
    harmless = (os.devnull,) if event == "open" else ()  # writing to /dev/null changes nothing
    if landing is None or not all(real in harmless or _inside_run_folders(real) for real in landing):
        raise PermissionError(f"difforacle sandbox: {event} outside the run's folders is not allowed: "
                              f"{path!r}")


def _inside_run_folders(real: str) -> bool:
    return any(real == root or real.startswith(root + os.sep) for root in _writable or ())


def _landing(path: Any, dir_fd: Any, follows: bool) -> tuple[str, ...]:
    """The real paths a change to `path` can land on: the last component itself (its folder's
    symlinks resolved) and, when the call may follow it, what it points to."""
    if path is None:  # an optional argument left out (shutil.unpack_archive's extract_dir)
        return ()
    if isinstance(path, int):  # an open descriptor: the file it is open on
        text = os.readlink(f"/proc/self/fd/{path}")
        if not text.startswith("/"):  # a pipe, socket or anonymous inode: not in the file system
            return ()
    else:
        text = os.fsdecode(os.fspath(path))
        if not os.path.isabs(text):
            given = isinstance(dir_fd, int) and dir_fd >= 0  # the events say -1 when there is none
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}") if given else os.getcwd(), text)
    folder, name = os.path.split(text)
    if name in ("", ".", ".."):
        return (os.path.realpath(text),)
    itself = os.path.join(os.path.realpath(folder), name)
    return (itself, os.path.realpath(text)) if follows else (itself,)


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


def run_folders() -> tuple[str, ...]:
    """The folders a sequence may change: the working folder and $TMPDIR, which the host points at
    the run's own temporary folder. Read them before any project code runs: it may move either."""
    return tuple(folder for folder in (os.getcwd(), os.environ.get("TMPDIR", "")) if folder)


def install_audit_hook(writable: Iterable[str] | None) -> None:
    """From now on (audit hooks cannot be removed), refuse new processes, signals and network
    connections, and changes to the file system outside the folders `writable` (from a later
    `guard_file_system` when None). Reading stays allowed."""
    if writable is not None:
        guard_file_system(writable)
    sys.addaudithook(_audit)


def guard_file_system(writable: Iterable[str]) -> None:
    """From now on, the installed hook refuses changes to the file system outside the folders `writable`."""
    global _writable
    _writable = tuple(sorted({os.path.realpath(folder) for folder in writable}))


def _enter_child(memory_mb: int, cpu_seconds: int, writable: tuple[str, ...]) -> None:
    """Limits and guards that only the forked child gets (audit hooks cannot be removed)."""
    apply_limits(memory_mb, cpu_seconds)
    sys.stdout = sys.stderr = BoundedSink()  # type: ignore[assignment]
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the protocol's stdin is not the project's
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the child
    install_audit_hook(writable)


class ChildHooks:
    """What a forked child does before its first item and after its last (nothing here)."""

    def begin(self) -> None:
        pass

    def end(self) -> dict:
        """Extra fields for the child's last result."""
        return {}


class ForkRunner:
    """Runs sequences in forked children and streams back one result per sequence."""

    def __init__(self, memory_mb: int, sequence_timeout: float, writable: tuple[str, ...] = ()) -> None:
        """`writable`: the only folders the children may change (none by default)."""
        self.memory_mb = memory_mb
        self.sequence_timeout = sequence_timeout
        self.writable = writable
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
        # The garbage collector of a child would walk (and so copy, page by page) every object
        # the worker holds: frozen, they are left alone; the child's own garbage is still collected.
        gc.freeze()
        pid = os.fork()
        if pid == 0:  # child
            os.close(read_fd)
            code = 0
            try:
                _enter_child(self.memory_mb, cpu, self.writable)
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
