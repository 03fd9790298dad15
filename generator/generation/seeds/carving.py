"""Carving: seed sequences recorded from the project's own tests (and the pull request's).

The tests of a project build the inputs and states its code is about; random generation rarely
does. On base, the project's test files that import a changed module run under pytest in the
worker's sandbox (the worker's `pytest_boot` with the recorder of its `carving`), bounded by
a share of the budget and a per-test timeout; every call they make into the catalog whose
arguments can be rebuilt from code becomes a statement. The tests the pull request adds or
changes run on head first (those tests, not the rest of their files: `changed_tests`): that is
where the new behaviour is exercised. The project's examples (its doctests and the code of its
README and documentation: `examples`) run on base next, as one more test file. The sequences then
enter exploration as its first batches (run, pooled, replayed on both commits, compared,
minimized and rendered like generated ones), with the prefixes that end in an object a later
call uses, so that those objects enter the pools. A project without tests, or whose tests do
not start, costs a note, never the run.

Base's tests of the changed modules also run on head (those the pull request leaves unchanged),
and each test's outcome on each side is kept: a test that passed on base and fails on head, again
when run alone on both, is an existing test the change breaks (`Carving.broken`), with the
operations it called. Base's copy of the tests the pull request changes runs on head as well: one
that passed on base and fails there is a test the pull request had to rewrite, since the change
broke it (`Carving.updated`); its calls show the old behaviour the pull request means to leave.

pytest collects every file of a run before it runs a test, and a large suite's collection can take
all of carving's share: the files run in batches, the nearest file (the one named after a changed
module) alone first. A side whose tests ran no test says why in its note: the error pytest gave
while collecting, or the share spent collecting.
"""

from __future__ import annotations

import ast
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...changes.model import ChangeSet, Checkout
from ...changes.units import is_test_file_name
from ...planning.deadline import CARVE_TEST_TIMEOUT
from ...runtime.packages import FALLBACK_VARIABLE, PYTEST_BOOT, link_pytest
from ...runtime.sequence import CallSequence, prefix_keys, references, sequence_key
from ...runtime.workers import worker_environment
from .changed_tests import WHOLE_FILE, ChangedTests, changed_tests
from .examples import example_tests, project_examples

EXAMPLES_RUN = 2  # the index of the examples' run in `carve`'s runs
MAX_TEST_FILES = 200  # per side: the nearest tests of a huge suite are enough
OUTCOME_ORDER = ("skipped", "passed", "failed")  # a test's outcome is its phases' last in this order
BATCH_FILES = 4  # test files per pytest run after the first file's own run
SKIPPED_FOLDERS = frozenset({".git", ".tox", ".nox", "node_modules", "build", "dist", "venv", ".venv",
                             "site-packages", "__pycache__"})


@dataclass
class Carving:
    """The carved sequences (the pull request's tests first) and what it took."""

    sequences: list[CallSequence] = field(default_factory=list)
    tests: int = 0  # tests run, on both sides
    test_files: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # existing tests (unchanged by the pull request) that pass on base and fail on head, confirmed
    # by a second run of each alone: node id -> the operations the test called
    broken: dict[str, frozenset[str]] = field(default_factory=dict)
    # the pull request's tests that fail on base (run there with head's copy of their files) and
    # pass on head: they state the new behaviour. node id -> the operations the test called
    asserting: dict[str, frozenset[str]] = field(default_factory=dict)
    # base's copy of the tests the pull request changes, which pass on base and fail on head (run
    # there with base's copy of their files): the pull request rewrote what the change broke, so
    # their calls show the old behaviour it means to leave. node id -> the operations the test called
    updated: dict[str, frozenset[str]] = field(default_factory=dict)
    # `sequence_key` of each carved sequence (and prefix) -> the tests whose recording it is
    sources: dict[str, frozenset[str]] = field(default_factory=dict)
    examples: int = 0  # the project's examples run (doctests, the README's and documentation's code)


def carve(changes: ChangeSet, base: Checkout, head: Checkout, python: str, seconds: float,
          test_timeout: float = CARVE_TEST_TIMEOUT, examples: bool = True) -> Carving:
    """Record the calls of the pull request's tests (on head), of the project's examples (the changed
    modules' doctests, the README's and documentation's code, on base; `examples`) and of base's
    tests of the changed modules."""
    with tempfile.TemporaryDirectory(prefix="difforacle-examples-") as folder:
        written = example_tests(project_examples(changes, base.root), Path(folder)) if examples else None
        return _carve(changes, base, head, python, seconds, test_timeout, written)


def _carve(changes: ChangeSet, base: Checkout, head: Checkout, python: str, seconds: float,
           test_timeout: float, examples: tuple[Path, dict[str, str]] | None) -> Carving:
    started = time.monotonic()
    carving = Carving()
    # the catalog's modules: the changed ones and those built on them (the package's root, where
    # `sqlparse.format` is defined): a test's call to one of those is a call the explorer makes too
    modules = [*changes.modules, *changes.importers]
    existing = importing_test_files(base.root, modules)[:MAX_TEST_FILES]
    test_paths = {test.head_path for test in changes.tests}
    changed = [path for path in existing if path in test_paths]
    unchanged = [path for path in existing if path not in test_paths and (head.root / path).is_file()]
    on_head, on_base = _changed_on(changes, "head", head), _changed_on(changes, "base", base)
    # (side, checkout, files or test ids, whether new to carving (counted and noted), whether in one
    # pytest run). First the tests the pull request adds or changes, on head, then base's copy of them,
    # each followed by its run on the other commit for evidence; then the project's examples on base
    # (a third of the time left at most); then base's whole suite, which may take all the time left,
    # and runs base's copy again with the rest of its file; last, base's tests the pull request leaves
    # run again on head for their outcomes.
    added = sorted(path for path in test_paths if (head.root / path).is_file())
    example_file, example_names = examples or (None, {})
    runs = [("head", head, on_head.selection(added), True, True),
            ("base", base, on_base.selection(changed), False, True),
            ("base", base, [str(example_file)] if example_names else [], False, True),
            ("base", base, existing, True, False), ("head", head, unchanged, False, False)]
    outcomes: dict[str, dict[str, str]] = {"base": {}, "head": {}}
    called: dict[str, set[str]] = {}
    sources: dict[str, set[str]] = {}
    for number, (side, checkout, files, new, together) in enumerate(runs):
        left = seconds - (time.monotonic() - started)
        if not files or left <= 1.0:
            continue
        if number == EXAMPLES_RUN:
            left /= 3
        recorded = _record(side, checkout, files, modules, python, left, test_timeout,
                           batch=len(files) if together else None)
        if number == EXAMPLES_RUN:
            recorded = recorded.named(example_names)
            carving.examples = recorded.tests
        if recorded.problem is not None:
            carving.notes.append(recorded.problem)
            continue
        paths = len({file.split("::", 1)[0] for file in files})  # a run of test ids names their files
        if not recorded.tests and new:
            carving.notes.append(f"None of the {paths} test file(s) run on {side} for carving ran a "
                                 f"test ({recorded.why_none()}): nothing was carved from them.")
        elif not recorded.sequences and new:
            carving.notes.append(f"The {recorded.tests} test(s) run on {side} for carving "
                                 f"{recorded.why_no_call()}: nothing was carved from them.")
        carving.test_files += paths if new else 0
        carving.tests += recorded.tests
        carving.sequences += recorded.sequences
        for key, tests in recorded.sources.items():
            sources.setdefault(key, set()).update(tests)
        outcomes[side].update(recorded.outcomes)
        for test, operations in recorded.called.items():
            called.setdefault(test, set()).update(operations)
        if number == 0:
            carving.asserting = _asserting(recorded.outcomes, called, base, head, on_head, modules, python,
                                           (seconds - (time.monotonic() - started)) / 2, test_timeout)
        if number == 1:
            carving.updated = _updated(recorded.outcomes, called, base, head, on_base, modules, python,
                                       (seconds - (time.monotonic() - started)) / 2, test_timeout)
    carving.broken = _confirmed_broken(outcomes, called, unchanged, base, head, modules, python,
                                       seconds - (time.monotonic() - started), test_timeout)
    carving.sources = _sources(carving.sequences, sources)
    carving.sequences = with_object_prefixes(carving.sequences)
    carving.seconds = time.monotonic() - started
    if not carving.test_files and not carving.notes:
        carving.notes.append("No test of the project uses a changed module: nothing was carved from "
                             "tests.")
    return carving


def _confirmed_broken(outcomes: dict[str, dict[str, str]], called: dict[str, set[str]], unchanged: list[str],
                      base: Checkout, head: Checkout, modules: list[str], python: str, seconds: float,
                      test_timeout: float) -> dict[str, frozenset[str]]:
    """The unchanged tests that passed on base and failed on head, and do so again when run alone on
    each side (a test that fails by chance is no evidence); with the operations they called."""
    files = set(unchanged)
    suspects = sorted(test for test, outcome in outcomes["head"].items()
                      if outcome == "failed" and outcomes["base"].get(test) == "passed"
                      and test.split("::", 1)[0] in files)
    if not suspects or seconds <= 2.0:
        return {}
    started = time.monotonic()
    again = {}
    for side, checkout in (("base", base), ("head", head)):
        left = (seconds - (time.monotonic() - started)) / (2 if side == "base" else 1)
        recorded = _record(side, checkout, suspects, modules, python, left, test_timeout, batch=len(suspects))
        again[side] = recorded.outcomes
    return {test: frozenset(called.get(test, ())) for test in suspects
            if again["base"].get(test) == "passed" and again["head"].get(test) == "failed"}


def _changed_on(changes: ChangeSet, side: str, checkout: Checkout) -> ChangedTests:
    """The tests the pull request adds or changes in its test files, as `side` has them. Base's
    changed lines are the merge base's: on another base commit every test of those files counts."""
    if side == "base" and checkout.sha != changes.merge_base:
        return ChangedTests({t.base_path: frozenset({WHOLE_FILE}) for t in changes.tests if t.base_path})
    lines = [(t.head_path, t.head_lines) if side == "head" else (t.base_path, t.base_lines)
             for t in changes.tests]
    return changed_tests(checkout.root, [(path, changed) for path, changed in lines if path])


def _asserting(on_head: dict[str, str], called: dict[str, set[str]], base: Checkout, head: Checkout,
               changed: ChangedTests, modules: list[str], python: str, seconds: float,
               test_timeout: float) -> dict[str, frozenset[str]]:
    """The tests the pull request adds or changes that pass on head and fail on base, run there with
    head's copy of their files (a test that cannot run on base at all, its file failing to import a
    new name, fails there too); with the operations they called."""
    return _fail_on_the_other_side(on_head, called, head, (base, "base"), changed, modules, python, seconds,
                                   test_timeout)


def _updated(on_base: dict[str, str], called: dict[str, set[str]], base: Checkout, head: Checkout,
             changed: ChangedTests, modules: list[str], python: str, seconds: float,
             test_timeout: float) -> dict[str, frozenset[str]]:
    """Base's copy of the tests the pull request changes or removes (`on_base`: the outcomes of their
    files) that pass on base and fail on head, run there with base's copy of their files; with the
    operations they called."""
    return _fail_on_the_other_side(on_base, called, base, (head, "head"), changed, modules, python, seconds,
                                   test_timeout)


def _fail_on_the_other_side(outcomes: dict[str, str], called: dict[str, set[str]], where: Checkout,
                            other_side: tuple[Checkout, str], changed: ChangedTests, modules: list[str],
                            python: str, seconds: float, test_timeout: float) -> dict[str, frozenset[str]]:
    """The `changed` tests that passed in `where` and fail in `other`, run there (only those) with
    `where`'s copy of their files, which are put back afterwards; with the operations they called."""
    passed = sorted(test for test, outcome in outcomes.items() if outcome == "passed" and test in changed)
    if not passed or seconds <= 2.0:
        return {}
    files = sorted({test.split("::", 1)[0] for test in passed})
    targets = changed.selection(files)
    other, side = other_side
    kept: dict[Path, bytes | None] = {}
    try:
        for path in files:
            target = other.root / path
            kept[target] = target.read_bytes() if target.is_file() else None
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(where.root / path, target)
        recorded = _record(side, other, targets, modules, python, seconds, test_timeout, batch=len(targets))
    finally:
        for target, content in kept.items():
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(content)
    if recorded.problem is not None or not recorded.finished:
        return {}  # an outcome the other side never got to is no evidence
    return {test: frozenset(called.get(test, ())) for test in passed if recorded.failed(test)}


def _sources(sequences: list[CallSequence], made_by: dict[str, set[str]]) -> dict[str, frozenset[str]]:
    """For each sequence and each of its prefixes, the tests whose recordings they come from."""
    sources: dict[str, set[str]] = {}
    for statements in sequences:
        tests = made_by.get(sequence_key(statements))
        for key in prefix_keys(statements) if tests else ():
            sources.setdefault(key, set()).update(tests)
    return {key: frozenset(tests) for key, tests in sources.items()}


def with_object_prefixes(sequences: list[CallSequence]) -> list[CallSequence]:
    """Each sequence, after the prefixes that end in an object a later statement uses: exploration
    pools the last value of a sequence, and those objects are what the tests built with care."""
    seen: set[str] = set()
    out: list[CallSequence] = []
    for statements in sequences:
        used = {ref for statement in statements for ref in references(statement)}
        for end in [*sorted(used), len(statements) - 1]:
            prefix = statements[: end + 1]
            text = sequence_key(prefix)
            if text not in seen:
                seen.add(text)
                out.append(prefix)
    return out


def importing_test_files(root: Path, modules: list[str]) -> list[str]:
    """Repository-relative paths of the test files under `root` that import one of `modules`
    (or the package above it: `import pkg` reaches `pkg.mod`), nearest names first."""
    wanted = set(modules) | {module.split(".")[0] for module in modules}
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("."))
        for name in sorted(files):
            if is_test_file_name(name):
                path = Path(folder) / name
                if _imports(path, wanted):
                    found.append(path.relative_to(root).as_posix())
    stems = {module.rsplit(".", 1)[-1] for module in modules}
    return sorted(found, key=lambda path: (not any(stem in Path(path).stem for stem in stems), path))


def _imports(path: Path, wanted: set[str]) -> bool:
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name in wanted or alias.name.split(".")[0] in wanted
                                                for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module in wanted or node.module.split(".")[0] in wanted):
            return True
    return False


@dataclass
class _Recorded:
    """What one side's pytest runs recorded, and what they said when they ran no test."""

    sequences: list[CallSequence] = field(default_factory=list)
    tests: int = 0
    collection_error: str | None = None  # pytest's first collection error, as its summary gives it
    uncollected: set[str] = field(default_factory=set)  # test files pytest could not collect
    collecting_seconds: float | None = None  # a run stopped by the time limit before it ran a test
    problem: str | None = None  # the tests could not run at all
    outcomes: dict[str, str] = field(default_factory=dict)  # node id -> passed, failed or skipped
    called: dict[str, set[str]] = field(default_factory=dict)  # node id -> the operations it called
    sources: dict[str, set[str]] = field(default_factory=dict)  # sequence_key -> the tests that made it
    finished: bool = False  # every batch ran (none was cut by the time limit)

    def named(self, names: dict[str, str]) -> _Recorded:
        """The same recording with each test of the examples' file (`::test_example_3`) named by
        its example's place (`README.md:12`): what the carved sequences say they come from. Their
        outcomes are dropped: an example is no test of the project's, passing or failing."""
        def name(test: str) -> str:
            return names.get(test.rsplit("::", 1)[-1], test)

        self.sources = {key: {name(test) for test in tests} for key, tests in self.sources.items()}
        self.called = {name(test): operations for test, operations in self.called.items()}
        self.outcomes = {}
        return self

    def failed(self, test: str) -> bool:
        """Whether the test failed here. One missing from the outcomes failed only if its file did not
        collect (it imports a name this side lacks); otherwise its id is another here (a parametrized
        id made of a clock reading or an address), which says nothing."""
        outcome = self.outcomes.get(test)
        return outcome == "failed" if outcome is not None else test.split("::", 1)[0] in self.uncollected

    def why_no_call(self) -> str:
        """Why tests that ran were carved into no sequence."""
        calling = sum(1 for operations in self.called.values() if operations)
        if not calling:
            return ("called no operation of the changed modules or of those built on them (they reach the "
                    "changed code through other code only)")
        return (f"called the changed code's operations ({calling} of them did), but with arguments that "
                "cannot be rebuilt from code (objects of the tests' own classes or helpers)")

    def why_none(self) -> str:
        if self.collection_error:
            return f"pytest could not collect them: {self.collection_error}"
        if self.collecting_seconds is not None:
            return f"collecting them took the {self.collecting_seconds:.0f} s carving had left"
        return "they collected none"


def _record(side: str, checkout: Checkout, files: list[str], modules: list[str], python: str,
            seconds: float, test_timeout: float, batch: int | None = None) -> _Recorded:
    """The sequences, counts and outcomes of the pytest runs of `files` (or test ids) in `checkout`,
    in batches (the first file alone, or `batch` at a time), until `seconds` have passed."""
    started = time.monotonic()
    recorded = _Recorded()
    tmp = Path(tempfile.mkdtemp(prefix=f"difforacle-carve-{side}-")).resolve()
    try:
        fallback, scratch = tmp / "pytest", tmp / "scratch"
        fallback.mkdir()
        scratch.mkdir()
        link_pytest(fallback)
        env = {k: v for k, v in worker_environment(checkout, 0, str(scratch)).items()
               if not k.startswith("PYTEST")}
        env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", FALLBACK_VARIABLE: str(fallback)})
        batches = _batches(files) if batch is None else _chunks(files, batch)
        for number, batch_files in enumerate(batches):
            left = seconds - (time.monotonic() - started)
            if left <= 1.0:
                break
            out, log = tmp / f"carved-{number}.jsonl", tmp / f"pytest-{number}.log"
            options = {"test_timeout": test_timeout, "memory_mb": 2048, "cpu_seconds": math.ceil(left) + 5,
                       "carve": {"modules": modules, "out": str(out)}}
            command = [python, str(PYTEST_BOOT), json.dumps(options), "-p", "no:cacheprovider", "-q",
                       "-o", "addopts=", "--rootdir", str(checkout.root), "--continue-on-collection-errors",
                       "--disable-warnings", "--tb=no", "-p", "no:randomly", *batch_files]
            timed_out = False
            try:
                with log.open("wb") as output:
                    subprocess.run(command, cwd=checkout.root, env=env, stdin=subprocess.DEVNULL,
                                   stdout=output, stderr=subprocess.STDOUT, timeout=left)
            except subprocess.TimeoutExpired:
                timed_out = True  # what was recorded by then is kept (the recorder flushes each sequence)
            except OSError as exc:
                recorded.problem = (f"The project's tests could not run on {side} for carving: "
                                    f"{exc.strerror or exc}.")
                return recorded
            if not out.exists() and not timed_out:  # the recorder never started: pytest did not
                recorded.problem = (f"The project's tests did not start on {side} ({_last_line(log)}): "
                                    "nothing was carved from them.")
                return recorded
            errors = _collection_errors(log, checkout)
            recorded.uncollected.update(error.split(" - ", 1)[0] for error in errors if "::" not in error)
            if not _read(out, recorded):
                recorded.collection_error = recorded.collection_error or next(iter(errors), None)
                if timed_out:
                    recorded.collecting_seconds = left
            recorded.finished = not timed_out and number == len(batches) - 1
        return recorded
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _batches(files: list[str]) -> list[list[str]]:
    """The first (nearest) file alone, then the others BATCH_FILES at a time."""
    return [files[:1], *_chunks(files[1:], BATCH_FILES)]


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _last_line(log: Path) -> str:
    """The last line a run printed (why it stopped), cut to a readable length."""
    try:
        lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
                 if line.strip()]
    except OSError:
        return "it printed nothing"
    last = lines[-1].strip() if lines else "it printed nothing"
    return last if len(last) <= 200 else last[:197] + "..."


def _collection_errors(log: Path, checkout: Checkout) -> list[str]:
    """pytest's `ERROR path - Exception: message` lines of its short summary, without the checkout's
    folder (its paths read as the repository's); a path without `::` is a file that did not collect."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = [line.removeprefix("ERROR ").replace(str(checkout.root) + os.sep, "")
             for line in text.splitlines() if line.startswith("ERROR ")]
    return [error if len(error) <= 300 else error[:297] + "..." for error in found]


def _read(out: Path, recorded: _Recorded) -> int:
    """Add what a run's recorder wrote to `recorded`: its sequences, each test's outcome (failed if
    any phase failed, else passed if its call passed, else skipped) and the operations it called;
    the number of tests it ran (0 when it never started)."""
    try:
        lines = out.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    counts: dict = {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by the time limit
        if "sequence" in record or "repeat" in record:
            statements = record.get("sequence") or record["repeat"]
            if "sequence" in record:
                recorded.sequences.append(statements)
            if "test" in record:
                recorded.sources.setdefault(sequence_key(statements), set()).add(record["test"])
        elif "outcome" in record:  # written for a call's outcome, and for any phase that failed or skipped
            test, _, outcome = record["outcome"]
            known = recorded.outcomes.get(test, "skipped")
            recorded.outcomes[test] = max(known, outcome, key=OUTCOME_ORDER.index)
        elif "called" in record:
            test, operations = record["called"]
            recorded.called.setdefault(test, set()).update(operations)
        counts = record.get("counts", counts)
    tests = counts.get("tests", 0)
    recorded.tests += tests
    return tests
