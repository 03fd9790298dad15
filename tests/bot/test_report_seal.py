"""The engine's signed report (`difforacle.bot.report_seal`, `diff --report-key`): the key read and
deleted before anything else runs, the engine's process closed to its own user, the signature
made over the exact bytes of the JSON report and refused for any other bytes. The attack itself
(the project's code rewriting the report in the App's sandbox) is in tests/bot/app/test_runner.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.command_line import FAST, assert_one_line_error, convert_pr, run_cli
from support.repos import RepoBuilder

from difforacle.bot import report_seal
from difforacle.generator.errors import SetupError


def test_a_key_is_taken_once_and_deleted(tmp_path: Path) -> None:
    path = tmp_path / "report.key"
    written = report_seal.new_key(path)
    assert path.stat().st_mode & 0o777 == 0o600

    assert report_seal.take_key(path) == written
    assert not path.exists()
    with pytest.raises(SetupError, match="cannot read and remove the key"):
        report_seal.take_key(path)


@pytest.mark.parametrize("text", ["", "not hex", "ab" * 8])
def test_a_key_that_is_not_one_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "report.key"
    path.write_text(text)
    with pytest.raises(SetupError, match="not a key of 32 bytes"):
        report_seal.take_key(path)


def test_a_signature_holds_for_the_exact_bytes_only(tmp_path: Path) -> None:
    key = report_seal.new_key(tmp_path / "key")
    report = tmp_path / "report.json"
    report.write_text('{"differences": [1]}\n')
    report_seal.sign(report, key)
    signature = report_seal.mac_path(report).read_text()

    assert report_seal.verify(report.read_bytes(), signature, key)
    assert not report_seal.verify(b'{"differences": []}\n', signature, key)
    assert not report_seal.verify(report.read_bytes(), signature, b"\x00" * 32)
    assert not report_seal.verify(report.read_bytes(), "", key)


def test_a_sealed_process_is_not_dumpable_and_its_children_are() -> None:
    """Not dumpable: /proc/PID/{mem,environ,fd} belong to root and ptrace is refused to the same
    user. The processes it starts (the project's workers) are dumpable again after exec."""
    code = """
import ctypes, subprocess, sys
from difforacle.bot import report_seal
libc = ctypes.CDLL(None)
before = libc.prctl(3, 0, 0, 0, 0)
report_seal.seal_process()
child = subprocess.run([sys.executable, "-c", "import ctypes; print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"],
                       capture_output=True, text=True).stdout.strip()
print(before, libc.prctl(3, 0, 0, 0, 0), child)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0", "1"]  # PR_GET_DUMPABLE before, after, in a child


@pytest.mark.slow  # a whole run; the README's quick test command stays under 5 minutes
def test_diff_signs_its_json_report_with_the_key_it_deleted(builder: RepoBuilder, tmp_path: Path) -> None:
    convert_pr(builder)
    key_file = tmp_path / "report.key"
    key = report_seal.new_key(key_file)
    report = tmp_path / "report.json"

    done = run_cli("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", *FAST,
                   "--json", str(report), "--report-key", str(key_file))

    assert done.returncode == 1, done.stderr  # a difference
    assert not key_file.exists()
    assert json.loads(report.read_text())["differences"]
    assert report_seal.verify(report.read_bytes(), report_seal.mac_path(report).read_text(), key)


def test_report_key_without_json_or_key_is_a_one_line_error(builder: RepoBuilder, tmp_path: Path) -> None:
    convert_pr(builder)
    key_file = tmp_path / "report.key"
    report_seal.new_key(key_file)
    common = ("diff", "--repo", str(builder.root), "--base", "main", "--head", "feature", *FAST)

    assert_one_line_error(run_cli(*common, "--report-key", str(key_file)), "give --json FILE too")
    assert key_file.exists()  # refused before it was taken
    assert_one_line_error(run_cli(*common, "--json", str(tmp_path / "r.json"), "--report-key",
                                  str(tmp_path / "missing.key")), "cannot read and remove the key")
