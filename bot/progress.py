"""The engine's progress as one line of text, and as a small file another process can watch.

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

from difforacle.generator import Progress

log = logging.getLogger("difforacle")
MAX_PROGRESS_BYTES = 4096
WRITE_INTERVAL = 1.0  # seconds between rewrites within one phase
WATCH_INTERVAL = 2.0  # seconds between reads by the watcher (the check run throttles itself further)
_PHASE = re.compile(r"[a-z]{1,20}")


def describe(update: Progress) -> str:
    """The line shown on the check run: "exploring: 1200 sequences, 1 differences after 12 s"."""
    return (f"{update.phase}: {update.sequences} sequences, {update.differences} differences "
            f"after {update.elapsed:.0f} s")


class ProgressFile:
    """An `Options.progress` callback that keeps `path` holding the latest progress."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path, self.clock = path, clock
        self._phase, self._written = "", float("-inf")

    def __call__(self, update: Progress) -> None:
        now = self.clock()
        if update.phase == self._phase and now - self._written < WRITE_INTERVAL:
            return
        self._phase, self._written = update.phase, now
        data = {"phase": update.phase, "sequences": update.sequences, "differences": update.differences,
                "elapsed": round(update.elapsed, 1)}
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
    counts = [data.get("sequences"), data.get("differences")]
    elapsed = data.get("elapsed")
    if not all(type(count) is int and 0 <= count < 10**12 for count in counts) \
            or type(elapsed) not in (int, float) or not 0 <= elapsed < 10**7:
        return None
    return Progress(data["phase"], counts[0], counts[1], float(elapsed))


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
