"""Progress of whole runs: the engine shows its history being read before anything else, and
`difforacle demo` writes its phases to a log and ends with a summary, or keeps them in the
progress file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder

from difforacle.bot.cli import main
from difforacle.bot.progress import read_progress_file
from difforacle.generator import READING_HISTORY, Progress


def test_the_run_shows_its_history_being_read_before_anything_else(builder: RepoBuilder) -> None:
    builder.commit({"pkg/__init__.py": "", "pkg/mod.py": "def f(x):\n    return x\n"}, "Add f")
    for number in range(3):
        builder.commit({"pkg/other.py": f"X = {number}\n"}, "Tune X")
    builder.branch("feature")
    builder.commit({"pkg/mod.py": "def f(x):\n    return x + 1\n"}, "Change f")
    builder.switch("main")
    seen: list[Progress] = []

    run_analyze(builder, budget=3, max_sequences=50, progress=seen.append)

    reading = [update for update in seen if update.phase == READING_HISTORY]
    assert seen[:len(reading)] == reading and reading[0].commits == 0 and reading[-1].commits == 5
    assert seen[len(reading)].phase == "importing"


@pytest.mark.slow
def test_diff_keeps_the_progress_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "progress.json"

    status = main(["demo", "--budget", "3", "--max-sequences", "200", "--quiet",
                   "--progress-file", str(path)])

    err = capsys.readouterr().err
    assert status in (0, 1), err
    assert "sequences" not in err  # --quiet: no progress on stderr, only the file
    final = read_progress_file(path)
    assert final is not None and final.phase in ("exploring", "confirming", "reproducing"), final
    assert final.sequences > 0


@pytest.mark.slow
def test_a_run_in_a_log_shows_its_phases_and_ends_with_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["demo", "--budget", "3", "--max-sequences", "200"])

    err = capsys.readouterr().err.splitlines()
    assert status == 1, err
    progress = [line for line in err if line.startswith("[")]
    phases = [line.split("] ")[1].split(":")[0] for line in progress]
    assert phases[:2] == ["reading history", "importing"] and "exploring" in phases
    assert "of 5 changed lines reached" in progress[-1] and "\r" not in "".join(err)
    assert re.fullmatch(r"difforacle: done in \d+\.\d s: 200 sequences, [1-9]\d* differences, "
                        r"[0-5] of 5 changed lines reached", err[-1]), err[-1]
