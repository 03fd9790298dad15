"""The reproduction check: do a finding's suggested tests really tell base and head apart?

A finding is reported only if its `pin_base` test (base's behaviour) passes on base and fails
on head, and its `pin_head` test (head's behaviour, optional) fails on base and passes on head,
run by pytest in fresh processes under the project's interpreter, as a reviewer would run them.

All findings share one pytest process per commit (two in all, run at the same time); every
test is its own module, so a module that cannot be imported costs only its own finding.
Outcomes come from pytest's JUnit XML report. The processes run
the worker's `pytest_boot`: the worker sandbox's limits and audit hook, a per-test timeout, an
empty pytest configuration and no plugin autoloading, so neither the project's nor the
user's pytest setup can change an outcome. Unlike the engine's workers, the hash seed is
random: whoever runs a suggested test later gets a random one too, so a test that only
passes under one hash order should (and very likely will) fail the check.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from ..changes.model import Checkout
from ..planning.deadline import REPRODUCE_RUN_TIMEOUT, REPRODUCE_TEST_TIMEOUT
from ..report.model import Difference
from ..runtime.packages import FALLBACK_VARIABLE, PYTEST_BOOT, link_pytest
from ..runtime.workers import worker_environment
from .render import UNPINNABLE

MESSAGE_LIMIT = 160

Status = Literal["passed", "failed", "skipped", "missing"]
SIDES = ("base", "head")
# What each suggested test must do on (base, head).
EXPECTED: dict[str, tuple[Status, Status]] = {"pin_base": ("passed", "failed"),
                                              "pin_head": ("failed", "passed")}


@dataclass(frozen=True)
class SuggestedTests:
    """The tests rendered for one finding: each a pytest module's source with one test function."""

    name: str  # unique, identifier-safe stem, e.g. "d1_return_pkg_mod_parse"
    pin_base: str
    pin_head: str | None


@dataclass(frozen=True)
class Reproduction:
    reproduced: bool
    detail: str  # what happened, or why the finding did not reproduce
    checked: bool = True  # False: the check ran out of time before it could tell


@dataclass(frozen=True)
class _Outcome:
    status: Status
    message: str = ""


@dataclass
class _CommitRun:
    """The outcome of each test module (by file stem) on one commit, or why there are none."""

    outcomes: dict[str, _Outcome] = field(default_factory=dict)
    problem: str | None = None
    out_of_time: bool = False  # stopped by the run's time limit: the findings are not judged


def check_reproduction(tests: Sequence[SuggestedTests], base: Checkout, head: Checkout, python: str, *,
                       test_timeout: float = REPRODUCE_TEST_TIMEOUT,
                       run_timeout: float = REPRODUCE_RUN_TIMEOUT,
                       memory_mb: int = 2048) -> dict[str, Reproduction]:
    """Run every finding's tests on both commits (one pytest process per commit) and judge each finding.

    Never raises for what the project's code or interpreter does: a run that cannot start,
    crashes or exceeds `run_timeout` makes every finding unreproduced, with the reason.
    Results are keyed by name, in the order of `tests`.
    """
    _check_names(tests)
    if not tests:
        return {}
    modules: dict[str, str] = {}
    for test in tests:
        modules[_stem(test.name, "pin_base")] = test.pin_base
        if test.pin_head is not None:
            modules[_stem(test.name, "pin_head")] = test.pin_head
    fallback = Path(tempfile.mkdtemp(prefix="difforacle-pytest-"))
    try:
        link_pytest(fallback)
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {side: pool.submit(_run_commit, side, checkout, modules, python, fallback,
                                         test_timeout, run_timeout, memory_mb)
                       for side, checkout in zip(SIDES, (base, head), strict=True)}
            runs = {side: future.result() for side, future in futures.items()}
    finally:
        shutil.rmtree(fallback, ignore_errors=True)
    return {test.name: _judge(test, runs) for test in tests}


@dataclass
class Reproduced:
    """The stage's result: the differences to report, in order, and what the check left out."""

    differences: list[Difference]
    notes: list[str] = field(default_factory=list)


def reproduce(differences: list[Difference], base: Checkout, head: Checkout, python: str, *,
              run_timeout: float = REPRODUCE_RUN_TIMEOUT, show_unreproduced: bool = False) -> Reproduced:
    """Run both flavours of each difference's test with pytest on both commits; keep what reproduces
    (and, with `show_unreproduced`, the rest, marked `reproduced: false`). When the check runs out of
    `run_timeout` (what the budget has left), the confirmed differences are kept, unchecked
    (`reproduced: null`): the budget's end must not hide what confirmation showed."""
    if not differences:
        return Reproduced([])
    suggested = {f"d{n}": SuggestedTests(f"d{n}", d.test, d.pin_head)
                 for n, d in enumerate(differences, 1) if d.test != UNPINNABLE}
    results = check_reproduction(list(suggested.values()), base, head, python, run_timeout=run_timeout)
    kept, hidden, unchecked = [], 0, 0
    for number, difference in enumerate(differences, 1):
        result = results.get(f"d{number}")
        if result is not None and not result.checked:
            difference.reproduced = None
            unchecked += 1
            kept.append(difference)
            continue
        difference.reproduced = result is not None and result.reproduced
        if difference.reproduced or show_unreproduced:
            kept.append(difference)
        else:
            hidden += 1
    notes = [f"{hidden} confirmed difference(s) hidden: their suggested test did not reproduce them "
             "under pytest in a fresh process (--show-unreproduced reports them)."] if hidden else []
    if unchecked:
        notes.append(f"{unchecked} confirmed difference(s) were not checked by pytest: the run's time ran "
                     "out first (they are reported unchecked).")
    return Reproduced(kept, notes)


def _check_names(tests: Sequence[SuggestedTests]) -> None:
    """Names become file names and keys: a bad or repeated one is a bug in the caller."""
    seen: set[str] = set()
    for test in tests:
        if not (test.name.isascii() and test.name.isidentifier()) or test.name in seen:
            raise ValueError(f"suggested tests need unique identifier names, got {test.name!r}")
        seen.add(test.name)


def _stem(name: str, kind: str) -> str:
    return f"test_{name}_{kind}"






# ---------------------------------------------------------------- one commit


def _run_commit(side: str, checkout: Checkout, modules: Mapping[str, str], python: str, fallback: Path,
                test_timeout: float, run_timeout: float, memory_mb: int) -> _CommitRun:
    """All test modules in one pytest process, in a fresh folder outside the checkouts."""
    tmp = Path(tempfile.mkdtemp(prefix=f"difforacle-reproduce-{side}-")).resolve()
    try:
        return _run_pytest(side, checkout, modules, python, fallback, tmp,
                           {"test_timeout": test_timeout, "memory_mb": memory_mb,
                            "cpu_seconds": math.ceil(run_timeout) + 5}, run_timeout)
    except OSError as exc:
        return _CommitRun(problem=f"pytest could not run on {side}: {exc}")
    except ElementTree.ParseError as exc:
        return _CommitRun(problem=f"pytest's report on {side} could not be read: {exc}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run_pytest(side: str, checkout: Checkout, modules: Mapping[str, str], python: str, fallback: Path,
                tmp: Path, options: dict, run_timeout: float) -> _CommitRun:
    folder, scratch, report = tmp / "tests", tmp / "scratch", tmp / "report.xml"
    folder.mkdir()
    scratch.mkdir()
    for stem, source in modules.items():
        (folder / f"{stem}.py").write_text(source, encoding="utf-8")
    (tmp / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = worker_environment(checkout, 0, str(scratch))  # HOME and TMPDIR in scratch
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST")}
    env.update({"PYTHONHASHSEED": "random", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                FALLBACK_VARIABLE: str(fallback)})
    command = [python, str(PYTEST_BOOT), json.dumps(options),
               "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp), "-c", str(tmp / "pytest.ini"),
               "--noconftest", "--continue-on-collection-errors", "--junitxml", str(report),
               "-o", "junit_family=xunit2", "-o", "junit_logging=no", "--disable-warnings",
               "--show-capture=no", "--tb=short", str(folder)]
    with open(tmp / "output.txt", "w+b") as output:
        try:
            process = subprocess.Popen(command, cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=output,
                                       stderr=subprocess.STDOUT)
        except OSError as exc:
            return _CommitRun(problem=f"cannot start the interpreter {python!r} for {side}: "
                                      f"{exc.strerror or exc}")
        try:
            status = process.wait(timeout=run_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return _CommitRun(problem=f"the pytest run on {side} did not finish within {run_timeout:g} s "
                                      "and was stopped", out_of_time=True)
        if not report.exists():
            return _CommitRun(problem=f"pytest on {side} ended without a report "
                                      f"({_exit_description(status)}): {_last_line(output)}")
    return _CommitRun(_outcomes(report, modules.keys()))


def _exit_description(status: int) -> str:
    return f"killed by signal {-status}" if status < 0 else f"exit status {status}"


def _last_line(output: IO[bytes]) -> str:
    output.seek(0, 2)
    output.seek(max(0, output.tell() - 4000))
    lines = [line.strip() for line in output.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return _shorten(lines[-1]) if lines else "no output"


# ---------------------------------------------------------------- JUnit XML


def _outcomes(report: Path, stems: Iterable[str]) -> dict[str, _Outcome]:
    """One outcome per test module: a collection error is a failure of the module's file."""
    known = set(stems)
    cases: dict[str, list[_Outcome]] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        # A test's classname is "tests.<stem>[.Class]"; a collection error has only name "tests.<stem>".
        parts = f"{case.get('classname', '')}.{case.get('name', '')}".split(".")
        stem = next((part for part in parts if part in known), None)
        if stem is not None:
            cases.setdefault(stem, []).append(_case_outcome(case))
    return {stem: _combine(outcomes) for stem, outcomes in cases.items()}


def _case_outcome(case: ElementTree.Element) -> _Outcome:
    for tag in ("failure", "error"):
        element = case.find(tag)
        if element is not None:
            return _Outcome("failed", _failure_message(element))
    skipped = case.find("skipped")
    if skipped is not None:
        return _Outcome("skipped", _shorten(skipped.get("message") or skipped.get("type") or ""))
    return _Outcome("passed")


def _failure_message(element: ElementTree.Element) -> str:
    """The exception line: pytest's message, or for a collection error the last `E` line of the traceback."""
    message = element.get("message") or ""
    if message in ("", "collection failure"):
        raised = [line[1:].strip() for line in (element.text or "").splitlines() if line.startswith("E ")]
        message = raised[-1] if raised else message or element.tag
    return _shorten(message.removeprefix("AssertionError: "))  # pytest strips it only sometimes


def _combine(outcomes: list[_Outcome]) -> _Outcome:
    """A module passes if all its tests passed, fails if any failed; otherwise (skips, xfails) neither."""
    for status in ("failed", "skipped"):
        found = [outcome for outcome in outcomes if outcome.status == status]
        if found:
            return found[0]
    return outcomes[0]


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT - 3] + "..."


# ---------------------------------------------------------------- verdict


def _judge(test: SuggestedTests, runs: Mapping[str, _CommitRun]) -> Reproduction:
    problems: list[str] = []
    kinds = ("pin_base", "pin_head") if test.pin_head is not None else ("pin_base",)
    for kind in kinds:
        for side, expected in zip(SIDES, EXPECTED[kind], strict=True):
            run = runs[side]
            if run.problem is not None:
                problems.append(run.problem)
                continue
            outcome = run.outcomes.get(_stem(test.name, kind), _Outcome("missing"))
            if outcome.status != expected:
                problems.append(_mismatch(kind, side, expected, outcome))
    if problems:
        checked = not any(run.out_of_time for run in runs.values())
        return Reproduction(False, "not reproduced: " + "; ".join(dict.fromkeys(problems)), checked)
    failure = runs["head"].outcomes[_stem(test.name, "pin_base")].message
    detail = "pin_base passed on base and failed on head" + (f" ({failure})" if failure else "")
    if test.pin_head is None:
        return Reproduction(True, detail + "; no pin_head test")
    return Reproduction(True, detail + "; pin_head failed on base and passed on head")


def _mismatch(kind: str, side: str, expected: Status, outcome: _Outcome) -> str:
    verb = "pass" if expected == "passed" else "fail"
    if outcome.status == "missing":
        return f"{kind} did not run on {side} (no result in pytest's report)"
    text = f"{kind} {outcome.status} on {side}, expected to {verb}"
    if outcome.status == "skipped":
        text = f"{kind} was skipped on {side}, expected to {verb}"
    return f"{text}: {outcome.message}" if outcome.message else text
