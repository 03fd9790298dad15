"""Tests for generator.worker.sandbox: forked children, crash and hang detection, output and guards."""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import resource
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from difforacle.generator.worker.sandbox import OUTPUT_LIMIT, ForkRunner

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the sandbox forks")


def _decode(results: list[str]) -> list[dict]:
    return [json.loads(text) for text in results]


def _crash_detail(result: dict) -> list:
    assert result["status"] == "crash" and result["lost"] is True
    (key,) = result["obs"]
    assert key == f"{result['n']}/!"
    return result["obs"][key]


def _work(item: Any) -> dict:
    if item == "exit":
        os._exit(3)
    if item == "hang":
        time.sleep(100)
    if item == "segfault":
        faulthandler.disable()  # keep the child's dump out of the test output
        ctypes.string_at(0)
    if item == "raise":
        raise ValueError("escaped the sequence runner")
    return {"item": item, "pid": os.getpid()}


@pytest.mark.parametrize("isolate", [False, True])
def test_ordinary_items_give_one_result_each_in_order(isolate: bool) -> None:
    results = _decode(ForkRunner(0, 5.0).run([1, "two", 3], _work, isolate))
    assert [r["item"] for r in results] == [1, "two", 3]
    assert all(r["pid"] != os.getpid() for r in results)
    if isolate:
        assert len({r["pid"] for r in results}) == 3
    else:
        assert len({r["pid"] for r in results}) == 1


def test_results_are_json_text() -> None:
    (text,) = ForkRunner(0, 5.0).run([7], lambda item: {"n": item, "s": "é\n"}, False)
    assert isinstance(text, str) and "\n" not in text
    assert json.loads(text) == {"n": 7, "s": "é\n"}


@pytest.mark.parametrize("isolate", [False, True])
def test_exit_in_the_middle_loses_only_that_item(isolate: bool) -> None:
    results = _decode(ForkRunner(0, 5.0).run([1, "exit", 3], _work, isolate))
    assert len(results) == 3
    assert results[0]["item"] == 1 and results[2]["item"] == 3
    assert _crash_detail(results[1]) == ["E", "Crash", "process exited with status 3"]


def test_exception_escaping_the_work_function_is_a_crash() -> None:
    results = _decode(ForkRunner(0, 5.0).run([1, "raise", 3], _work, False))
    assert _crash_detail(results[1]) == ["E", "Crash", "process exited with status 70"]
    assert results[2]["item"] == 3


def test_hang_is_killed_and_reported_within_a_few_seconds() -> None:
    start = time.monotonic()
    results = _decode(ForkRunner(0, 1.0).run([1, "hang", 3], _work, False))
    assert time.monotonic() - start < 3.5
    assert results[0]["item"] == 1 and results[2]["item"] == 3
    assert _crash_detail(results[1]) == ["E", "Hang", "hang"]


def test_segfault_is_a_crash() -> None:
    results = _decode(ForkRunner(0, 5.0).run(["segfault", 2], _work, True))
    assert _crash_detail(results[0]) == ["E", "Crash", "killed by SIGSEGV"]
    assert results[1]["item"] == 2


def test_crash_is_placed_at_the_statement_in_progress() -> None:
    runner = ForkRunner(0, 5.0)

    def work(item: int) -> dict:
        for statement in range(5):
            runner.set_statement(statement)
            if item == 2 and statement == 3:
                os._exit(1)
        return {"item": item}

    results = _decode(runner.run([1, 2, 3], work, False))
    assert results[1]["n"] == 3
    assert results[1]["obs"] == {"3/!": ["E", "Crash", "process exited with status 1"]}
    assert results[2] == {"item": 3}


def test_ten_megabytes_of_output_are_bounded_and_do_not_break_the_stream() -> None:
    def work(item: int) -> dict:
        print("x" * 10_000_000)
        sys.stderr.write("y" * 10_000_000)
        print("no newline", end="")
        return {"item": item, "kept": sys.stdout.kept}

    start = time.monotonic()
    results = _decode(ForkRunner(0, 5.0).run([1, 2], work, False))
    assert time.monotonic() - start < 2.0
    assert [r["item"] for r in results] == [1, 2]
    assert all(r["kept"] == OUTPUT_LIMIT for r in results)


def _guarded(action: str) -> dict:
    try:
        if action == "subprocess":
            subprocess.run(["true"], check=False)
        elif action == "system":
            os.system("true")
        elif action == "socket":
            socket.create_connection(("127.0.0.1", 9), timeout=1)
        elif action == "fork":
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
    except PermissionError as exc:
        return {"action": action, "blocked": True, "message": str(exc)}
    except OSError as exc:
        return {"action": action, "blocked": False, "error": repr(exc)}
    return {"action": action, "blocked": False}


def test_audit_hook_blocks_processes_and_connections_in_the_child_only() -> None:
    actions = ["subprocess", "system", "socket", "fork"]
    results = _decode(ForkRunner(0, 5.0).run(actions, _guarded, False))
    for result in results:
        assert result["blocked"] is True, result
        assert "difforacle sandbox" in result["message"]
    # the parent keeps its freedom
    assert subprocess.run(["true"], check=False).returncode == 0
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=2):
            pass


def test_parent_streams_are_untouched_after_a_run() -> None:
    stdout, stderr = sys.stdout, sys.stderr
    ForkRunner(0, 5.0).run([1], lambda item: {"out": print("hello")}, False)
    assert sys.stdout is stdout and sys.stderr is stderr


def _virtual_memory_mb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no VmSize")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_memory_limit_applies_to_the_child() -> None:
    limit = _virtual_memory_mb() + 256

    def work(item: int) -> dict:
        try:
            block = bytearray(1024 * 1024 * 1024)
        except MemoryError:
            return {"memory_error": True}
        return {"memory_error": False, "size": len(block)}

    before = resource.getrlimit(resource.RLIMIT_AS)
    assert _decode(ForkRunner(limit, 5.0).run([1], work, False)) == [{"memory_error": True}]
    assert resource.getrlimit(resource.RLIMIT_AS) == before  # the parent is not limited
