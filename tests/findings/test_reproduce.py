"""Tests for `difforacle.generator.findings.reproduce`: suggested tests must pass/fail as promised
on base and head.

Most findings share one `check_reproduction` call (the module-scoped `shared` fixture), which
is also what the check does for real: one pytest process per commit for every finding.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.report_samples import sample_difference
from support.repos import RepoBuilder, make_pr

from difforacle.generator.changes.checkout import checkouts
from difforacle.generator.changes.model import Checkout
from difforacle.generator.findings.reproduce import (
    Reproduction,
    SuggestedTests,
    check_reproduction,
    reproduce,
)

BASE = "def seconds(hours):\n    return hours * 3600\n\n\ndef name():\n    return 'same'\n"
HEAD = BASE.replace("3600", "3660")
TEST_TIMEOUT = 2.0  # per test: short enough to keep the hanging ones cheap, long enough on a loaded machine


def _module(body: str, imports: str = "") -> str:
    """A pytest module with one test function whose body is `body` (one statement per line)."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"import pytest\n{imports}from pkg.mod import name, seconds\n\n\ndef test_it():\n{lines}"


def _seed_zero_hash() -> int:
    code = "print(hash('difforacle'))"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return int(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout)


@pytest.fixture(scope="module")
def pr(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Checkout, Checkout]]:
    """A regression (3600 -> 3660) in a project whose own pytest configuration would break any run."""
    builder = RepoBuilder(tmp_path_factory.mktemp("reproduce") / "repo")
    hostile = {"pytest.ini": "[pytest]\naddopts = -x --bogus-option\n",
               "conftest.py": "raise RuntimeError('the project conftest was loaded')\n",
               "pkg/conftest.py": "raise RuntimeError('the package conftest was loaded')\n"}
    make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": BASE, **hostile}, {"pkg/mod.py": HEAD})
    with checkouts(builder.repo, "main", "feature") as sides:
        yield sides


@dataclass
class Shared:
    results: dict[str, Reproduction]
    seconds: float
    pids: list[str]
    outside: Path  # a file the tests' calls may not remove (module bodies, as in the worker, may write)


TMP_PATH_MODULE = """from pkg.mod import seconds


def test_it(tmp_path):
    (tmp_path / "made.txt").write_text("in pytest's own temporary folder")
    assert (tmp_path / "made.txt").read_text() == "in pytest's own temporary folder"
    assert seconds(1) == 3600
"""


@pytest.fixture(scope="module")
def shared(pr: tuple[Checkout, Checkout], tmp_path_factory: pytest.TempPathFactory) -> Shared:
    pid_file = tmp_path_factory.mktemp("pids") / "pids.txt"
    record_pid = f"import os\nwith open({str(pid_file)!r}, 'a') as f: f.write(f'{{os.getpid()}}\\n')\n"
    outside = tmp_path_factory.mktemp("outside") / "outside.txt"
    outside.write_text("kept")
    hash_zero = _seed_zero_hash()
    tests = [
        SuggestedTests("regression", record_pid + _module("assert seconds(1) == 3600"),
                       record_pid + _module("assert seconds(1) == 3660")),
        SuggestedTests("no_pin_head", record_pid + _module("assert seconds(2) == 7200"), None),
        SuggestedTests("same_on_both", _module("assert name() == 'same'"),
                       _module("assert name() != 'same'")),
        SuggestedTests("hash_order", _module(f"assert hash('difforacle') == {hash_zero}\n"
                                             "assert seconds(1) == 3600"), None),
        SuggestedTests("wrong_on_base", _module("assert seconds(1) == 1"), None),
        SuggestedTests("syntax_error", "def test_it(:\n    pass\n", _module("assert seconds(1) == 3660")),
        SuggestedTests("hang", _module("while True:\n    try:\n        time.sleep(5)\n"
                                       "    except Exception:\n        pass", "import time\n"), None),
        SuggestedTests("hang_at_import", "while True:\n    pass\n\n\ndef test_it():\n    pass\n", None),
        SuggestedTests("sandbox_process", _module(
            "with pytest.raises(PermissionError, match='difforacle sandbox'):\n"
            "    subprocess.run(['true'])\nassert seconds(1) == 3600", "import subprocess\n"), None),
        SuggestedTests("sandbox_network", _module(
            "connection = socket.socket()\n"
            "with pytest.raises(PermissionError, match='difforacle sandbox'):\n"
            "    connection.connect(('127.0.0.1', 9))\nassert seconds(1) == 3600", "import socket\n"), None),
        SuggestedTests("sandbox_file_system", _module(
            "with pytest.raises(PermissionError, match='difforacle sandbox: os.remove'):\n"
            f"    os.remove({str(outside)!r})\nassert seconds(1) == 3600", "import os\n"), None),
        SuggestedTests("tmp_path", TMP_PATH_MODULE, None),
        SuggestedTests("sandbox_unguarded", _module("subprocess.run(['true'])", "import subprocess\n"), None),
        SuggestedTests("skipped", _module("pytest.skip('not today')"), None),
        SuggestedTests("no_test_function", "from pkg.mod import seconds\n\n\ndef helper():\n    pass\n",
                       None),
    ]
    with pytest.MonkeyPatch.context() as patch:  # the user's pytest settings must not reach the run either
        patch.setenv("PYTEST_ADDOPTS", "-x --bogus-option")
        patch.setenv("PYTEST_PLUGINS", "no_such_plugin_module")
        start = time.monotonic()
        results = check_reproduction(tests, *pr, sys.executable, test_timeout=TEST_TIMEOUT, run_timeout=60)
        elapsed = time.monotonic() - start
    return Shared(results, elapsed, pid_file.read_text().split() if pid_file.exists() else [], outside)


@pytest.mark.slow
def test_results_are_keyed_by_name_in_input_order(shared: Shared) -> None:
    assert list(shared.results) == ["regression", "no_pin_head", "same_on_both", "hash_order",
                                    "wrong_on_base", "syntax_error", "hang", "hang_at_import",
                                    "sandbox_process", "sandbox_network", "sandbox_file_system", "tmp_path",
                                    "sandbox_unguarded", "skipped", "no_test_function"]


def test_genuine_regression_reproduces(shared: Shared) -> None:
    result = shared.results["regression"]
    assert result.reproduced, result.detail
    assert result.detail == ("pin_base passed on base and failed on head (assert 3660 == 3600 + where 3660 = "
                             "seconds(1)); pin_head failed on base and passed on head")


def test_pin_head_may_be_none(shared: Shared) -> None:
    result = shared.results["no_pin_head"]
    assert result.reproduced, result.detail
    assert result.detail.endswith("; no pin_head test")


def test_one_pytest_process_per_commit(shared: Shared) -> None:
    # three modules record their process on each commit: six lines, two processes
    assert len(shared.pids) == 6 and len(set(shared.pids)) == 2
    assert str(os.getpid()) not in shared.pids


def test_behaviour_shared_by_both_commits_does_not_reproduce(shared: Shared) -> None:
    assert shared.results["same_on_both"] == Reproduction(
        False, "not reproduced: pin_base passed on head, expected to fail; "
               "pin_head failed on head, expected to pass: assert 'same' != 'same' + where 'same' = name()")


def test_hash_seed_dependent_test_does_not_reproduce(shared: Shared) -> None:
    # the hash seed is random in the check, as for whoever runs the test later
    result = shared.results["hash_order"]
    assert not result.reproduced
    assert result.detail.startswith("not reproduced: pin_base failed on base, expected to pass: assert ")


def test_pin_base_failing_on_base_does_not_reproduce(shared: Shared) -> None:
    assert shared.results["wrong_on_base"] == Reproduction(
        False, "not reproduced: pin_base failed on base, expected to pass: "
               "assert 3600 == 1 + where 3600 = seconds(1)")


def test_syntax_error_costs_only_its_own_finding(shared: Shared) -> None:
    assert shared.results["syntax_error"] == Reproduction(
        False, "not reproduced: pin_base failed on base, expected to pass: SyntaxError: invalid syntax")
    assert shared.results["regression"].reproduced  # same processes, unaffected


def test_hanging_test_fails_by_the_per_test_timeout(shared: Shared) -> None:
    # the test swallows Exception, but the timeout is a BaseException
    assert shared.results["hang"] == Reproduction(
        False, "not reproduced: pin_base failed on base, expected to pass: "
               f"TestTimeout: the test ran longer than {TEST_TIMEOUT:g} s")
    assert shared.seconds < 30  # far below run_timeout=60: nothing waited for the hangs to end


def test_hanging_test_module_import_fails_by_the_timeout(shared: Shared) -> None:
    assert shared.results["hang_at_import"] == Reproduction(
        False, "not reproduced: pin_base failed on base, expected to pass: "
               f"TestTimeout: the test ran longer than {TEST_TIMEOUT:g} s")


@pytest.mark.parametrize("finding", ["sandbox_process", "sandbox_network", "sandbox_file_system"])
def test_sandbox_refuses_processes_connections_and_changes_outside(shared: Shared, finding: str) -> None:
    # the pytest.raises(PermissionError) blocks passed on base (and on head, which fails on the value)
    result = shared.results[finding]
    assert result.reproduced, result.detail
    assert shared.outside.read_text() == "kept"


def test_pytest_tmp_path_is_writable_in_the_sandbox(shared: Shared) -> None:
    result = shared.results["tmp_path"]
    assert result.reproduced, result.detail


def test_refused_process_fails_the_test(shared: Shared) -> None:
    assert shared.results["sandbox_unguarded"] == Reproduction(
        False, "not reproduced: pin_base failed on base, expected to pass: "
               "PermissionError: difforacle sandbox: subprocess.Popen is not allowed while generating tests")


def test_skipped_is_neither_pass_nor_fail(shared: Shared) -> None:
    assert shared.results["skipped"] == Reproduction(
        False, "not reproduced: pin_base was skipped on base, expected to pass: not today; "
               "pin_base was skipped on head, expected to fail: not today")


def test_module_without_test_is_reported_as_not_run(shared: Shared) -> None:
    assert shared.results["no_test_function"] == Reproduction(
        False, "not reproduced: pin_base did not run on base (no result in pytest's report); "
               "pin_base did not run on head (no result in pytest's report)")


def test_projects_pytest_configuration_and_conftests_do_not_interfere(shared: Shared) -> None:
    # pytest.ini has `addopts = -x --bogus-option`, both conftest.py files raise at import and the
    # environment sets PYTEST_ADDOPTS/PYTEST_PLUGINS: any of them would have failed every finding
    assert all(shared.results[name].reproduced
               for name in ("regression", "no_pin_head", "sandbox_process", "sandbox_network", "tmp_path"))


def test_run_timeout_stops_the_whole_run(pr: tuple[Checkout, Checkout]) -> None:
    hang = SuggestedTests("hang", _module("time.sleep(60)", "import time\n"), None)
    start = time.monotonic()
    results = check_reproduction([hang], *pr, sys.executable, test_timeout=30, run_timeout=1.0)
    assert time.monotonic() - start < 5
    assert results["hang"] == Reproduction(
        False, "not reproduced: the pytest run on base did not finish within 1 s and was stopped; "
               "the pytest run on head did not finish within 1 s and was stopped", checked=False)


def test_a_check_out_of_time_keeps_its_findings_unchecked(pr: tuple[Checkout, Checkout]) -> None:
    """The budget's end must not hide what confirmation showed: unchecked, not hidden."""
    hanging = sample_difference(1, test=_module("time.sleep(60)", "import time\n"), pin_head=None)
    reproduced = reproduce([hanging], *pr, sys.executable, run_timeout=1.0)
    assert reproduced.differences == [hanging] and hanging.reproduced is None
    assert reproduced.notes == ["1 confirmed difference(s) were not checked by pytest: the run's time ran "
                                "out first (they are reported unchecked)."]


def test_interpreter_without_pytest_uses_difforacles_appended_after_the_project(
        pr: tuple[Checkout, Checkout], tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = str(tmp_path / "venv" / "bin" / "python")
    assert subprocess.run([python, "-c", "import pytest"], capture_output=True).returncode != 0
    body = ("fallback = os.path.dirname(os.path.dirname(pytest.__file__))\n"
            "assert sys.path[-1] == fallback\n"
            "assert sys.path.index(os.path.dirname(os.path.dirname(seconds.__code__.co_filename)))"
            " < sys.path.index(fallback)\n"
            "assert seconds(1) == 3600")
    test = SuggestedTests("fallback", _module(body, "import os\nimport sys\n"),
                          _module("assert seconds(1) == 3660"))
    result = check_reproduction([test], *pr, python)["fallback"]
    assert result.reproduced, result.detail


def _fake_checkout(root: Path) -> Checkout:
    return Checkout(ref="x", sha="0" * 40, root=root, import_roots=(root,))


def test_missing_interpreter_is_a_detail_not_a_traceback(tmp_path: Path) -> None:
    test = SuggestedTests("t", _module("pass"), None)
    python = str(tmp_path / "no-such-python")
    results = check_reproduction([test], _fake_checkout(tmp_path), _fake_checkout(tmp_path), python)
    assert results == {"t": Reproduction(
        False, f"not reproduced: cannot start the interpreter {python!r} for base: "
               f"No such file or directory; cannot start the interpreter {python!r} for head: "
               "No such file or directory")}


def test_crashing_boot_is_a_detail_not_a_traceback(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho 'Fatal Python error: boom' >&2\nexit 3\n")
    python.chmod(0o755)
    test = SuggestedTests("t", _module("pass"), None)
    results = check_reproduction([test], _fake_checkout(tmp_path), _fake_checkout(tmp_path), str(python))
    assert results["t"] == Reproduction(
        False, "not reproduced: pytest on base ended without a report (exit status 3): "
               "Fatal Python error: boom; pytest on head ended without a report (exit status 3): "
               "Fatal Python error: boom")


def test_no_tests_start_no_process(tmp_path: Path) -> None:
    assert check_reproduction([], _fake_checkout(tmp_path), _fake_checkout(tmp_path), "/no/such/python") == {}


@pytest.mark.parametrize("names", [["a b"], ["ok", "ok"], ["../x"], [""]])
def test_names_must_be_unique_identifiers(tmp_path: Path, names: list[str]) -> None:
    tests = [SuggestedTests(name, _module("pass"), None) for name in names]
    with pytest.raises(ValueError, match="unique identifier names"):
        check_reproduction(tests, _fake_checkout(tmp_path), _fake_checkout(tmp_path), sys.executable)
