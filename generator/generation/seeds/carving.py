"""Carving: seed sequences recorded from the project's own tests (and the pull request's).

The tests of a project build the inputs and states its code is about; random generation rarely
does. On base, the project's test files that import a changed module run under pytest in the
worker's sandbox (the worker's `pytest_boot` with the recorder of its `carving`), bounded by
a share of the budget and a per-test timeout; every call they make into the catalog whose
arguments can be rebuilt from code becomes a statement. The test files the pull request adds or
changes are run on head first: that is where the new behaviour is exercised. The sequences then
enter exploration as its first batches (run, pooled, replayed on both commits, compared,
minimized and rendered like generated ones), with the prefixes that end in an object a later
call uses, so that those objects enter the pools. A project without tests, or whose tests do
not start, costs a note, never the run.
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
from ...runtime.sequence import CallSequence, references
from ...runtime.workers import worker_environment

MAX_TEST_FILES = 200  # per side: the nearest tests of a huge suite are enough
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


def carve(changes: ChangeSet, base: Checkout, head: Checkout, python: str, seconds: float,
          test_timeout: float = CARVE_TEST_TIMEOUT) -> Carving:
    """Record the calls of the pull request's tests (on head) and of base's tests of the changed modules."""
    started = time.monotonic()
    carving = Carving()
    modules = list(changes.modules)
    runs = [("head", head, sorted(p for p in changes.tests if (head.root / p).is_file())),
            ("base", base, importing_test_files(base.root, modules))]
    for side, checkout, found in runs:
        files = found[:MAX_TEST_FILES]
        left = seconds - (time.monotonic() - started)
        if not files or left <= 1.0:
            continue
        recorded = _record(side, checkout, files, modules, python, left, test_timeout)
        if isinstance(recorded, str):
            carving.notes.append(recorded)
            continue
        sequences, counts = recorded
        if not counts.get("tests"):
            carving.notes.append(f"None of the {len(files)} test file(s) run on {side} for carving ran a "
                                 "test (they did not collect): nothing was carved from them.")
        carving.test_files += len(files)
        carving.tests += counts.get("tests", 0)
        carving.sequences += sequences
    carving.sequences = with_object_prefixes(carving.sequences)
    carving.seconds = time.monotonic() - started
    if not carving.test_files and not carving.notes:
        carving.notes.append("No test of the project uses a changed module: nothing was carved from "
                             "tests.")
    return carving


def with_object_prefixes(sequences: list[CallSequence]) -> list[CallSequence]:
    """Each sequence, after the prefixes that end in an object a later statement uses: exploration
    pools the last value of a sequence, and those objects are what the tests built with care."""
    seen: set[str] = set()
    out: list[CallSequence] = []
    for statements in sequences:
        used = {ref for statement in statements for ref in references(statement)}
        for end in [*sorted(used), len(statements) - 1]:
            prefix = statements[: end + 1]
            text = json.dumps(prefix, sort_keys=True)
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


def _record(side: str, checkout: Checkout, files: list[str], modules: list[str], python: str,
            seconds: float, test_timeout: float) -> tuple[list[CallSequence], dict] | str:
    """The sequences and counts of one pytest run of `files` in `checkout`, or a note saying why none."""
    tmp = Path(tempfile.mkdtemp(prefix=f"difforacle-carve-{side}-")).resolve()
    try:
        fallback, scratch, out = tmp / "pytest", tmp / "scratch", tmp / "carved.jsonl"
        fallback.mkdir()
        scratch.mkdir()
        link_pytest(fallback)
        options = {"test_timeout": test_timeout, "memory_mb": 2048, "cpu_seconds": math.ceil(seconds) + 5,
                   "carve": {"modules": modules, "out": str(out)}}
        env = {k: v for k, v in worker_environment(checkout, 0, str(scratch)).items()
               if not k.startswith("PYTEST")}
        env.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", FALLBACK_VARIABLE: str(fallback)})
        command = [python, str(PYTEST_BOOT), json.dumps(options), "-p", "no:cacheprovider", "-q",
                   "-o", "addopts=", "--rootdir", str(checkout.root), "--continue-on-collection-errors",
                   "--disable-warnings", "--tb=no", "-p", "no:randomly", *files]
        try:
            subprocess.run(command, cwd=checkout.root, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=seconds)
        except subprocess.TimeoutExpired:
            pass  # what was recorded by then is kept (the recorder flushes each sequence)
        except OSError as exc:
            return f"The project's tests could not run on {side} for carving: {exc.strerror or exc}."
        return _read(out, side)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read(out: Path, side: str) -> tuple[list[CallSequence], dict] | str:
    try:
        lines = out.read_text(encoding="utf-8").splitlines()
    except OSError:
        return f"The project's tests did not start on {side}: nothing was carved from them."
    sequences, counts = [], {}
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by the time limit
        if "sequence" in record:
            sequences.append(record["sequence"])
        counts = record.get("counts", counts)
    return sequences, counts
