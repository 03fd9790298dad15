"""The worker boundary: a worker process imports the project, never difforacle or its dependencies.

The worker is started as the host starts it (`difforacle.generator.runtime.workers.Worker`), and
once by speaking the JSON-lines protocol to the worker's boot script
(`difforacle.generator.worker.boot`) directly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.engine_parts import WORKER_OPTIONS

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.runtime.workers import BOOT, Worker, worker_environment
from difforacle.generator.worker.protocol import CHECKOUT, PROTOCOL

FORBIDDEN = ("git", "jsonschema", "generator", "bot", "unidiff")

PROBE = textwrap.dedent('''
    """Records what the worker had imported before any project code ran."""
    import sys

    IMPORTED = sorted(sys.modules)
    FORBIDDEN = ("git", "jsonschema", "generator", "bot", "unidiff")


    def forbidden_imported():
        return [name for name in IMPORTED if name.split(".")[0] in FORBIDDEN]


    def forbidden_now():
        return [name for name in sorted(sys.modules) if name.split(".")[0] in FORBIDDEN]


    def worker_modules():
        return [name for name in IMPORTED if name.startswith("_difforacle_worker")]


    def is_imported(name):
        return name in IMPORTED
''')

OWN_GENERATOR = textwrap.dedent('''
    """The project's own top-level module called `generator`."""

    WHO = "the project's generator"


    def f():
        return WHO


    def path():
        import generator
        return generator.__file__
''')

NOISY = textwrap.dedent('''
    import os
    import sys

    print("printed at import " * 100)
    os.write(1, b'{"ok": false, "error": "written to fd 1 at import"}\\n')


    def shout(n):
        print("noise\\n" * 10000)
        print('{"ok": true, "results": []}')
        sys.stdout.flush()
        os.write(1, b'{"ok": false}\\n' * 100)
        sys.__stdout__.write("through __stdout__\\n")
        sys.__stdout__.flush()
        return n + 1
''')


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "probe.py").write_text(PROBE)
    (root / "generator.py").write_text(OWN_GENERATOR)
    (root / "noisy.py").write_text(NOISY)
    return root


def _start(root: Path, modules: tuple[str, ...]) -> Worker:
    checkout = Checkout("base", "0" * 40, root, (root,))
    files = tuple(FileChange(f"{m}.py", f"{m}.py", m, frozenset(), frozenset()) for m in modules)
    changes = ChangeSet("0" * 40, files, ())
    return Worker(checkout, changes, "base", 0, WORKER_OPTIONS)


def _call(op: str, *args: list) -> dict:
    return {"op": op, "args": [{"lit": a} for a in args], "kwargs": {}}


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Worker]:
    with _start(_project(tmp_path / "project"), ("probe",)) as started:
        yield started


def test_worker_imports_no_difforacle_code_or_dependencies(worker: Worker) -> None:
    results = worker.run([[_call("probe:forbidden_imported")], [_call("probe:forbidden_now")],
                          [_call("probe:worker_modules")], [_call("probe:is_imported", ["str", "json"])]], 0)
    assert [r.status for r in results] == ["ok"] * 4
    imported, now, private, json_loaded = (r.observations for r in results)
    assert imported["0/0"] == ["list", 0], imported
    assert now["0/0"] == ["list", 0], now
    assert private["0/0"][0] == "list" and private["0/0"][1] > 0, private  # the probe does see the worker
    assert json_loaded["0/0"] == ["t", True]


def test_catalog_is_the_projects(worker: Worker) -> None:
    ids = {op["id"] for op in worker.catalog["operations"]}
    assert {"probe:forbidden_imported", "probe:worker_modules", "probe:is_imported"} <= ids
    assert worker.catalog["import_errors"] == {}


def test_project_module_named_generator_is_the_projects(worker: Worker) -> None:
    sequences = [[_call("generator:f")], [_call("generator:path")], [_call("probe:forbidden_now")]]
    results = worker.run(sequences, 0)
    assert results[0].status == "ok"
    assert results[0].observations["0/0"] == ["s", "the project's generator"]
    # the checkout's own file (the observer writes the checkout's folder as its placeholder)
    assert results[1].observations["0/0"] == ["s", f"{CHECKOUT}/generator.py"]
    # once the project imports its own `generator`, that is the only one in the worker
    observed = results[2].observations
    assert observed["0/0"] == ["list", 1] and observed["0/0[0]"] == ["s", "generator"]


def test_project_generator_module_in_the_catalog(tmp_path: Path) -> None:
    with _start(_project(tmp_path / "project"), ("generator",)) as started:
        assert {op["id"] for op in started.catalog["operations"]} >= {"generator:f", "generator:path"}
        (result,) = started.run([[_call("generator:f")]], 0)
        assert result.observations["0/0"] == ["s", "the project's generator"]


def test_project_prints_do_not_corrupt_the_protocol(tmp_path: Path) -> None:
    with _start(_project(tmp_path / "project"), ("noisy", "probe")) as started:
        assert "noisy:shout" in {op["id"] for op in started.catalog["operations"]}
        for _ in range(2):
            results = started.run([[_call("noisy:shout", ["int", 1])], [_call("noisy:shout", ["int", 2])]], 0)
            assert [r.observations["0/0"] for r in results] == [["i", 2], ["i", 3]]
        isolated = started.run([[_call("noisy:shout", ["int", 5])]], 0, isolate=True)
        assert isolated[0].observations["0/0"] == ["i", 6]


def test_boot_script_speaks_json_lines(tmp_path: Path) -> None:
    """The raw protocol: every reply is one JSON line, whatever the project prints."""
    root = _project(tmp_path / "project")
    checkout = Checkout("base", "0" * 40, root, (root,))
    work = tmp_path / "cwd"
    work.mkdir()
    requests = [
        {"cmd": "run", "sequences": []},
        {"cmd": "init", "protocol": "difforacle.worker/0", "roots": [str(root)], "modules": [], "units": [],
         "lines": {}, "call_timeout": 1.0, "sequence_timeout": 5.0, "memory_mb": 0},
        {"cmd": "init", "protocol": PROTOCOL, "roots": [str(root)], "modules": ["noisy", "probe"],
         "units": [], "lines": {}, "call_timeout": 1.0, "sequence_timeout": 5.0, "memory_mb": 0},
        "this is not json",
        {"cmd": "bogus"},
        {"cmd": "run", "sequences": [[_call("noisy:shout", ["int", 1])], [_call("probe:forbidden_now")]],
         "random_seed": 0},
        {"cmd": "quit"},
    ]
    stdin = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)
    done = subprocess.run([sys.executable, str(BOOT)], input=stdin.encode(), capture_output=True, cwd=work,
                          env=worker_environment(checkout, 0, str(work)), timeout=60)
    lines = done.stdout.decode().splitlines()
    replies = [json.loads(line) for line in lines]
    assert len(replies) == 6, lines
    assert replies[0] == {"ok": False, "error": "run before init"}
    assert replies[1] == {"ok": False, "protocol": PROTOCOL,  # another version of the host: refused
                          "error": f"the host speaks 'difforacle.worker/0', this worker {PROTOCOL!r}"}
    assert replies[2]["ok"] is True and replies[2]["protocol"] == PROTOCOL == "difforacle.worker/1"
    assert replies[3] == {"ok": False, "error": "request is not JSON"}
    assert replies[4]["ok"] is False and "bogus" in replies[4]["error"]
    assert replies[5]["ok"] is True
    shout, probe = replies[5]["results"]
    assert shout["obs"]["0/0"] == ["i", 2]
    assert probe["obs"]["0/0"] == ["list", 0]
    assert done.returncode == 0


def test_usable_cores_are_the_affinity_within_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from difforacle.generator.runtime import workers

    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert workers.usable_cores() == 3
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    assert workers.usable_cores() == workers.MAX_JOBS
