"""The progress file: written by the engine (in the App's sandbox), read by the worker, which
trusts nothing in it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from difforacle.bot.cli import main
from difforacle.bot.progress import (
    MAX_PROGRESS_BYTES,
    ProgressFile,
    describe,
    read_progress_file,
    watch_progress_file,
)
from difforacle.generator import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_what_is_written_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "progress.json"
    ProgressFile(path)(Progress("exploring", 1234, 2, 12.34))

    assert read_progress_file(path) == Progress("exploring", 1234, 2, 12.3)
    assert describe(read_progress_file(path)) == "exploring: 1234 sequences, 2 differences after 12 s"
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no partial file left


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


def test_a_folder_that_vanished_does_not_stop_the_run(tmp_path: Path) -> None:
    ProgressFile(tmp_path / "gone" / "progress.json")(Progress("exploring", 1))  # no exception


@pytest.mark.parametrize("content", [
    b"", b"not json", b"[1, 2]", b'{"phase": "exploring"}',
    b'{"phase": "<b>owned</b>", "sequences": 1, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": -1, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": true, "differences": 0, "elapsed": 1}',
    b'{"phase": "exploring", "sequences": 1, "differences": "2", "elapsed": 1}',
    b'{"phase": "exploring", "sequences": 1, "differences": 0, "elapsed": NaN}',
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


def test_diff_keeps_the_progress_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "progress.json"

    status = main(["demo", "--budget", "3", "--max-sequences", "200", "--quiet",
                   "--progress-file", str(path)])

    assert status in (0, 1), capsys.readouterr().err
    final = read_progress_file(path)
    assert final is not None and final.phase in ("exploring", "confirming", "reproducing"), final
    assert final.sequences > 0


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
