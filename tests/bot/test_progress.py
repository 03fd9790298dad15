"""`difforacle.bot.progress`: progress on stderr, a status line on a terminal and plain lines in a
log; and the progress file: written by the engine (in the App's sandbox), read by the worker, which
trusts nothing in it. The progress of whole runs: tests/end_to_end/test_progress.py."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from difforacle.bot.progress import (
    MAX_PROGRESS_BYTES,
    ProgressFile,
    ProgressPrinter,
    describe,
    read_progress_file,
    watch_progress_file,
)
from difforacle.generator import NOT_MEASURED, READING_HISTORY, Progress, Report


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_a_line_per_phase_and_one_every_interval_between() -> None:
    log, clock = io.StringIO(), Clock()
    show = ProgressPrinter(log, interval=10, clock=clock)

    show(Progress("importing", elapsed=0.5))
    for second in range(1, 26):  # an update every second, as exploring's batches come
        clock.now = second
        show(Progress("exploring", 100 * second, second // 10, second + 0.5, 16, min(second, 14)))
    clock.now = 26.0
    show(Progress("confirming", 2500, 1, 26.5, 16, 14))

    assert log.getvalue().splitlines() == [
        "[  0.5s] importing: 0 sequences, 0 differences",
        "[  1.5s] exploring: 100 sequences, 0 differences, 1 of 16 changed lines reached",
        "[ 11.5s] exploring: 1100 sequences, 1 differences, 11 of 16 changed lines reached",
        "[ 21.5s] exploring: 2100 sequences, 2 differences, 14 of 16 changed lines reached",
        "[ 26.5s] confirming: 2500 sequences, 1 differences, 14 of 16 changed lines reached",
    ]


def test_while_the_engine_is_silent_a_tick_repeats_its_latest_progress_an_interval_on() -> None:
    log, clock = io.StringIO(), Clock()
    show = ProgressPrinter(log, interval=10, clock=clock)
    clock.now = 15.0
    show.tick()  # nothing to show before the first update (reading the history)
    clock.now = 20.0
    show(Progress("confirming", 300, 1, 18.0))
    for clock.now in (25.0, 29.9, 30.0, 35.0, 40.0):
        show.tick()

    assert log.getvalue().splitlines() == [
        "[ 18.0s] confirming: 300 sequences, 1 differences",
        "[ 28.0s] confirming: 300 sequences, 1 differences",  # the engine's clock, 10 s on
        "[ 38.0s] confirming: 300 sequences, 1 differences",
    ]


def test_the_ticking_thread_keeps_lines_coming_until_the_run_ends() -> None:
    lines = threading.Semaphore(0)

    class Log(io.StringIO):
        def write(self, text: str) -> int:
            if text.endswith("\n"):
                lines.release()
            return super().write(text)

    log = Log()
    with ProgressPrinter(log, interval=0.01) as show:
        show(Progress("reproducing", 300, 2, 50.0))
        for _ in range(3):  # the phase's line, then the thread's, with no update in between
            assert lines.acquire(timeout=5)

    assert show._ticker is not None and not show._ticker.is_alive()  # stopped with the block
    assert log.getvalue().count("reproducing: 300 sequences, 2 differences") >= 3


def test_a_log_ends_with_a_summary_of_the_run() -> None:
    log, clock = io.StringIO(), Clock()
    show = ProgressPrinter(log, clock=clock)
    report = Report("a" * 40, "b" * 40)
    report.stats.sequences = 10430
    report.coverage.changed_lines, report.coverage.changed_lines_covered = 16, 14
    clock.now = 58.25
    show.summary(report)
    report.coverage.measured_by = NOT_MEASURED
    show.summary(report)

    assert log.getvalue().splitlines() == [
        "difforacle: done in 58.2 s: 10430 sequences, 0 differences, 14 of 16 changed lines reached",
        "difforacle: done in 58.2 s: 10430 sequences, 0 differences",
    ]


def test_a_terminal_gets_one_status_line_rewritten_in_place() -> None:
    terminal, clock = Terminal(), Clock()
    with ProgressPrinter(terminal, interval=10, clock=clock) as show:
        show(Progress("exploring", 100, 0, 1.0, 16, 3))
        clock.now = 30.0
        show.tick()
        show(Progress("exploring", 200, 1, 31.0, 16, 5))
        show.summary(Report("a" * 40, "b" * 40))

    assert terminal.getvalue() == ("\r\033[K[  1.0s] exploring: 100 sequences, 0 differences"
                                   "\r\033[K[ 31.0s] exploring: 200 sequences, 1 differences\n")


def test_what_is_written_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    ProgressFile(path)(Progress("exploring", 1234, 2, 12.34))

    assert read_progress_file(path) == Progress("exploring", 1234, 2, 12.3)
    assert describe(read_progress_file(path)) == "exploring: 1234 sequences, 2 differences after 12 s"
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no partial file left


def test_reading_the_history_shows_the_commits_read(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    ProgressFile(path)(Progress(READING_HISTORY, elapsed=2.04, commits=300))

    assert read_progress_file(path) == Progress(READING_HISTORY, 0, 0, 2.0, commits=300)
    assert describe(read_progress_file(path)) == "reading history: 300 commits after 2 s"


def test_rewrites_are_throttled_within_a_phase_but_not_across_phases(tmp_path: Path) -> None:
    path, clock = tmp_path / "progress.json", Clock()
    write = ProgressFile(path, clock)

    write(Progress("exploring", 10))
    clock.now = 0.5
    write(Progress("exploring", 20))
    assert read_progress_file(path).sequences == 10
    write(Progress("confirming", 30))
    assert read_progress_file(path) == Progress("confirming", 30)
    clock.now = 1.6
    write(Progress("confirming", 40))
    assert read_progress_file(path).sequences == 40


def test_the_last_update_held_back_is_written_at_the_end(tmp_path: Path) -> None:
    path, clock = tmp_path / "progress.json", Clock()
    write = ProgressFile(path, clock)
    write(Progress("exploring", 0))
    clock.now = 0.5
    write(Progress("exploring", 200))  # within the interval: held back
    assert read_progress_file(path).sequences == 0
    write.flush()
    assert read_progress_file(path).sequences == 200
    write.flush()  # nothing held back: nothing more to write
    assert read_progress_file(path).sequences == 200


def test_a_folder_that_vanished_does_not_stop_the_run(tmp_path: Path) -> None:
    ProgressFile(tmp_path / "gone" / "progress.json")(Progress("exploring", 1))  # no exception


@pytest.mark.parametrize("content", [
    b"", b"not json", b"[1, 2]", b'{"phase": "exploring"}',
    b'{"phase": "<b>owned</b>", "sequences": 1, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": -1, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": true, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": 1, "differences": "2", "elapsed": 1}',
    b'{"phase": "exploring", "sequences": 1, "differences": 0, "elapsed": NaN}',
    b'{"phase": "reading history", "sequences": 0, "differences": 0, "elapsed": 1, "commits": -3}',
    b'{"phase": "reading  history", "sequences": 0, "differences": 0, "elapsed": 1}',
    json.dumps({"phase": "exploring", "sequences": 1, "differences": 0, "elapsed": 1,
                "padding": "x" * MAX_PROGRESS_BYTES}).encode(),
])
def test_anything_not_of_the_shape_reads_as_nothing(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "progress.json"
    path.write_bytes(content)

    assert read_progress_file(path) is None


def test_links_and_other_kinds_of_file_read_as_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    ProgressFile(secret)(Progress("exploring", 7))
    (tmp_path / "link.json").symlink_to(secret)
    (tmp_path / "folder.json").mkdir()

    assert read_progress_file(secret) is not None
    assert read_progress_file(tmp_path / "link.json") is None
    assert read_progress_file(tmp_path / "folder.json") is None
    assert read_progress_file(tmp_path / "missing.json") is None


def test_the_watcher_reports_each_new_progress_once_and_stops_with_the_block(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    seen: list[Progress] = []
    changed = threading.Event()

    def on_progress(update: Progress) -> None:
        seen.append(update)
        changed.set()

    with watch_progress_file(path, on_progress, interval=0.01):
        for sequences in (1, 2):
            changed.clear()
            ProgressFile(path)(Progress("exploring", sequences))
            assert changed.wait(5)
        threading.Event().wait(0.05)  # several more reads of the same content
    ProgressFile(path)(Progress("reproducing", 3))
    threading.Event().wait(0.05)

    assert seen == [Progress("exploring", 1), Progress("exploring", 2)]


def test_a_failing_update_does_not_stop_the_watcher(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    seen: list[int] = []
    first, second = threading.Event(), threading.Event()

    def flaky(update: Progress) -> None:
        seen.append(update.sequences)
        if update.sequences == 1:
            first.set()
            raise ConnectionError("GitHub went away for a moment")
        second.set()

    with watch_progress_file(path, flaky, interval=0.01):
        ProgressFile(path)(Progress("exploring", 1))
        assert first.wait(5)
        ProgressFile(path)(Progress("confirming", 2))
        assert second.wait(5)

    assert seen == [1, 2]
