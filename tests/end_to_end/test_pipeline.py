"""Integration tests of the pipeline: small git repositories in tmp_path,
`difforacle.generator.analyze` on them.

The host runs in-process; the project code always runs in the engine's worker subprocesses.
Each test bounds the exploration with a small budget and/or `max_sequences`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.analysis import differences_summary, run_analyze, run_pytest_file
from support.paths import BENCHMARKS
from support.repos import GIT_ENV, RepoBuilder, export_commit, make_pr
from support.services import service_unavailable

from difforacle.generator import Options, Progress, Report, analyze
from difforacle.generator.report.model import Difference
from difforacle.generator.runtime.workers import BOOT

# ---------------------------------------------------------------- helpers


def _only(report: Report, target: str) -> list[Difference]:
    return [d for d in report.differences if d.target == target]


def _assert_test_passes_on_base_fails_on_head(builder: RepoBuilder, tmp_path: Path, difference: Difference,
                                              root: str = "") -> None:
    """Run the difference's rendered test against exports of main (must pass) and feature (must fail)."""
    base = export_commit(builder.root, "main", tmp_path / "export-base")
    head = export_commit(builder.root, "feature", tmp_path / "export-head")
    on_base = run_pytest_file(difference.test, tmp_path / "run-base", base / root)
    assert on_base.returncode == 0 and "1 passed" in on_base.stdout, \
        f"test fails on base:\n{difference.test}\n{on_base.stdout}{on_base.stderr}"
    on_head = run_pytest_file(difference.test, tmp_path / "run-head", head / root)
    assert on_head.returncode == 1, f"test does not fail on head:\n{difference.test}\n{on_head.stdout}"
    assert "1 failed" in on_head.stdout, on_head.stdout  # a failing test, not a collection error


# ---------------------------------------------------------------- 1. changed return value

UNITS_BASE = '''\
"""Unit conversions."""


def seconds(unit):
    """Seconds in one unit."""
    if unit == "s":
        return 1
    if unit == "m":
        return 60
    if unit == "h":
        return 3600
    if unit == "d":
        return 86400
    raise ValueError(f"unknown unit: {unit!r}")


def double(x):
    return 2 * x
'''
UNITS_HEAD = UNITS_BASE.replace("return 3600", "return 3660")


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["flat", "src"])
def test_changed_return_value(builder: RepoBuilder, tmp_path: Path, layout: str) -> None:
    root = "src/" if layout == "src" else ""
    extra = {"pyproject.toml": "[project]\nname = 'pkg'\nversion = '0'\n"} if layout == "src" else {}
    make_pr(builder, {f"{root}pkg/__init__.py": "", f"{root}pkg/mod.py": UNITS_BASE, **extra},
            {f"{root}pkg/mod.py": UNITS_HEAD})

    report = run_analyze(builder, budget=5)

    found = _only(report, "pkg.mod:seconds")
    assert [d.kind for d in found] == ["return"], differences_summary(report)
    [difference] = found
    assert (difference.base, difference.head) == ("3600", "3660")
    assert difference.path == f"{root}pkg/mod.py"
    assert difference.line == 11
    assert "'h'" in difference.test or '"h"' in difference.test
    assert "seconds(" in difference.test and "3600" in difference.test
    assert report.differences == found, "only the changed function differs"
    compile(difference.test, "generated", "exec")
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path, difference, root)


# ---------------------------------------------------------------- 2. changed exception

LOOKUP_BASE = '''\
TABLE = {"alpha": 1, "beta": 2}


def lookup(key):
    if key not in TABLE:
        raise ValueError(f"unknown key: {key!r}")
    return TABLE[key]
'''


@pytest.mark.slow
@pytest.mark.parametrize(
    ("new_body", "head_text"),
    [
        ("    return TABLE[key]\n", "raises KeyError"),  # the check is gone: KeyError instead
        ("    return TABLE.get(key)\n", "returns normally"),  # no exception at all
    ],
    ids=["keyerror", "returns"],
)
def test_changed_exception(builder: RepoBuilder, tmp_path: Path, new_body: str, head_text: str) -> None:
    head = LOOKUP_BASE[: LOOKUP_BASE.index("    if key not in TABLE:")] + new_body
    assert head != LOOKUP_BASE
    make_pr(builder, {"pkg/__init__.py": "", "pkg/lookup.py": LOOKUP_BASE}, {"pkg/lookup.py": head})

    report = run_analyze(builder, budget=5)

    found = _only(report, "pkg.lookup:lookup")
    assert found and all(d.kind == "exception" for d in found), differences_summary(report)
    difference = found[0]
    assert difference.base.startswith("raises ValueError"), difference.base
    assert difference.head.startswith(head_text), difference.head
    assert "pytest.raises(ValueError" in difference.test
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path, difference)


# ---------------------------------------------------------------- 3. state seen through an observer

BAG_BASE = '''\
class Recent:
    """Keeps the last `limit` items added."""

    def __init__(self, limit=3):
        if limit < 1:
            raise ValueError("limit must be positive")
        self.limit = limit
        self._items = []

    def add(self, item):
        if len(self._items) >= self.limit:
            del self._items[0]
        self._items.append(item)

    def size(self):
        return len(self._items)

    @property
    def newest(self):
        return self._items[-1] if self._items else None
'''
BAG_HEAD = BAG_BASE.replace("if len(self._items) >= self.limit:", "if len(self._items) > self.limit:")


@pytest.mark.slow
def test_method_changes_what_an_observer_reports(builder: RepoBuilder, tmp_path: Path) -> None:
    make_pr(builder, {"bag.py": BAG_BASE}, {"bag.py": BAG_HEAD})

    report = run_analyze(builder, budget=5)

    assert report.differences, "the off-by-one in Recent.add was not found"
    assert {d.target for d in report.differences} == {"bag:Recent.add"}, differences_summary(report)
    assert {d.kind for d in report.differences} <= {"observer", "state"}
    difference = report.differences[0]
    assert difference.path == "bag.py" and difference.line == 11
    assert "Recent(" in difference.test and ".add(" in difference.test
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path, difference)


# ---------------------------------------------------------------- 4. removed public function

API_BASE = '''\
def keep(x):
    return x + 1


def legacy(x):
    return x * 2
'''
API_HEAD = '''\
def keep(x):
    return x + 1
'''


def test_removed_public_function_is_an_api_difference(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/api.py": API_BASE}, {"pkg/api.py": API_HEAD})

    report = run_analyze(builder, budget=4)

    assert [(d.kind, d.target) for d in report.differences] == [("api", "pkg.api:legacy")], \
        differences_summary(report)
    difference = report.differences[0]
    assert difference.path == "pkg/api.py"
    compile(difference.test, "generated", "exec")



BOX = '''\
class Box:
    def __init__(self, v=0):
        self.v = v

    def get(self):
        return self.v

    def bump(self, by=1):
        self.v += by
        return self.v
'''
BUMP = "    def bump(self, by=1):\n        self.v += by\n        return self.v\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("head", "expected", "head_text"),
    [
        (BOX.replace(BUMP, ""), ("api", "box:Box.bump"), "API change (missing)"),
        (BOX.replace("def bump(self, by=1)", "def bump(self, by)"), ("api", "box:Box.bump"),
         "API change (signature)"),
        (BOX.replace("class Box", "class Crate"), ("api", "box:Box"), "API change (missing)"),
        (BOX.replace("self.v += by", "self.v += by\n        self.extra = 1"), ("state", "box:Box.bump"), "1"),
    ],
    ids=["removed-method", "signature", "renamed-class", "new-attribute"],
)
def test_class_changes(builder: RepoBuilder, head: str, expected: tuple[str, str], head_text: str) -> None:
    make_pr(builder, {"box.py": BOX}, {"box.py": head})

    report = run_analyze(builder, budget=4, max_sequences=300)

    assert [(d.kind, d.target) for d in report.differences] == [expected], differences_summary(report)
    assert report.differences[0].head.startswith(head_text), report.differences[0].head


def test_added_function_only_is_no_difference(builder: RepoBuilder) -> None:
    make_pr(builder, {"box.py": BOX}, {"box.py": BOX + "\n\ndef extra(x):\n    return x\n"})
    report = run_analyze(builder, budget=4, max_sequences=300)
    assert report.differences == [], differences_summary(report)


def test_module_constant_change_is_found_through_its_users(builder: RepoBuilder) -> None:
    source = "RATE = 3600\n\n\ndef hours(n):\n    return n * RATE\n"
    make_pr(builder, {"rate.py": source}, {"rate.py": source.replace("3600", "3660")})
    report = run_analyze(builder, budget=4, max_sequences=300)
    # through its user, and as the module's value itself (read and compared)
    assert sorted((d.kind, d.target) for d in report.differences) == [("return", "rate:RATE"),
                                                                      ("return", "rate:hours")], \
        differences_summary(report)
    hours = next(d for d in report.differences if d.target == "rate:hours")
    assert float(hours.head) == pytest.approx(float(hours.base) * 3660 / 3600)
    rate = next(d for d in report.differences if d.target == "rate:RATE")
    assert (rate.base, rate.head, rate.line) == ("3600", "3660", 1)


# ---------------------------------------------------------------- 5. nondeterminism is never a difference

NOISY = '''\
"""Everything here varies from run to run, process to process or hash seed to hash seed."""

import datetime
import os
import random
import time
import uuid

CALLS = 0


class Plain:
    pass


class Stamped:
    def __init__(self, name="x"):
        self.name = name
        self.created = time.time()
        self.token = uuid.uuid4().hex

    def age(self):
        return time.time() - self.created


def now():
    return time.time()


def monotonic():
    return time.monotonic()


def dice():
    return random.random()


def pick(items):
    return random.choice(list(items) or [0])


def token():
    return uuid.uuid4()


def token_text():
    return str(uuid.uuid4())


def address():
    return id(object())


def plain_repr():
    return repr(Plain())


def plain():
    return Plain()


def letters():
    return list({"a", "b", "c"})


def letters_text(extra):
    return ",".join({"alpha", "beta", "gamma", str(extra)})


def registry():
    return {"first": Plain(), "second": Plain()}


def today():
    return datetime.datetime.now()


def today_text():
    return datetime.datetime.now().isoformat()


def pid():
    return os.getpid()


def counter():
    global CALLS
    CALLS += 1
    return CALLS


def hashed(text):
    return hash(str(text))
'''


def _in_every_function(source: str, line_text: str) -> str:
    """The module with `line_text` at the top of every function body."""
    lines = []
    for line in source.splitlines(keepends=True):
        lines.append(line)
        if line.lstrip().startswith("def "):
            indent = len(line) - len(line.lstrip()) + 4
            lines.append(" " * indent + line_text + "\n")
    return "".join(lines)


NOISY_EDITS = {
    # a comment line appended: the syntax tree is the same
    "self-diff": NOISY + "# trailing comment\n",
    # a comment in every function
    "comments": _in_every_function(NOISY, "# reviewed"),
    # code changes that keep behaviour, in every function and at module level: everything is replayed
    "no-op-code": _in_every_function(NOISY, "_unused = None").replace("CALLS = 0\n", "CALLS = int('0')\n"),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("edit", list(NOISY_EDITS))
def test_nondeterminism_is_not_a_difference(builder: RepoBuilder, edit: str, seed: int) -> None:
    make_pr(builder, {"noisy/__init__.py": "", "noisy/core.py": NOISY}, {"noisy/core.py": NOISY_EDITS[edit]})

    report = run_analyze(builder, budget=5, seed=seed, max_sequences=400)

    assert report.differences == [], differences_summary(report)
    if edit == "no-op-code":  # the comparison really ran, over the nondeterministic calls
        assert report.stats.replayed > 100, report.stats
        assert report.coverage.changed_lines_covered > 0, report.coverage


# ---------------------------------------------------------------- 6. project packages named like the tool's

GENERATOR_BASE = '''\
"""The project's own `generator` package (the tool has one too)."""

from generator.sizes import label


def scale(n):
    if n == 7:
        return 700
    return n * 10
'''
SIZES_BASE = '''\
def label(n):
    if n > 100:
        return "big"
    return "small"
'''
BOT_BASE = '''\
"""The project's own top-level `bot` module."""


def reply(text):
    if text == "ping":
        return "pong"
    return text.upper()
'''


@pytest.mark.slow
def test_project_packages_named_generator_and_bot(builder: RepoBuilder, tmp_path: Path) -> None:
    make_pr(
        builder,
        {"generator/__init__.py": GENERATOR_BASE, "generator/sizes.py": SIZES_BASE, "bot.py": BOT_BASE},
        {"generator/sizes.py": SIZES_BASE.replace("n > 100", "n > 99"),
         "bot.py": BOT_BASE.replace('return "pong"', 'return "PONG"')},
    )

    report = run_analyze(builder, budget=6, max_sequences=600)

    found = {(d.kind, d.target) for d in report.differences}
    assert ("return", "bot:reply") in found, differences_summary(report)
    assert ("return", "generator.sizes:label") in found, differences_summary(report)
    assert found == {("return", "bot:reply"), ("return", "generator.sizes:label")}, \
        differences_summary(report)
    assert not any("import" in note for note in report.notes), report.notes
    reply = next(d for d in report.differences if d.target == "bot:reply")
    assert (reply.base, reply.head) == ("'pong'", "'PONG'")
    label = next(d for d in report.differences if d.target == "generator.sizes:label")
    assert (label.base, label.head) == ("'small'", "'big'")
    assert "from generator.sizes import label" in label.test
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path / "bot", reply)
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path / "generator", label)


# ---------------------------------------------------------------- 7. hostile code does not stop the run

HOSTILE = '''\
import ctypes
import os
import sys


def exits():
    sys.exit(3)


def hard_exit():
    os._exit(3)


def spins():
    while True:
        pass


def segfault():
    return ctypes.string_at(0)


def chatty():
    print("y" * 10_000_000)
    return 1


def recurse(n=0):
    return recurse(n + 1)


def huge_int():
    return 10 ** 10000


def huge_text():
    return "x" * 50_000_000


def sleeper():
    import time
    time.sleep(60)


def rate(unit):
    if unit == "h":
        return 3600
    if unit == "m":
        return 60
    return 1
'''


def _hostile_pr(builder: RepoBuilder, source: str) -> None:
    # every function gets a behaviour-preserving change, so the hostile ones are targets too
    head = _in_every_function(source, "_unused = None").replace("return 3600", "return 3660")
    assert head.count("3660") == 1
    make_pr(builder, {"pkg/__init__.py": "", "pkg/hostile.py": source}, {"pkg/hostile.py": head})


def _assert_finds_rate_within_budget(builder: RepoBuilder, budget: float) -> None:
    started = time.monotonic()
    report = run_analyze(builder, budget=budget, max_sequences=None)
    elapsed = time.monotonic() - started

    assert elapsed < budget + 4, f"run took {elapsed:.1f} s for a {budget:g} s budget ({report.stats})"
    assert ("return", "pkg.hostile:rate", "3600", "3660") in differences_summary(report), \
        (differences_summary(report), report.stats, report.notes)
    # the hostile functions behave the same on both commits: none of them is a difference
    assert {d.target for d in report.differences} == {"pkg.hostile:rate"}, differences_summary(report)


@pytest.mark.slow
def test_hostile_functions_do_not_stop_the_run(builder: RepoBuilder) -> None:
    _hostile_pr(builder, HOSTILE)
    _assert_finds_rate_within_budget(builder, budget=6.0)


def _one_hostile(name: str) -> str:
    """HOSTILE with only the function `name` (and its imports) next to `rate`."""
    header, _, rest = HOSTILE.partition("\n\n\ndef ")
    functions = {f.split("(", 1)[0]: "def " + f.rstrip() + "\n" for f in rest.split("\n\n\ndef ")}
    return header + "\n\n\n" + functions[name] + "\n\n" + functions["rate"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["exits", "hard_exit", "spins", "segfault", "chatty", "recurse", "huge_int", "huge_text", "sleeper"])
def test_each_hostile_function_alone(builder: RepoBuilder, name: str) -> None:
    """The same as test_hostile_functions_do_not_stop_the_run, one hostile function at a time."""
    _hostile_pr(builder, _one_hostile(name))
    _assert_finds_rate_within_budget(builder, budget=6.0)


def test_instrumentation_does_not_change_a_recursion_error(builder: RepoBuilder) -> None:
    """A statement added to a recursive function keeps its RecursionError exactly as it was."""
    base = "def recurse(n=0):\n    return recurse(n + 1)\n"
    head = "def recurse(n=0):\n    _unused = None\n    return recurse(n + 1)\n"
    make_pr(builder, {"rec.py": base}, {"rec.py": head})

    report = run_analyze(builder, budget=4, max_sequences=100)

    assert report.differences == [], differences_summary(report)


HOSTILE_FILES = '''\
import os
import shutil

VICTIMS = @VICTIMS@  # the user's files, far from the run's folder
NOTES = os.path.join(VICTIMS, "notes.txt")


def delete():  # a path from the environment, as a cleanup helper might read it
    os.remove(os.environ["HOSTILE_VICTIM"])


def write_home():
    with open(os.path.join(VICTIMS, "home", ".profile"), "a") as profile:
        profile.write("planted\\n")


def rename():
    os.rename(NOTES, os.path.join(VICTIMS, "renamed.txt"))


def chmod():
    os.chmod(NOTES, 0o777)


def symlink():
    os.symlink(NOTES, os.path.join(VICTIMS, "home", ".bashrc"))


def hard_link():  # into the working folder, where writing to it would change the user's file
    os.link(NOTES, "notes-link")


def through_a_link():
    if os.path.lexists("escape"):
        os.remove("escape")
    os.symlink(VICTIMS, "escape")
    os.remove(os.path.join("escape", "notes.txt"))


def rmtree():
    shutil.rmtree(os.path.join(VICTIMS, "tree"))


def truncate():
    os.truncate(NOTES, 0)


def remove(path):  # fed with the paths above, mined from this module
    os.remove(path)


def rate(unit):
    if unit == "h":
        return 3600
    if unit == "m":
        return 60
    return 1
'''


def _hostile_files(victims: Path) -> str:
    return HOSTILE_FILES.replace("@VICTIMS@", repr(str(victims)))


def _victims(folder: Path) -> Path:
    """The user's files that HOSTILE_FILES goes for: notes, a home folder, a tree."""
    (folder / "home").mkdir(parents=True)
    (folder / "home" / ".profile").write_text("export EDITOR=vi\n")
    (folder / "tree" / "deep").mkdir(parents=True)
    (folder / "tree" / "deep" / "leaf.txt").write_text("leaf")
    (folder / "notes.txt").write_text("the user's notes")
    return folder


def _files(folder: Path) -> dict[str, tuple]:
    """Name, mode, link count and content (or link target) of everything under `folder`."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        content = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
        found[str(path.relative_to(folder))] = (info.st_mode, info.st_nlink, content)
    return found


@pytest.mark.slow
def test_hostile_file_system_calls_change_nothing_outside_the_run(builder: RepoBuilder, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    victims = _victims(tmp_path / "victims")
    monkeypatch.setenv("HOSTILE_VICTIM", str(victims / "notes.txt"))
    before = _files(victims)
    _hostile_pr(builder, _hostile_files(victims))

    _assert_finds_rate_within_budget(builder, budget=6.0)

    assert _files(victims) == before


NON_ROOT_UID = 10003  # no user of this machine: owns only what the test gives it
NON_ROOT_ENGINE = """
import json, os, sys
from checkout_code import use_this_checkout
use_this_checkout()
from difforacle.generator import Options, analyze
import black, coverage.parser, git, jsonschema  # imported by the engine on first use: loaded while
# this interpreter can read them
repo, python, uid, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
report = analyze(repo, "main", "feature", Options(budget=budget, python=python, show_unreproduced=True))
print(json.dumps([[d.kind, d.target, d.base, d.head] for d in report.differences]))
"""


def _can_run_a_worker(uid: int, python: str) -> bool:
    """`python` runs as `uid`, is a Python 3.11+, and can read the worker's code."""
    check = f"import sys; open({str(BOOT)!r}).close(); sys.exit(sys.version_info < (3, 11))"
    try:
        return subprocess.run([python, "-c", check], user=uid, group=uid, extra_groups=[], env={},
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.slow
def test_hostile_file_system_calls_as_a_non_root_user() -> None:
    """The test above with the engine and its workers running as a user who owns the files at stake:
    only the sandbox stands between the hostile module and them (root could be stopped by nothing else)."""
    if os.geteuid() != 0:
        pytest.skip("runs as a non-root user already: the test above is this one")
    candidates = (sys.executable, "/usr/bin/python3")
    python = next((p for p in candidates if _can_run_a_worker(NON_ROOT_UID, p)), None)
    if python is None:
        service_unavailable("a Python 3.11+ that another user can run and that can read this checkout",
                            f"neither {sys.executable} nor /usr/bin/python3")
    folder = Path(tempfile.mkdtemp(prefix="difforacle-nonroot-"))
    try:
        builder = RepoBuilder(folder / "repo")
        victims = _victims(folder / "victims")
        _hostile_pr(builder, _hostile_files(victims))
        before = _files(victims)
        for path in (folder, *folder.rglob("*")):
            os.lchown(path, NON_ROOT_UID, NON_ROOT_UID)
        env = {**GIT_ENV, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder),
               "PYTHONPATH": str(BENCHMARKS),  # checkout_code
               "HOSTILE_VICTIM": str(victims / "notes.txt")}
        done = subprocess.run([sys.executable, "-c", NON_ROOT_ENGINE, str(builder.root), python,
                               str(NON_ROOT_UID), "6"], env=env, cwd=folder, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout.splitlines()[-1]) == [["return", "pkg.hostile:rate", "3600", "3660"]]
        assert _files(victims) == before
        assert all(path.stat().st_uid == NON_ROOT_UID for path in victims.rglob("*"))  # theirs to delete
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- 8. head does not import

SHAPES_BASE = '''\
import math


def area(r):
    return math.pi * r * r


def side(a):
    return a * 4
'''


@pytest.mark.parametrize(
    ("head", "error"),
    [
        (SHAPES_BASE.replace("def side(a):", "def side(a:"), "SyntaxError"),
        ("import not_a_module_anywhere_xyz\n" + SHAPES_BASE, "ModuleNotFoundError"),
        (SHAPES_BASE.replace("import math", "from math import no_such_name"), "ImportError"),
    ],
    ids=["syntax-error", "missing-module", "missing-name"],
)
def test_head_that_does_not_import_is_a_finding(builder: RepoBuilder, head: str, error: str) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES_BASE}, {"pkg/shapes.py": head})

    report = run_analyze(builder, budget=4, max_sequences=200)

    found = _only(report, "pkg.shapes:<module>")
    assert [d.kind for d in found] == ["exception"], differences_summary(report)
    [difference] = found
    assert difference.head.startswith(f"raises {error}"), difference.head
    assert difference.path == "pkg/shapes.py"
    assert difference.id
    compile(difference.test, "generated", "exec")
    assert "import pkg.shapes" in difference.test or "from pkg.shapes import" in difference.test


@pytest.mark.slow
def test_head_import_error_test_passes_on_base_fails_on_head(builder: RepoBuilder, tmp_path: Path) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES_BASE},
            {"pkg/shapes.py": "import not_a_module_anywhere_xyz\n" + SHAPES_BASE})

    report = run_analyze(builder, budget=4, max_sequences=100)

    [difference] = _only(report, "pkg.shapes:<module>")
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path, difference)


# ---------------------------------------------------------------- 9. the user's work tree stays clean

LITTERING = '''\
import os

with open("written-at-import.txt", "w") as handle:
    handle.write("the project wrote this")
os.makedirs("cache-dir", exist_ok=True)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "next-to-module.txt"), "w") as handle:
    handle.write("and this")


def value(x):
    if x == 5:
        return 50
    return x
'''


@pytest.mark.slow
def test_project_writing_files_at_import_leaves_the_work_tree_clean(
        builder: RepoBuilder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_pr(builder, {"litter.py": LITTERING}, {"litter.py": LITTERING.replace("return 50", "return 55")})
    assert builder.status() == ""
    branches = sorted(h.name for h in builder.repo.heads)
    monkeypatch.chdir(builder.root)  # as if the user ran difforacle inside the clone

    report = analyze(".", "main", "feature", Options(budget=4, max_sequences=300))

    assert ("return", "litter:value", "50", "55") in differences_summary(report)
    assert builder.status() == ""
    assert builder.worktrees() == [str(builder.root)]
    assert builder.repo.active_branch.name == "main"
    assert sorted(h.name for h in builder.repo.heads) == branches
    assert not (tmp_path / "written-at-import.txt").exists()


# ---------------------------------------------------------------- 13. project values that stopped runs

ODD_NAMES_BASE = '''\
class Bar:
    """A progress bar that keeps state under names no attribute reference spells."""

    def __init__(self, total=10):
        self.total = total
        setattr(self, " .encoding", "utf-8")
        self.__dict__["{0:3"] = 0

    def advance(self, n):
        self.__dict__["{0:3"] = self.__dict__["{0:3"] + n
'''
ODD_NAMES_HEAD = ODD_NAMES_BASE.replace('] + n\n', '] + n + n\n')  # the same TypeError for n=None


def test_attribute_names_that_are_no_identifiers_are_observed_and_asserted(builder: RepoBuilder) -> None:
    """The run once died on `cannot parse observation key suffix '. .encoding'` (and '.{0:3')."""
    assert ODD_NAMES_HEAD != ODD_NAMES_BASE
    make_pr(builder, {"pkg/__init__.py": "", "pkg/bar.py": ODD_NAMES_BASE}, {"pkg/bar.py": ODD_NAMES_HEAD})

    report = run_analyze(builder, budget=5, max_sequences=100)

    assert report.error is None, report.notes
    found = _only(report, "pkg.bar:Bar.advance")
    assert [(d.kind, d.key.split("/", 1)[1]) for d in found] == [("state", "0.'{0:3'")], \
        differences_summary(report)
    assert "getattr(bar, '{0:3')" in found[0].test or 'getattr(bar, "{0:3")' in found[0].test, found[0].test
    assert found[0].reproduced is True, found[0].test  # pytest ran it: passes on base, fails on head


HOSTILE_VALUES_BASE = '''\
class Sticky(list):
    """A list whose every protocol raises."""

    def __len__(self):
        raise RuntimeError("no len")

    def __iter__(self):
        raise RuntimeError("no iter")

    def __getitem__(self, index):
        raise RuntimeError("no item")

    def __repr__(self):
        raise RuntimeError("no repr")

    def __eq__(self, other):
        raise RuntimeError("no eq")

    def __hash__(self):
        raise RuntimeError("no hash")


class Gauge:
    def __init__(self, level=0):
        self.level = level
        self.items = Sticky()
        self.__dict__[7] = "a key that is no name"

    @property
    def broken(self):
        raise RuntimeError("broken getter")

    def __len__(self):
        raise RuntimeError("no len")

    def __iter__(self):
        raise RuntimeError("no iter")

    def __contains__(self, item):
        raise RuntimeError("no contains")

    def __repr__(self):
        raise RuntimeError("no repr")

    def __eq__(self, other):
        raise RuntimeError("no eq")

    def __hash__(self):
        raise RuntimeError("no hash")

    def reading(self, scale):
        return self.level * scale


def gauge(level):
    return Gauge(level)
'''
HOSTILE_VALUES_HEAD = HOSTILE_VALUES_BASE.replace("* scale\n", "* scale + 1\n")


def test_values_whose_protocols_raise_cost_their_observation_not_the_run(builder: RepoBuilder) -> None:
    """Every object the sequences make raises from len, iter, repr, eq, hash and a property: the
    run still observes the rest (the `level`) and finds the changed reading."""
    assert HOSTILE_VALUES_HEAD != HOSTILE_VALUES_BASE
    make_pr(builder, {"pkg/__init__.py": "", "pkg/gauge.py": HOSTILE_VALUES_BASE},
            {"pkg/gauge.py": HOSTILE_VALUES_HEAD})

    report = run_analyze(builder, budget=5, max_sequences=100)

    assert report.error is None, report.notes
    assert ("return", "pkg.gauge:Gauge.reading") in {(d.kind, d.target) for d in report.differences}, \
        (differences_summary(report), report.notes, report.stats)
    assert {d.target for d in report.differences} == {"pkg.gauge:Gauge.reading"}, differences_summary(report)
    assert report.stats.crashed == 0, "observing never costs a process"


REGISTRY = '''\
_SEEN = {}


def remember(key: str, value: int) -> None:
    _SEEN[key] = value


def recall(key: str) -> int:
    return _SEEN.get(key, 0)
'''


@pytest.mark.slow
def test_a_difference_that_needs_state_an_earlier_sequence_left_is_confirmed(builder: RepoBuilder,
                                                                             tmp_path: Path) -> None:
    """`recall` differs only for a key some earlier sequence stored: the replay shows it (a round
    runs in one process), a fresh process alone does not; confirmed after its history, then
    minimized to the calls it needs."""
    doubled = REGISTRY.replace("_SEEN.get(key, 0)", "_SEEN.get(key, 0) * 2")
    make_pr(builder, {"reg.py": REGISTRY}, {"reg.py": doubled})
    report = run_analyze(builder, max_sequences=900)  # a key stored, then recalled: 7 seeds in 8 by 600
    [difference] = [d for d in report.differences if d.target == "reg:recall" and d.kind == "return"]
    assert "remember(" in difference.test and "recall(" in difference.test
    assert len(difference.statements) <= 4  # the earlier sequences it needed, minimized
    _assert_test_passes_on_base_fails_on_head(builder, tmp_path, difference)


def test_a_pull_request_that_only_adds_a_module_is_no_setup_error(builder: RepoBuilder) -> None:
    """Base cannot import a module that does not exist there yet: that is no missing dependency."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/core.py": "X = 1\n"},
            {"pkg/warnings.py": "class PkgWarning(UserWarning):\n    pass\n"})
    report = run_analyze(builder)
    assert "pkg.warnings is new: base has nothing to compare it with." in report.notes
    assert report.differences == []


def test_progress_counts_the_changed_lines_run_as_the_report_does(builder: RepoBuilder) -> None:
    """Each update from exploring on carries the report's changed-line figures as they stand."""
    make_pr(builder, {"pkg/__init__.py": "", "pkg/mod.py": UNITS_BASE}, {"pkg/mod.py": UNITS_HEAD})
    updates: list[Progress] = []
    report = run_analyze(builder, progress=updates.append)

    phases = [u.phase for u in updates]
    assert "exploring" in phases
    importing = phases.index("importing")  # after the history is read
    assert all((u.changed_lines, u.changed_lines_covered) == (0, 0)  # not measured yet
               for u in updates[:importing + 1])
    measured = updates[importing + 1:]
    assert {u.changed_lines for u in measured} == {report.coverage.changed_lines} == {1}
    covered = [u.changed_lines_covered for u in measured]
    assert covered == sorted(covered) and covered[-1] == report.coverage.changed_lines_covered == 1
