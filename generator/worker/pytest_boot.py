"""Runs pytest under the project's interpreter, inside the worker sandbox: on the suggested tests
(the reproduction check), or on the project's own tests with their calls recorded (carving).

The reproduction check (the findings' `reproduce`) starts this script as
`python pytest_boot.py OPTIONS_JSON PYTEST_ARGS...`. The suggested tests import project
code, so the whole pytest process gets the sandbox's limits and audit hook (no new
processes, no network), and every test (and every test module's import) gets a timer that
turns a hang into a failure of that test instead of a hung run. Once the test modules are
imported, the hook also refuses changes to the file system outside the run's folder (which
holds pytest's report and, as $TMPDIR, its `tmp_path`): the tests' calls are judged as the
worker judged them, and module bodies, which the worker ran before it forked, are not. If
this interpreter has no pytest, difforacle's own is used: the folder named by
DIFFORACLE_PYTEST_FALLBACK holds links to just pytest and its dependencies, and is appended
to `sys.path` so the project's own packages always win. With `"carve"` in the options,
carving (the generation seeds' `carving`) adds the recorder of `carving.py`. Standard library only (plus
the pytest it imports).
"""

import contextlib
import importlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Iterator
from types import ModuleType

FALLBACK_VARIABLE = "DIFFORACLE_PYTEST_FALLBACK"


class TestTimeout(BaseException):
    """Raised in a test that runs too long; a BaseException so that `except Exception` cannot swallow it."""


def _load_sandbox() -> ModuleType:
    """The worker's sandbox module, loaded under boot.py's private package name (never shadowed)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_difforacle_worker_boot", os.path.join(here, "boot.py"))
    assert spec and spec.loader
    boot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(boot)
    boot._load_private_package()  # also drops this folder from sys.path
    return importlib.import_module(boot.PACKAGE + ".sandbox")


def _import_pytest() -> ModuleType:
    """The project's pytest, or else difforacle's (appended to the path, never in front of the project)."""
    fallback = os.environ.pop(FALLBACK_VARIABLE, "")
    if importlib.util.find_spec("pytest") is None and fallback:
        sys.path.append(fallback)
    import pytest

    return pytest


def _timeouts_plugin(pytest: ModuleType, seconds: float) -> object:
    """A pytest plugin that raises TestTimeout in a test call or a test module's import after `seconds`."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TestTimeout(f"the test ran longer than {seconds:g} s")

    @contextlib.contextmanager
    def alarm() -> Iterator[None]:
        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)  # again every second if the test swallows it
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    class Timeouts:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item: object) -> Iterator[None]:
            with alarm():
                yield

        @pytest.hookimpl(hookwrapper=True)
        def pytest_make_collect_report(self, collector: object) -> Iterator[None]:
            if isinstance(collector, pytest.Module):
                with alarm():
                    yield
            else:
                yield

    return Timeouts()


class _FileSystemGuard:
    """A pytest plugin that guards the file system once collection (the modules' imports) is over."""

    def __init__(self, sandbox: ModuleType, writable: tuple[str, ...]) -> None:
        self.sandbox, self.writable = sandbox, writable

    def pytest_collection_finish(self, session: object) -> None:
        self.sandbox.guard_file_system(self.writable)


def main(argv: list[str]) -> int:
    options = json.loads(argv[0])
    sandbox = _load_sandbox()
    writable = sandbox.run_folders()  # the run's folder and, inside it, $TMPDIR (pytest's tmp_path)
    pytest = _import_pytest()
    plugins = [_timeouts_plugin(pytest, float(options["test_timeout"])), _FileSystemGuard(sandbox, writable)]
    if "carve" in options:  # the project's own tests, their calls into the catalog recorded
        carving = importlib.import_module(sandbox.__name__.rpartition(".")[0] + ".carving")
        plugins.append(carving.Recorder(options["carve"]["modules"], options["carve"]["out"]))
    sandbox.apply_limits(int(options["memory_mb"]), int(options["cpu_seconds"]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the file size limit fails, not the run
    sandbox.install_audit_hook(None)
    return int(pytest.main(argv[1:], plugins=plugins))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
