"""Host side of the worker boundary: one worker process per commit, spoken to in JSON lines.

The host never imports project code. Each worker runs the worker package's `boot` under the
project's interpreter with a fixed PYTHONHASHSEED, in a temporary working directory (also its
HOME and TMPDIR: the only folder the project's code may change there), with the checkout's
import roots on its path. The messages are those of the worker's `protocol`;
replies are decoded here, once, into its types (`SequenceResult`, `ExecutedLines`).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..changes.environment import project_environment
from ..changes.model import ChangeSet, Checkout
from ..errors import SetupError
from ..runtime.sequence import CallSequence
from ..worker.boot import OLDEST, TOO_OLD, TOO_OLD_STATUS
from ..worker.protocol import (
    CHECKOUT,
    DUMP_SIGNAL,
    PROTOCOL,
    TEMPORARY,
    WORKER_DEFAULTS,
    ExecutedLines,
    RunRequest,
    SequenceResult,
)

BOOT = Path(__file__).parents[1] / "worker" / "boot.py"


class WorkerError(RuntimeError):
    """The worker process died or answered with an error."""


class WorkerTimeout(WorkerError):
    """The worker did not answer in time; `stacks` is where its threads were when it was stopped."""

    def __init__(self, message: str, stacks: str) -> None:
        super().__init__(message)
        self.stacks = stacks


@dataclass(frozen=True)
class WorkerOptions:
    """How a worker runs: under the project's interpreter, with the run's timeouts (each declared
    with the deadline)."""

    python: str
    call_timeout: float  # a call that runs longer hangs
    sequence_timeout: float  # a sequence that runs longer hangs
    start_timeout: float  # for importing the changed modules and listing the catalog
    request_timeout: float  # for a request, plus `sequence_timeout` per sequence in it
    quit_timeout: float  # for ending when asked, before it is killed
    memory_mb: int = 2048
    # the techniques with a part in the worker that are on (`protocol.WORKER_TECHNIQUES`): the worker
    # is sent their names, and each reads its own
    techniques: frozenset[str] = WORKER_DEFAULTS


@dataclass(frozen=True)
class Additions:
    """What the catalog lists beyond the changed modules' API, decided from the change."""

    direct: tuple[str, ...] = ()  # changed private functions and methods, operations of their own
    subclassed: tuple[str, ...] = ()  # classes whose subclass with nothing of its own is built too
    class_values: tuple[str, ...] = ()  # class-level values a changed class body binds, read as tables
    # module table -> literals of the keys or indices of its entries the change is in (`changes.tables`)
    changed_entries: Mapping[str, list[list]] = field(default_factory=dict)


class Worker:
    """A worker process importing one commit's code."""

    def __init__(self, checkout: Checkout, changes: ChangeSet, side: str, hash_seed: int,
                 options: WorkerOptions, additions: Additions = Additions()) -> None:
        self.checkout = checkout
        self.side = side
        self.hash_seed = hash_seed
        self.quit_timeout = options.quit_timeout
        self._tmp = tempfile.mkdtemp(prefix=f"difforacle-{side}-")
        self._stderr = open(Path(self._tmp) / "worker.stderr", "w+b")  # noqa: SIM115 - closed in close()
        env = worker_environment(checkout, hash_seed, self._tmp)
        try:
            self._process = subprocess.Popen(
                [options.python, "-X", "faulthandler", str(BOOT)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=self._stderr, cwd=self._tmp, env=env)
        except OSError as exc:
            self.close()
            raise SetupError(f"cannot start the interpreter {options.python!r}: {exc.strerror}; "
                             "pass --python PATH to one that can import the project") from None
        self._replies: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read_replies, daemon=True).start()
        self.sequence_timeout, self.request_timeout = options.sequence_timeout, options.request_timeout
        units, lines = _change_maps(checkout, changes, side)
        try:
            reply = self.request({
                "cmd": "init", "protocol": PROTOCOL, "roots": [str(r) for r in checkout.import_roots],
                "modules": [*changes.modules, *changes.importers], "units": units, "lines": lines,
                "direct": list(additions.direct), "subclassed": list(additions.subclassed),
                "class_values": list(additions.class_values),
                "changed_entries": {table: list(keys) for table, keys in additions.changed_entries.items()},
                "techniques": sorted(options.techniques),
                "coverage_path": _coverage_only_path(self._tmp),
                "placeholders": placeholders(checkout, self._tmp),
                "call_timeout": options.call_timeout, "sequence_timeout": options.sequence_timeout,
                "memory_mb": options.memory_mb,
            }, timeout=options.start_timeout)
        except SetupError:
            self.close()
            raise
        except WorkerTimeout as exc:
            self.close()
            hang = _import_hang(side, checkout, options.start_timeout, exc.stacks)
            raise SetupError(hang) from None
        except WorkerError as exc:
            failed = str(exc).startswith(f"{side} worker failed")  # it answered: it is running
            exited = None if failed else self._exit_status()
            stderr = self._stderr_tail()
            self.close()
            if exited is not None:
                unstartable = _unstartable(options.python, exited, stderr)
                if unstartable is not None:
                    raise SetupError(unstartable) from None
            last = str(exc).splitlines()[-1]
            advice = ("; pass --python with an interpreter that has the project's dependencies"
                      if _missing_module(last) else "")
            raise SetupError(f"the {side} commit's code could not be imported with {options.python}: "
                             f"{last}{advice}") from None
        self.catalog: dict = reply["catalog"]
        self.unwrapped: list[str] = reply.get("unwrapped", [])  # changed units without hit detection
        self.at_import = ExecutedLines.from_json(reply.get("at_import", {}))  # what the imports ran
        coverage = reply.get("coverage", {})
        self.coverage_version: str | None = coverage.get("version")
        self.coverage_error: str | None = coverage.get("error")

    def _exit_status(self, wait: float = 5.0) -> int | None:
        """The worker's exit status once it has ended; None if it is still running after `wait`
        seconds. Its output closes a moment before it can be reaped: poll() alone races that."""
        try:
            return self._process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def _read_replies(self) -> None:
        """Reader thread: lets `request` wait with a timeout; an empty line means the worker is gone."""
        assert self._process.stdout
        for line in self._process.stdout:
            self._replies.put(line)
        self._replies.put(b"")

    def request(self, message: dict, timeout: float) -> dict:
        if self._process.poll() is not None:
            raise WorkerError(f"{self.side} worker exited: {self._stderr_tail()}")
        assert self._process.stdin
        try:
            self._process.stdin.write((json.dumps(message) + "\n").encode())
            self._process.stdin.flush()
            line = self._replies.get(timeout=timeout)
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError(f"{self.side} worker is gone ({exc}): {self._stderr_tail()}") from None
        except queue.Empty:
            stacks = self._stacks()
            self._process.kill()
            raise WorkerTimeout(f"{self.side} worker did not answer within {timeout:g} s", stacks) from None
        if not line:
            raise WorkerError(f"{self.side} worker exited: {self._stderr_tail()}")
        reply = json.loads(line)
        if not reply.get("ok"):
            if reply.get("protocol", PROTOCOL) != PROTOCOL:
                raise SetupError(f"the difforacle worker speaks {reply['protocol']!r}, not {PROTOCOL!r}: "
                                 "reinstall difforacle (its files are from two versions)")
            detail = f"{reply.get('error')}\n{reply.get('traceback', '')}"
            raise WorkerError(f"{self.side} worker failed: {detail}")
        return reply

    def run(self, sequences: Sequence[CallSequence], random_seed: int, *, isolate: bool = False,
            callees: bool = False, lines: bool = False, fields: bool = False,
            disabled_observers: Sequence[str] = (),
            influence: Sequence[dict | None] | None = None,
            paths: dict[str, list[int]] | None = None, distances: bool = False) -> list[SequenceResult]:
        """`influence`: per sequence, what to record for the dynamic influence check (or None).
        `paths` (with `lines`): file -> lines whose outgoing arcs each sequence reports (its path).
        `distances`: each sequence's branch distances on changed conditions (a worker started
        with `divergence`)."""
        request: RunRequest = {"cmd": "run", "sequences": list(sequences), "random_seed": random_seed,
                               "isolate": isolate, "callees": callees, "lines": lines, "fields": fields,
                               "disabled_observers": list(disabled_observers)}
        if lines and paths:
            request["paths"] = paths
        if influence is not None and any(spec is not None for spec in influence):
            request["influence"] = list(influence)
        if distances:
            request["distances"] = True
        timeout = self.request_timeout + self.sequence_timeout * len(sequences)
        reply = self.request(dict(request), timeout=timeout)
        return [SequenceResult.from_json(record) for record in reply["results"]]

    def ask_to_quit(self) -> None:
        """Send `quit` without waiting for the worker to end (`close` waits)."""
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None and process.stdin and not process.stdin.closed:
            try:
                process.stdin.write(b'{"cmd": "quit"}\n')
                process.stdin.close()
            except OSError:
                pass

    def close(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            self.ask_to_quit()
            try:
                process.wait(timeout=self.quit_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._stderr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _stacks(self) -> str:
        """Every thread's stack, as the worker writes it when asked (faulthandler), or ""."""
        self._stderr.flush()
        start = self._stderr.seek(0, os.SEEK_END)
        try:
            os.kill(self._process.pid, DUMP_SIGNAL)
        except OSError:
            return ""
        for _ in range(20):  # the dump is written by the interpreter between two bytecodes
            time.sleep(0.05)
            self._stderr.seek(start)
            written = self._stderr.read().decode("utf-8", "replace")
            if "most recent call first" in written and written.endswith("\n"):
                return written
        return ""

    def _stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return text or "no error output"

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _unstartable(python: str, status: int, stderr: str) -> str | None:
    """The message for an interpreter that ended before the worker could answer, when it is not
    the project's code that failed (no traceback): too old for the worker (`boot.TOO_OLD`), or
    unable to start at all (a pyenv shim whose version is not installed, a broken venv). None: the
    project's import crashed it, which the caller reports as such."""
    lines = stderr.splitlines() or [""]
    too_old = next((line for line in lines if line.startswith(TOO_OLD)), None)
    if too_old is not None and status == TOO_OLD_STATUS:
        version = too_old[len(TOO_OLD):].strip()
        oldest = ".".join(map(str, OLDEST))
        return (f"{python} is Python {version}; the project's interpreter must be Python {oldest} or later: "
                "pass --python PATH to one that can import the project")
    if "Traceback (most recent call last)" in stderr or "Fatal Python error" in stderr:
        return None
    said = "" if stderr == "no error output" else f": {lines[-1].strip()[:300]}"
    return (f"the interpreter {python} could not start the difforacle worker (exit status {status}{said}); "
            f"pass --python PATH to a Python {'.'.join(map(str, OLDEST))}+ interpreter that can import "
            "the project")


MAX_JOBS = 8  # workers exploring on base by default, at most: each holds the project in memory


def usable_cores() -> int:
    """The cores this process may run on (its affinity, which a container or `taskset` narrows),
    at most MAX_JOBS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores))


class WorkerPool:
    """The run's worker processes: started in parallel (each spends its start-up importing the
    project), all closed when the run ends, whatever happened."""

    def __init__(self, changes: ChangeSet, additions: Additions = Additions()) -> None:
        self.changes, self.additions = changes, additions
        self.workers: list[Worker] = []

    def start(self, *specs: tuple[Checkout, str, int, WorkerOptions]) -> list[Worker]:
        """One worker per (checkout, side, hash seed, options), in that order."""
        def start_one(checkout: Checkout, side: str, hash_seed: int, options: WorkerOptions) -> Worker:
            worker = Worker(checkout, self.changes, side, hash_seed, options, self.additions)
            self.workers.append(worker)
            return worker

        with ThreadPoolExecutor(len(specs)) as pool:
            futures = [pool.submit(start_one, *spec) for spec in specs]
            return [future.result() for future in futures]

    def close(self) -> None:
        """Every worker told to quit at once, then waited for: one busy worker's seconds are not
        paid once per worker."""
        for worker in self.workers:
            worker.ask_to_quit()
        for worker in self.workers:
            worker.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _missing_module(error: str) -> bool:
    """The worker's error says a module is missing: the interpreter lacks a dependency."""
    return error.startswith(("ModuleNotFoundError", "ImportError"))


def _import_hang(side: str, checkout: Checkout, timeout: float, stacks: str) -> str:
    """What a worker that did not finish importing was doing: the module it was importing and the
    innermost line of the project's it was at (from its threads' stacks), never a guess."""
    frames = _main_thread_frames(stacks)
    root = str(checkout.root) + os.sep
    project = [(file, line, function) for file, line, function in frames if file.startswith(root)]
    message = f"the {side} worker did not finish importing the changed modules within {timeout:.0f} s"
    if not project:
        return (f"{message} (it did not say where it was); the run stopped there. A module that waits when "
                "imported (on the network, a lock, input) cannot be tested this way")
    file, line, function = project[0]
    relative = file.removeprefix(root)
    importing = next((f.removeprefix(root) for f, _, fn in project if fn == "<module>"), relative)
    where = f"{relative}:{line} in {function}"
    if frames[0][0] != file:
        inner_file, inner_line, inner_function = frames[0]
        where += f", waiting in {Path(inner_file).name}:{inner_line} ({inner_function})"
    return (f"{message}: it was importing {importing}, at {where}; the run stopped there. A module that "
            "waits when imported (on the network, a lock, input) cannot be tested this way")


def _main_thread_frames(stacks: str) -> list[tuple[str, int, str]]:
    """(file, line, function) of the thread that handled the dump (the main one), innermost first."""
    blocks = stacks.split("\n\n")
    current = next((block for block in blocks if block.lstrip().startswith("Current thread")), "")
    frames = []
    for match in re.finditer(r'File "([^"]+)", line (\d+) in (\S+)', current):
        frames.append((match.group(1), int(match.group(2)), match.group(3)))
    return frames


def placeholders(checkout: Checkout, tmp: str) -> list[list[str]]:
    """The run's own folders and what the observer writes in their place (each as given and
    resolved: a temporary folder may be reached through a symbolic link)."""
    folders = {CHECKOUT: str(checkout.root), TEMPORARY: tmp}
    return [[form, placeholder] for placeholder, folder in folders.items()
            for form in dict.fromkeys((os.path.abspath(folder), os.path.realpath(folder)))]


def worker_environment(checkout: Checkout, hash_seed: int, tmp: str) -> dict[str, str]:
    """The environment of the project's interpreter: the allow-list (`changes.environment`, never a
    token), the checkout on its path, a scratch home."""
    env = project_environment(checkout.pass_env)
    env.update({
        "PYTHONHASHSEED": str(hash_seed),
        "PYTHONPATH": os.pathsep.join(str(r) for r in checkout.import_roots),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "HOME": tmp,
        "TMPDIR": tmp,
        "PYTHONIOENCODING": "utf-8",
    })
    return env


def _coverage_only_path(tmp: str) -> str | None:
    """A directory holding only (a link to) the host's coverage.py package, for a worker whose
    interpreter lacks one: appending it to the worker's path exposes nothing else of ours."""
    try:
        import coverage
    except ImportError:
        return None
    folder = Path(tmp) / "coverage-only"
    folder.mkdir(exist_ok=True)
    link = folder / "coverage"
    if not link.exists():
        link.symlink_to(Path(coverage.__file__).parent, target_is_directory=True)
    return str(folder)


def _change_maps(checkout: Checkout, changes: ChangeSet, side: str) -> tuple[list, dict]:
    """The changed function/method units that exist on `side`, and absolute file -> changed lines."""
    absent = "added" if side == "base" else "removed"
    units = sorted({(u.module, u.qualname) for u in changes.units
                    if u.kind in ("function", "method") and u.status != absent})
    lines: dict[str, list[int]] = {}
    for change in changes.files:
        path = change.base_path if side == "base" else change.head_path
        found = change.base_lines if side == "base" else change.head_lines
        if path and found:
            lines[str(checkout.root / path)] = sorted(found)
    return [list(u) for u in units], lines
