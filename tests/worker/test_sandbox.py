"""Tests for `difforacle.generator.worker.sandbox`: forked children, crash and hang detection,
output and guards."""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from difforacle.generator.worker.sandbox import OUTPUT_LIMIT, ForkRunner, run_folders

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


# ---------------------------------------------------------------- the file system outside the run's folders

REFUSED = "difforacle sandbox: {} outside the run's folders is not allowed: "


def _descriptor_chmod(folder: Path) -> None:
    with open(folder / "file.txt") as readable:  # read-only, yet enough to change the mode
        os.fchmod(readable.fileno(), 0o600)


def _dir_fd_remove(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.remove("file.txt", dir_fd=descriptor)
    finally:
        os.close(descriptor)


def _relative_remove(folder: Path) -> None:
    os.chdir(folder)
    os.remove("file.txt")


# Each action changes a fresh copy of the scenery (file.txt, empty/, tree/leaf.txt) in the folder it
# is given, and names the event that refuses it outside the run's folders. Events that this platform
# lacks (chflags) or that a file system may not support (xattrs) are raised as CPython raises them.
ACTIONS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "open for writing": ("open", lambda d: open(d / "new.txt", "w").close()),
    "open for appending": ("open", lambda d: open(d / "file.txt", "a").close()),
    "open for updating": ("open", lambda d: open(d / "file.txt", "r+").close()),
    "os.open creating": ("open", lambda d: os.close(os.open(d / "new.txt", os.O_WRONLY | os.O_CREAT))),
    "remove": ("os.remove", lambda d: os.remove(d / "file.txt")),
    "remove relative to a folder descriptor": ("os.remove", _dir_fd_remove),
    "remove a relative path": ("os.remove", _relative_remove),
    "rename": ("os.rename", lambda d: os.rename(d / "file.txt", d / "renamed.txt")),
    "replace": ("os.rename", lambda d: os.replace(d / "file.txt", d / "empty" / "moved.txt")),
    "truncate": ("os.truncate", lambda d: os.truncate(d / "file.txt", 0)),
    "mkdir": ("os.mkdir", lambda d: os.mkdir(d / "new")),
    "rmdir": ("os.rmdir", lambda d: os.rmdir(d / "empty")),
    "chmod": ("os.chmod", lambda d: os.chmod(d / "file.txt", 0o600)),
    "chmod through a descriptor": ("os.chmod", _descriptor_chmod),
    "chown": ("os.chown", lambda d: os.chown(d / "file.txt", os.getuid(), os.getgid())),
    "utime": ("os.utime", lambda d: os.utime(d / "file.txt", (0, 0))),
    "symlink": ("os.symlink", lambda d: os.symlink("file.txt", d / "link")),
    "hard link": ("os.link", lambda d: os.link(d / "file.txt", d / "hard")),
    "setxattr": ("os.setxattr", lambda d: sys.audit("os.setxattr", str(d / "file.txt"), "user.x", b"1", 0)),
    "removexattr": ("os.removexattr", lambda d: sys.audit("os.removexattr", str(d / "file.txt"), "user.x")),
    "chflags": ("os.chflags", lambda d: sys.audit("os.chflags", str(d / "file.txt"), 0)),
    "lchflags": ("os.lchflags", lambda d: sys.audit("os.lchflags", str(d / "file.txt"), 0)),
    "shutil.rmtree": ("shutil.rmtree", lambda d: shutil.rmtree(d / "tree")),
    "shutil.copyfile": ("shutil.copyfile", lambda d: shutil.copyfile(d / "file.txt", d / "copy.txt")),
    "shutil.copymode": ("shutil.copymode", lambda d: shutil.copymode(d / "tree", d / "file.txt")),
    "shutil.copystat": ("shutil.copystat", lambda d: shutil.copystat(d / "tree", d / "file.txt")),
    "shutil.copytree": ("shutil.copytree", lambda d: shutil.copytree(d / "tree", d / "copied")),
    "shutil.move": ("shutil.move", lambda d: shutil.move(d / "tree", d / "moved")),
    "shutil.chown": ("shutil.chown", lambda d: shutil.chown(d / "file.txt", user=os.getuid())),
    "shutil.make_archive": ("shutil.make_archive", lambda d: shutil.make_archive(str(d / "archive"), "tar",
                                                                                 root_dir=d / "tree")),
    "shutil.unpack_archive": ("shutil.unpack_archive", lambda d: sys.audit("shutil.unpack_archive",
                                                                           "archive.tar", str(d), None)),
}


def _scenery(folder: Path) -> Path:
    (folder / "empty").mkdir(parents=True)
    (folder / "tree").mkdir()
    (folder / "tree" / "leaf.txt").write_text("leaf")
    (folder / "file.txt").write_text("content")
    return folder


def _snapshot(folder: Path) -> dict[str, tuple]:
    """Everything a change could alter: names, kinds, modes, owners, times, contents, link targets."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        content = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        found[str(path.relative_to(folder))] = (info.st_mode, info.st_uid, info.st_gid, info.st_mtime_ns,
                                                info.st_ctime_ns, info.st_nlink, content)
    return found


def _attempt(action: Callable[[], object]) -> dict:
    try:
        action()
    except PermissionError as exc:
        return {"refused": str(exc)} if "difforacle sandbox" in str(exc) else {"error": repr(exc)}
    except Exception as exc:
        return {"error": repr(exc)}
    return {}


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The run's folder and a folder outside it (the user's files)."""
    return (tmp_path / "run").resolve(), (tmp_path / "outside").resolve()


def test_changes_outside_the_run_folder_are_refused_and_change_nothing(folders: tuple[Path, Path]) -> None:
    run, outside = folders
    for number in range(len(ACTIONS)):
        _scenery(run / str(number))
        _scenery(outside / str(number))
    before = _snapshot(outside)
    items = [(number, name, folder) for number, name in enumerate(ACTIONS) for folder in (run, outside)]

    def work(item: tuple[int, str, Path]) -> dict:
        number, name, folder = item
        return {"pid": os.getpid(), **_attempt(lambda: ACTIONS[name][1](folder / str(number)))}

    results = _decode(ForkRunner(0, 10.0, (str(run),)).run(items, work, False))

    assert len({result.pop("pid") for result in results}) == 1  # one child: a refusal costs only the call
    assert len(results) == len(items)
    for (_, name, folder), result in zip(items, results):
        if folder == run:
            assert result == {}, (name, result)
        else:
            assert result.get("refused", "").startswith(REFUSED.format(ACTIONS[name][0])), (name, result)
    assert _snapshot(outside) == before
    inside = {name: run / str(number) for number, name in enumerate(ACTIONS)}  # there, each one happened
    assert (inside["open for writing"] / "new.txt").exists() and (inside["mkdir"] / "new").is_dir()
    assert not (inside["remove a relative path"] / "file.txt").exists()
    assert not (inside["shutil.rmtree"] / "tree").exists() and (inside["hard link"] / "hard").exists()


def test_refusal_names_the_event_and_the_path_as_given(folders: tuple[Path, Path]) -> None:
    run, outside = folders
    victim = _scenery(outside) / "file.txt"
    run.mkdir()
    (result,) = _decode(ForkRunner(0, 5.0, (str(run),)).run(
        [str(victim)], lambda path: _attempt(lambda: os.remove(path)), False))
    assert result == {"refused": REFUSED.format("os.remove") + repr(str(victim))}
    assert victim.read_text() == "content"


def test_reading_outside_stays_allowed(folders: tuple[Path, Path]) -> None:
    run, outside = folders
    _scenery(outside)
    run.mkdir()

    def read(item: int) -> dict:
        descriptor = os.open(outside / "file.txt", os.O_RDONLY)
        os.close(descriptor)
        with open(outside / "file.txt", "rb") as binary:
            return {"text": (outside / "file.txt").read_text(), "bytes": len(binary.read()),
                    "listing": sorted(os.listdir(outside)), "walk": len(list(os.walk(outside)))}

    assert _decode(ForkRunner(0, 5.0, (str(run),)).run([1], read, False)) == [
        {"text": "content", "bytes": 7, "listing": ["empty", "file.txt", "tree"], "walk": 3}]


def test_symlinks_are_judged_by_where_the_change_lands(folders: tuple[Path, Path]) -> None:
    run, outside = folders
    _scenery(outside)
    _scenery(run)
    (run / "escape").symlink_to(outside)  # a link in the run's folder to the user's files
    (outside / "inward").symlink_to(run)  # a link among the user's files to the run's folder
    before = _snapshot(outside)
    attempts: dict[str, Callable[[], object]] = {
        "write through a link out": lambda: open(run / "escape" / "file.txt", "w").close(),
        "remove through a link out": lambda: os.remove(run / "escape" / "file.txt"),
        "chmod a link out": lambda: os.chmod(run / "escape", 0o700),
        "hard link to a link out": lambda: os.link(run / "escape" / "file.txt", run / "hard"),
        "remove a link from outside": lambda: os.remove(outside / "inward"),
        "write through a link in": lambda: open(outside / "inward" / "new.txt", "w").close(),
        "make a link out": lambda: os.symlink(outside / "file.txt", run / "made"),
        "remove a link out": lambda: os.remove(run / "escape"),
    }
    runner = ForkRunner(0, 5.0, (str(run),))
    decoded = _decode(runner.run(list(attempts), lambda name: _attempt(attempts[name]), False))
    assert len(decoded) == len(attempts)
    results = dict(zip(attempts, decoded))

    assert [name for name, result in results.items() if "refused" in result] == [
        "write through a link out", "remove through a link out", "chmod a link out",
        "hard link to a link out", "remove a link from outside"]
    assert [name for name, result in results.items() if not result] == [
        "write through a link in", "make a link out", "remove a link out"]
    assert (run / "new.txt").exists() and not (run / "escape").exists()
    assert _snapshot(outside) == before


def test_a_relative_path_that_cannot_be_placed_is_refused(folders: tuple[Path, Path]) -> None:
    run, _ = folders
    (run / "gone").mkdir(parents=True)

    def work(item: int) -> dict:
        os.chdir(run / "gone")
        os.rmdir(run / "gone")  # inside the run's folder: allowed, and the working folder is gone
        return _attempt(lambda: open("new.txt", "w").close())

    (result,) = _decode(ForkRunner(0, 5.0, (str(run),)).run([1], work, False))
    assert result == {"refused": REFUSED.format("open") + repr("new.txt")}


def test_writing_to_dev_null_is_allowed_but_changing_it_is_not(tmp_path: Path) -> None:
    attempts: dict[str, Callable[[], object]] = {
        "write": lambda: Path(os.devnull).write_text("nothing"),
        "remove": lambda: sys.audit("os.remove", os.devnull, -1),  # raised as os.remove would, not done
    }
    results = _decode(ForkRunner(0, 5.0, (str(tmp_path),)).run(
        list(attempts), lambda name: _attempt(attempts[name]), False))
    assert results[0] == {}
    assert results[1] == {"refused": REFUSED.format("os.remove") + repr(os.devnull)}


def test_imports_work_and_write_no_bytecode_outside(folders: tuple[Path, Path]) -> None:
    run, outside = folders
    run.mkdir()
    outside.mkdir()
    (outside / "fresh_module_for_the_sandbox.py").write_text("VALUE = 42\n")

    def imported(item: int) -> dict:
        sys.dont_write_bytecode = False  # as without PYTHONDONTWRITEBYTECODE: importlib tries, is refused
        sys.path.insert(0, str(outside))
        import fresh_module_for_the_sandbox  # type: ignore[import-not-found]

        return {"value": fresh_module_for_the_sandbox.VALUE}

    assert _decode(ForkRunner(0, 5.0, (str(run),)).run([1], imported, False)) == [{"value": 42}]
    assert sorted(os.listdir(outside)) == ["fresh_module_for_the_sandbox.py"]


def test_nothing_is_writable_by_default(tmp_path: Path) -> None:
    (result,) = _decode(ForkRunner(0, 5.0).run(
        [str(tmp_path / "new.txt")], lambda path: _attempt(lambda: open(path, "w").close()), False))
    assert result["refused"].startswith(REFUSED.format("open"))
    assert not (tmp_path / "new.txt").exists()


def test_run_folders_are_the_working_folder_and_tmpdir(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "scratch"))
    assert run_folders() == (str(tmp_path), str(tmp_path / "scratch"))
    monkeypatch.delenv("TMPDIR")
    assert run_folders() == (str(tmp_path),)
