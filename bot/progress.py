"""The engine's progress as one line of text, on the command line's stderr, and as a small file
another process can watch.

On stderr (`ProgressPrinter`): a terminal gets one status line rewritten in place; a log (a CI
job's, where stderr is no terminal) gets plain lines, at each phase change and every 10 s in
between, and a summary when the run ends, so that it never looks hung and reads well afterwards.

Why a file: the App runs the engine in a sandbox with no network and no way to call back;
the sandbox's output folder is the one thing both sides see. The engine rewrites
`progress.json` there (atomically, at most once a second and on every phase change) and the
worker reads it to update the check run. The file is written inside the sandbox, so the
reader trusts nothing: no links, a few KB at most, a fixed shape, or nothing at all.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from difforacle.generator import NOT_MEASURED, READING_HISTORY, Progress, Report

log = logging.getLogger("difforacle")
MAX_PROGRESS_BYTES = 4096
WRITE_INTERVAL = 1.0  # seconds between rewrites within one phase
WATCH_INTERVAL = 2.0  # seconds between reads by the watcher (the check run throttles itself further)
LOG_INTERVAL = 10.0  # seconds between progress lines in a log (stderr not a terminal)
_PHASE = re.compile(r"[a-z]{1,20}( [a-z]{1,20})?")


def describe(update: Progress) -> str:
    """The line shown on the check run: "exploring: 1200 sequences, 1 differences after 12 s"."""
    return f"{update.phase}: {counts(update)} after {update.elapsed:.0f} s"


def counts(update: Progress) -> str:
    """How far the phase got: "300 commits" while reading history, else "1200 sequences, 1 differences"."""
    if update.phase == READING_HISTORY:
        return f"{update.commits} commits"
    return f"{update.sequences} sequences, {update.differences} differences"


class ProgressPrinter:
    """The command line's `Options.progress` callback: progress on `stream` (stderr).

    A terminal gets one status line rewritten in place. A log gets a line at each phase change and
    one every `interval` seconds between (a thread keeps them coming while the engine is busy
    between updates: importing, carving, confirming), with the changed lines reached once known,
    and `summary` at the end. Use it as a context manager around the run: on leaving, the thread
    stops and a terminal's status line ends.
    """

    def __init__(self, stream: TextIO, interval: float = LOG_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.interval, self.clock = stream, interval, clock
        self.tty = stream.isatty()
        self.started = clock()
        self._latest: Progress | None = None
        self._latest_at = self._printed_at = self.started  # clock readings
        self._lock = threading.Lock()  # the engine's thread and the ticking one both print
        self._stopped = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, update: Progress) -> None:
        with self._lock:
            now = self.clock()
            new_phase = self._latest is None or update.phase != self._latest.phase
            self._latest, self._latest_at = update, now
            if self.tty:  # without the lines reached: a status line longer than a row is not rewritten
                text = _progress_text(update, update.elapsed, lines=False)
                print(f"\r\033[K{text}", end="", file=self.stream, flush=True)
            elif new_phase or now - self._printed_at >= self.interval:
                self._print(update, now)

    def tick(self) -> None:
        """In a log, the latest progress again if `interval` has passed since the last line."""
        with self._lock:
            now = self.clock()
            if self.tty or now - self._printed_at < self.interval:
                return
            if self._latest is None:
                self._printed_at = now  # nothing to show before the first update; look again later
            else:
                self._print(self._latest, now)

    def summary(self, report: Report) -> None:
        """In a log, the run's last line: `difforacle: done in 58.2 s: 10430 sequences, 2
        differences, 14 of 16 changed lines reached` (a terminal shows the report next)."""
        if self.tty:
            return
        coverage = report.coverage
        measured = coverage.measured_by != NOT_MEASURED
        lines = _lines_reached(coverage.changed_lines, coverage.changed_lines_covered) if measured else ""
        print(f"difforacle: done in {self.clock() - self.started:.1f} s: {report.stats.sequences} sequences, "
              f"{len(report.differences)} differences{lines}", file=self.stream, flush=True)

    def _print(self, update: Progress, now: float) -> None:
        elapsed = update.elapsed + now - self._latest_at  # the engine's clock, moved on since the update
        print(_progress_text(update, elapsed), file=self.stream, flush=True)
        self._printed_at = now

    def _tick_until_stopped(self) -> None:
        while not self._stopped.wait(self._until_due()):
            self.tick()

    def _until_due(self) -> float:
        with self._lock:
            return max(0.0, self._printed_at + self.interval - self.clock())

    def __enter__(self) -> ProgressPrinter:
        if not self.tty:
            self._ticker = threading.Thread(target=self._tick_until_stopped, name="progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.tty and self._latest is not None:
            print(file=self.stream)  # ends the status line


def _progress_text(update: Progress, elapsed: float, lines: bool = True) -> str:
    text = f"[{elapsed:5.1f}s] {update.phase}: {counts(update)}"
    return text + (_lines_reached(update.changed_lines, update.changed_lines_covered) if lines else "")


def _lines_reached(changed: int, covered: int) -> str:
    return f", {covered} of {changed} changed lines reached" if changed else ""


class ProgressFile:
    """An `Options.progress` callback that keeps `path` holding the latest progress."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path, self.clock = path, clock
        self._phase, self._written = "", float("-inf")
        self._pending: Progress | None = None  # an update held back by the interval

    def __call__(self, update: Progress) -> None:
        now = self.clock()
        if update.phase == self._phase and now - self._written < WRITE_INTERVAL:
            self._pending = update
            return
        self._write(update, now)

    def flush(self) -> None:
        """Write the update the interval held back: the file ends on the run's last progress."""
        if self._pending is not None:
            self._write(self._pending, self.clock())

    def _write(self, update: Progress, now: float) -> None:
        self._phase, self._written, self._pending = update.phase, now, None
        data = {"phase": update.phase, "sequences": update.sequences, "differences": update.differences,
                "elapsed": round(update.elapsed, 1), "commits": update.commits}
        partial = self.path.with_name(f".{self.path.name}.partial")
        try:
            partial.write_text(json.dumps(data), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError:
            pass  # progress is a courtesy: a full disk or a vanished folder must not stop the run


def read_progress_file(path: Path) -> Progress | None:
    """The progress in `path`, or None when it is missing, a link, too big or not of the shape."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        raw = os.read(descriptor, MAX_PROGRESS_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(raw) > MAX_PROGRESS_BYTES:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("phase"), str) \
            or not _PHASE.fullmatch(data["phase"]):
        return None
    numbers = [data.get("sequences"), data.get("differences"), data.get("commits", 0)]
    elapsed = data.get("elapsed")
    if not all(type(number) is int and 0 <= number < 10**12 for number in numbers) \
            or type(elapsed) not in (int, float) or not 0 <= elapsed < 10**7:
        return None
    return Progress(data["phase"], numbers[0], numbers[1], float(elapsed), commits=numbers[2])


@contextmanager
def watch_progress_file(path: Path, on_progress: Callable[[Progress], None],
                        interval: float = WATCH_INTERVAL) -> Iterator[None]:
    """While the block runs, call `on_progress` from a thread with each new progress in `path`."""
    stopped = threading.Event()

    def watch() -> None:
        last: Progress | None = None
        while not stopped.wait(interval):
            update = read_progress_file(path)
            if update is not None and update != last:
                last = update
                try:
                    on_progress(update)
                except Exception as exc:  # progress is a courtesy: the run goes on without it
                    log.warning("progress update failed: %s: %s", type(exc).__name__, exc)

    watcher = threading.Thread(target=watch, name=f"watch {path.name}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stopped.set()
        watcher.join()
