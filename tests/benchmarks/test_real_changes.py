"""The real-changes benchmark runner (benchmarks/real_changes/run.py) on a tiny repository.

A bare mirror of a three-function package is built in `tmp_path`, in the layout the fetch tool
leaves (`owner+name/repo`); a fake difforacle (a script writing the report it is told to)
stands in for the engine, so the runner's own logic is tested in a second or two.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import BENCHMARKS
from support.repos import GIT_ENV

_spec = importlib.util.spec_from_file_location(
    "real_changes_run", BENCHMARKS / "real_changes" / "run.py"
)
bench = importlib.util.module_from_spec(_spec)
sys.modules["real_changes_run"] = bench
_spec.loader.exec_module(bench)

GIT = {**os.environ, **GIT_ENV}  # an identity, and no user or system git configuration

BASE = """\
def double(x):
    return x * 2


def quadruple(x):
    return double(double(x))


def octuple(x):
    return quadruple(x) * 2


def unrelated(x):
    return x
"""
VERSIONS = {  # commit message -> tiny/__init__.py, each commit on top of the previous one
    "base": BASE,
    "change": BASE.replace("return x * 2", "return x * 2 + 1"),  # double(1): 2 -> 3
    "same": BASE.replace("return x * 2", "return x * 2 + 1").replace("return x\n", "return (x)\n"),
    "comment": BASE.replace("return x * 2", "return x * 2 + 1").replace("return (x)\n", "return x  # same\n"),
}
TEXT = """\
def shout(text):
    return text.upper()


def whisper(text):
    return text.lower()
"""
TESTS = """\
from tiny.text import shout, whisper


def test_whisper():
    assert whisper("A") == "a"


def test_types():
    assert isinstance(shout("a"), str)
    assert isinstance(whisper("a"), str)
"""
SHOUT_TEST = '\n\ndef test_shout():\n    assert shout("a") == "A!"\n'
FIXED = TEXT.replace("text.upper()", 'text.upper() + "!"')
# then, on top of the commits above: message -> files (None: unchanged); a fix with its test and
# changelog line, a feature with its test, and a commit that rewrites the fixed line
LATER = {
    "text": {"tiny/text.py": TEXT, "tests/test_text.py": TESTS, "CHANGES.md": "# Changes\n"},
    "fix": {"tiny/text.py": FIXED, "tests/test_text.py": TESTS + SHOUT_TEST,
            "CHANGES.md": "# Changes\n\n- shout() ends with an exclamation mark\n"},
    "Whisper trails off\n\nwhisper() now ends with an ellipsis.": {
        "tiny/text.py": FIXED.replace("text.lower()", 'text.lower() + "..."'),
        "tests/test_text.py": (TESTS + SHOUT_TEST).replace('== "a"', '== "a..."'),
    },
    "louder": {"tiny/text.py": FIXED.replace('"!"', '"!!"').replace("text.lower()", 'text.lower() + "..."')},
    # a real regression and its fix (SZZ): a speed-up that breaks octuple, an unrelated commit, the fix
    "Speed up octuple\n\nA shift instead of two calls.": {
        "tiny/__init__.py": VERSIONS["comment"].replace("return quadruple(x) * 2", "return x << 3")},
    "Document unrelated": {"README.md": "tiny\n"},
    "Fix octuple, broken since the speed-up": {"tiny/__init__.py": VERSIONS["comment"]},
}
FAKE_DIFFORACLE = """\
import json, os, sys
args = sys.argv[1:]
head = args[args.index("--head") + 1]
title = args[args.index("--pr-title") + 1] if "--pr-title" in args else None
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(head + " " + repr(title) + "\\n")
differences = json.load(open(os.environ["FAKE_REPORTS"])).get(head, [])
report = {"schema": "difforacle.report/1", "differences": differences,
          "coverage": {"changed_lines": 1, "changed_lines_covered": 1 if differences else 0,
                       "uncovered": {} if differences else {"tiny/__init__.py": [2]}},
          "stats": {"seconds": 0.1}, "notes": []}
open(args[args.index("--json") + 1], "w").write(json.dumps(report))
sys.exit(1 if differences else 0)
"""


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A mirrors folder holding owner/tiny, the commits by message, and a fake difforacle."""
    root = tmp_path_factory.mktemp("tiny")
    work = root / "src"
    (work / "tiny").mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    commits = {}
    for message, text in VERSIONS.items():
        (work / "tiny" / "__init__.py").write_text(text)
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", message)
        commits[message] = _git(work, "rev-parse", "HEAD")
    for message, files in LATER.items():
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", message)
        commits[message.split("\n")[0]] = _git(work, "rev-parse", "HEAD")
    mirrors = root / "mirrors"
    _git(root, "clone", "-q", "--bare", str(work), str(mirrors / "owner+tiny" / "repo"))
    fake = root / "fake_difforacle"
    fake.write_text(f"#!{sys.executable}\n{FAKE_DIFFORACLE}")
    fake.chmod(0o755)
    return {"mirrors": mirrors, "commits": commits, "fake": fake}


@pytest.fixture(autouse=True)
def _fake_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the fake difforacle finds the reports to write and logs the heads it ran on."""
    monkeypatch.setenv("FAKE_REPORTS", str(tmp_path / "reports.json"))
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls.log"))


def _manifest(path: Path, commits: dict[str, str], extra: str = "") -> Path:
    path.write_text(
        textwrap.dedent(f"""\
        schema = "difforacle.real-changes/1"

        [repositories."owner/tiny"]
        source = "."
        half = "checking"
        packages = ["tiny"]
        dependencies = []
        test_command = "python -c 'import tiny; assert tiny.unrelated(1) == 1'"

        [[case]]
        id = "tiny-change"
        repository = "owner/tiny"
        commit = "{commits["change"]}"
        label = "change"
        category = "plain-value"
        needs = "double(1)"
        note = "double adds one"
        witness = "import tiny; print(tiny.double(1))"

        [[case]]
        id = "tiny-same"
        repository = "owner/tiny"
        commit = "{commits["same"]}"
        label = "same"
        note = "parentheses"

        [[case]]
        id = "tiny-broken"
        repository = "owner/tiny"
        commit = "{commits["comment"]}"
        label = "change"
        category = "plain-value"
        needs = "nothing: a comment"
        note = "labelled change, but only a comment changes"
        witness = "import tiny; print(tiny.unrelated(1))"
        """)
        + extra
    )
    return path


def _run(
    tmp_path: Path,
    tiny: dict[str, object],
    reports: dict[str, list[dict]],
    *extra: str,
    manifest: Path | None = None,
) -> tuple[int, dict]:
    (tmp_path / "reports.json").write_text(json.dumps(reports))
    manifest = manifest or _manifest(tmp_path / "manifest.toml", tiny["commits"])
    out = tmp_path / "results.json"
    code = bench.main(
        [
            "--manifest",
            str(manifest),
            "--mirrors",
            str(tiny["mirrors"]),
            "--difforacle",
            str(tiny["fake"]),
            "--budget",
            "5",
            "--out",
            str(out),
            "--work",
            str(tmp_path / "work"),
            "--markdown",
            str(tmp_path / "results.md"),
            *extra,
        ]
    )
    return code, json.loads(out.read_text()) if out.exists() else {}


def _difference(target: str) -> dict:
    return {
        "kind": "return",
        "target": target,
        "path": "tiny/__init__.py",
        "line": 2,
        "base": "4",
        "head": "5",
    }


def test_labels_are_checked_and_a_broken_witness_is_not_counted(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    code, results = _run(
        tmp_path,
        tiny,
        {commits["change"]: [_difference("tiny:quadruple")]},
        "--reports",
        str(tmp_path / "kept"),
    )
    cases = results["cases"]
    assert code == 0
    assert sorted(path.name for path in (tmp_path / "kept").iterdir()) == [
        "tiny-change.json",
        "tiny-same.json",
    ]
    assert cases["tiny-change"]["label_check"] == {"ok": True, "parent": "2\n", "commit": "3\n"}
    assert cases["tiny-change"]["detected"] is True
    assert cases["tiny-same"]["label_check"]["ok"] and cases["tiny-same"]["false_alarm"] is False
    assert cases["tiny-broken"]["status"] == "broken"
    assert cases["tiny-broken"]["reason"] == "witness prints the same on parent and commit"
    assert "detected" not in cases["tiny-broken"]
    assert commits["comment"] not in (tmp_path / "calls.log").read_text()  # never run
    table = (tmp_path / "results.md").read_text()
    assert "| plain-value | 1/1 (100%) | - |" in table  # the broken case is not among the counted
    assert "| overall | 1/1 (100%) | 0/1 (0%) |" in table
    assert "- tiny-broken: broken (witness prints the same on parent and commit)" in table


def test_a_witness_that_crashes_is_broken(tmp_path: Path, tiny: dict) -> None:
    manifest = _manifest(tmp_path / "manifest.toml", tiny["commits"])
    manifest.write_text(manifest.read_text().replace("print(tiny.double(1))", "print(tiny.triple(1))"))
    _, results = _run(tmp_path, tiny, {}, "--only", "tiny-change", manifest=manifest)
    entry = results["cases"]["tiny-change"]
    assert entry["status"] == "broken"
    assert entry["reason"].startswith("witness fails on parent (exit 1: AttributeError")


def test_a_same_case_whose_tests_fail_is_broken(tmp_path: Path, tiny: dict) -> None:
    manifest = _manifest(tmp_path / "manifest.toml", tiny["commits"])
    manifest.write_text(manifest.read_text().replace("tiny.unrelated(1) == 1", "tiny.double(1) == 2"))
    _, results = _run(tmp_path, tiny, {}, "--only", "tiny-same", manifest=manifest)
    assert results["cases"]["tiny-same"]["reason"].startswith("tests fail on parent (exit 1: AssertionError")


def test_a_difference_elsewhere_does_not_count(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    _, results = _run(
        tmp_path,
        tiny,
        {
            commits["change"]: [_difference("tiny:unrelated")],
            commits["same"]: [_difference("tiny:unrelated")],
        },
    )
    change, same = results["cases"]["tiny-change"], results["cases"]["tiny-same"]
    assert change["detected"] is False and change["related"] == 0 and len(change["differences"]) == 1
    assert same["false_alarm"] is True  # on a `same` case any difference is a false alarm
    table = (tmp_path / "results.md").read_text()
    assert (
        "- tiny-change (plain-value): needs double(1); changed lines reached 1/1; 1 differences elsewhere"
        in table
    )


def test_detection_rule_changed_units_and_callers(tmp_path: Path, tiny: dict) -> None:
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--no-checkout", str(tiny["mirrors"] / "owner+tiny" / "repo"), str(clone))
    commits = tiny["commits"]
    repo = bench.Repository("owner/tiny", ".", ("tiny",), (), "true")
    changes = bench.change_map(clone, commits["base"], commits["change"], repo)
    assert changes.changed == {("tiny", "double")}
    assert changes.readers == set()  # a function changed: its callers run its lines, no table is read
    assert changes.counts("tiny:double")  # the changed unit
    assert changes.counts("tiny:quadruple")  # its caller
    assert not changes.counts("tiny:octuple")  # a caller's caller: not at the change (any unit would be)
    assert not changes.counts("tiny:unrelated")
    assert not changes.counts("other:double")
    assert changes.counts("tiny:<module>")  # importing the module runs the changed code
    assert changes.counts("tiny:double<argv>")  # an operation's form suffix names the same unit
    assert changes.counts("tiny:double<export>")
    assert not changes.counts("tiny:unrelated<export>")


def test_detection_rule_classes_tables_and_inheritance() -> None:
    index = bench.ModuleIndex.parse(
        textwrap.dedent("""\
        TABLE = {
            "a": 1,
        }

        class Base:
            def lookup(self, key):
                return TABLE[key]

        class Child(Base):
            def __init__(self):
                self.x = 1
        """)
    )
    assert index.unit_at(2)[0] == "<module>" and index.bound_at(2, None) == {"TABLE"}
    assert index.unit_at(7)[0] == "Base.lookup"
    changes = bench.ChangeMap(
        changed={("pkg.mod", "<module>"), ("pkg.mod", "Child.__init__")},
        related={("pkg.mod", "<module>"), ("pkg.mod", "Child.__init__"), ("pkg.mod", "Base.lookup")},
        bases={"Child": {"Base"}},
        lines={},
    )
    assert changes.counts("pkg.mod:Child")  # calling the class runs the changed __init__
    assert changes.counts("pkg:Child")  # re-exported by the package
    assert changes.counts("pkg.mod:Child.lookup")  # inherited from a related method
    assert changes.counts("pkg.mod:Base")  # its observers run the related lookup
    assert not changes.counts("pkg.mod:Other")
    assert not changes.counts("pkg.mod:Other.lookup")  # same name, another class
    assert changes.counts("pkg.mod:GrandChild") is False  # unknown bases: not related
    changes.bases["GrandChild"] = {"Child"}
    assert changes.counts("pkg.mod:GrandChild")  # inherits the changed constructor


def test_detection_rule_a_method_of_a_class_holding_a_changed_nested_class() -> None:
    """`URL.__call__` runs its nested `RegexMemoizer`'s changed `_regex_generator` through an
    instance attribute the static reading cannot name."""
    changes = bench.ChangeMap(
        changed={("pkg.validate", "URL.RegexMemoizer._regex_generator")},
        related={("pkg.validate", "URL.RegexMemoizer._regex_generator")},
        bases={"URL": set(), "RegexMemoizer": set(), "Email": set()},
        lines={},
    )
    assert changes.counts("pkg.validate:URL.__call__")
    assert not changes.counts("pkg.validate:Email.__call__")
    changes.changed = {("pkg.validate", "URL.helper")}  # a sibling method, no nested class: not enough
    changes.related = set(changes.changed)
    assert not changes.counts("pkg.validate:URL.__call__")


def test_detection_rule_units_made_by_a_class_level_call() -> None:
    index = bench.ModuleIndex.parse(
        textwrap.dedent("""\
        def wrap(method):
            def wrapper(self, *args):
                return self._new(method(self, *args))
            return wrapper

        class Integer(int):
            def _new(self, result):
                return Integer(result)

            __neg__ = wrap(int.__neg__)
        """)
    )
    assert index.references["Integer.__neg__"] == {(None, "wrap"), ("int", "__neg__"), (None, "int"),
                                                   (None, "__neg__")}
    assert index.members == {"Integer": {"_new", "__neg__"}}


def test_rejudge_applies_the_current_rule_to_kept_differences(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    _run(tmp_path, tiny, {commits["change"]: [_difference("tiny:unrelated")]}, "--only", "tiny-change")
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["cases"]["tiny-change"]["detected"] is False
    results["cases"]["tiny-change"]["differences"][0]["target"] = "tiny:quadruple"  # as if the rule improved
    (tmp_path / "results.json").write_text(json.dumps(results))
    code, results = _run(tmp_path, tiny, {}, "--rejudge")
    assert code == 0
    assert results["cases"]["tiny-change"]["detected"] is True
    assert (tmp_path / "calls.log").read_text().count("\n") == 1  # the engine did not run again


def test_rejudge_rereads_kept_reports_and_unmeasured_coverage(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    kept = tmp_path / "kept"
    _run(tmp_path, tiny, {commits["change"]: [_difference("tiny:unrelated")]}, "--reports", str(kept))
    report = json.loads((kept / "tiny-change.json").read_text())
    report["differences"].append(_difference("tiny:double"))
    report["coverage"]["measured_by"] = "not measured"
    (kept / "tiny-change.json").write_text(json.dumps(report))
    code, results = _run(tmp_path, tiny, {}, "--rejudge", "--reports", str(kept))
    change = results["cases"]["tiny-change"]
    assert code == 0
    assert change["detected"] is True and change["related"] == 1 and len(change["differences"]) == 2
    table = (tmp_path / "results.md").read_text()
    assert "| tiny-change | change | plain-value | detected | 2 (1) | n/m |" in table
    assert "| overall | 1/1 (100%) | 0/1 (0%) | 0/1 (0%) |" in table  # only the measured case


def test_an_engine_error_counts_as_a_miss(tmp_path: Path, tiny: dict) -> None:
    crash = "import sys\nsys.stderr.write('difforacle: internal error: boom\\n')\nsys.exit(2)\n"
    (tmp_path / "crash").write_text(f"#!{sys.executable}\n{crash}")
    (tmp_path / "crash").chmod(0o755)
    code, results = _run(tmp_path, {**tiny, "fake": tmp_path / "crash"}, {})
    change, same = results["cases"]["tiny-change"], results["cases"]["tiny-same"]
    assert code == 0
    assert change["status"] == "tool-error" and change["detected"] is False
    assert change["reason"] == "difforacle exit 2: difforacle: internal error: boom"
    assert same["false_alarm"] is False
    table = (tmp_path / "results.md").read_text()
    assert "| overall | 0/1 (0%) | 0/1 (0%) |" in table
    assert (
        "- tiny-change (plain-value): needs double(1); no report, difforacle: internal error: boom" in table
    )


def test_a_missing_mirror_is_skipped_with_one_line(
    tmp_path: Path, tiny: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = _manifest(
        tmp_path / "manifest.toml",
        tiny["commits"],
        textwrap.dedent("""
        [repositories."owner/absent"]
        source = "src"
        half = "checking"
        packages = ["absent"]
        test_command = "true"

        [[case]]
        id = "absent-1"
        repository = "owner/absent"
        commit = "0123456789012345678901234567890123456789"
        label = "same"
        note = "its mirror was never fetched"
        """),
    )
    code, results = _run(tmp_path, tiny, {}, "--only", "owner/absent", manifest=manifest)
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [line for line in out if line.startswith("skip")] == [
        f"skip owner/absent: no mirror under {tiny['mirrors']} (1 cases)"
    ]
    assert results["cases"]["absent-1"]["status"] == "skipped"


def test_resumes_without_running_judged_cases_again(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    reports = {commits["change"]: [_difference("tiny:double")]}
    _run(tmp_path, tiny, reports)
    calls = (tmp_path / "calls.log").read_text()
    assert calls.count("\n") == 2  # change and same; the broken case never runs
    code, results = _run(tmp_path, tiny, reports)
    assert code == 0
    assert (tmp_path / "calls.log").read_text() == calls
    assert results["cases"]["tiny-change"]["detected"] is True
    code = bench.main(
        [
            "--manifest",
            str(tmp_path / "manifest.toml"),
            "--out",
            str(tmp_path / "results.json"),
            "--budget",
            "9",
            "--mirrors",
            str(tiny["mirrors"]),
            "--difforacle",
            str(tiny["fake"]),
        ]
    )
    assert code == 2  # another budget is another results file


def test_compare_shows_gains_and_losses(
    tmp_path: Path, tiny: dict, capsys: pytest.CaptureFixture[str]
) -> None:
    commits = tiny["commits"]
    _run(tmp_path, tiny, {commits["same"]: [_difference("tiny:unrelated")]})
    old = tmp_path / "old.json"
    (tmp_path / "results.json").rename(old)
    capsys.readouterr()
    code, _ = _run(
        tmp_path, tiny, {commits["change"]: [_difference("tiny:quadruple")]}, "--compare", str(old)
    )
    text = capsys.readouterr().out
    assert code == 0
    gained = text.split("Gained (3):")[1].split("Lost")[0]
    assert "- tiny-change: detected" in gained
    assert "- tiny-same: quiet" in gained
    assert "- tiny-change: changed lines covered 0 -> 1" in gained
    assert "Lost (1):\n\n- tiny-same: changed lines covered 1 -> 0" in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('note = "parentheses"\n', ""), "case tiny-same: missing field 'note'"),
        (
            ('label = "same"', 'label = "maybe"'),
            "case tiny-same: unknown label 'maybe' (use change, same, regression, unintended or mixed)",
        ),
        (('half = "checking"', 'half = "tuning"'),
         "repository owner/tiny: field 'half' must be 'checking', as the split's rule gives it"),
        (('half = "checking"\n', ""),
         "repository owner/tiny: missing field 'half' (the split's rule gives 'checking')"),
        (('category = "plain-value"', 'category = "odd"'), "case tiny-change: unknown category 'odd'"),
        (
            ('witness = "import tiny; print(tiny.double(1))"\n', ""),
            "case tiny-change: missing field 'witness'",
        ),
        (('packages = ["tiny"]', "packages = []"), "repository owner/tiny: field 'packages' must name"),
    ],
)
def test_bad_manifest_is_one_line_and_exit_2(
    tmp_path: Path, tiny: dict, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], message: str
) -> None:
    manifest = _manifest(tmp_path / "manifest.toml", tiny["commits"])
    assert edit[0] in manifest.read_text()
    manifest.write_text(manifest.read_text().replace(*edit))
    code = bench.main(
        [
            "--manifest",
            str(manifest),
            "--mirrors",
            str(tiny["mirrors"]),
            "--report-only",
            "--out",
            str(tmp_path / "none.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"run.py: {message}") and err.count("\n") == 1


def test_find_mirror_layouts(tmp_path: Path) -> None:
    for folder in ("a+one/repo", "b/two.git", "three.git"):
        (tmp_path / folder / "objects").mkdir(parents=True)
        (tmp_path / folder / "HEAD").write_text("ref: refs/heads/main\n")
    assert bench.find_mirror(tmp_path, "a/one") == tmp_path / "a+one" / "repo"
    assert bench.find_mirror(tmp_path, "b/two") == tmp_path / "b" / "two.git"
    assert bench.find_mirror(tmp_path, "c/three") == tmp_path / "three.git"
    assert bench.find_mirror(tmp_path, "d/four") is None


def test_changed_lines_of_a_zero_context_diff() -> None:
    diff = "@@ -3,2 +3,0 @@\n@@ -10 +8,3 @@\n@@ -20,0 +21,2 @@\n"
    old, new = bench.changed_lines(diff)
    assert old == {3, 4, 10, 20}
    assert new == {3, 8, 9, 10, 21, 22}


class _Related:
    """A ChangeMap stand-in: every target is at the change."""

    @staticmethod
    def counts(target: str) -> bool:
        return True


def test_a_value_that_holds_a_checkout_path_never_detects() -> None:
    """The worktrees' folders differ between base and head: such a value shows where the commits are
    checked out, not what the change does."""
    path = {"kind": "return", "target": "pkg.m:f", "severity": "major",
            "base": "'/tmp/difforacle-ab12/base/pkg/assets/'",
            "head": "'/tmp/difforacle-ab12/head/pkg/assets/'"}
    entry = {"exit": 1, **bench.summarize_report({"differences": [path], "coverage": {}, "stats": {},
                                                  "notes": []}, _Related())}
    bench.judge(entry, bench.Case("c", "o/r", "0" * 40, "change", "note"))
    assert entry["detected"] is False and entry["related"] == 0


def test_rejudge_ignores_minor_differences_as_the_first_pass_does(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    _run(tmp_path, tiny, {commits["change"]: [{**_difference("tiny:double"), "severity": "minor"}]},
         "--only", "tiny-change")
    code, results = _run(tmp_path, tiny, {}, "--rejudge")
    change = results["cases"]["tiny-change"]
    assert code == 0 and change["detected"] is False and change["related"] == 0
    table = (tmp_path / "results.md").read_text()
    assert "- tiny-change (change): 1 minor, 0 outside the declared types, first return at tiny:double" \
        in table


def test_a_minor_difference_neither_detects_nor_alarms() -> None:
    """Only the wording of an exception the project did not raise: the report's "no difference"."""
    minor = {"kind": "exception", "target": "pkg.m:f", "base": "raises TypeError: a",
             "head": "raises TypeError: b", "severity": "minor"}
    report = {"differences": [minor], "coverage": {}, "stats": {}, "notes": []}
    for label, verdict in (("change", "detected"), ("same", "false_alarm")):
        entry = {"exit": 1, **bench.summarize_report(report, _Related())}
        bench.judge(entry, bench.Case("c", "o/r", "0" * 40, label, "note"))
        assert entry[verdict] is False and entry["differences"][0]["minor"] is True
    major = {"exit": 1, **bench.summarize_report({**report, "differences": [{**minor, "severity": "major"}]},
                                                 _Related())}
    bench.judge(major, bench.Case("c", "o/r", "0" * 40, "same", "note"))
    assert major["false_alarm"] is True


def test_a_difference_outside_the_declared_types_neither_detects_nor_alarms() -> None:
    """Only `f(None)` for `f(text: str)` shows it: the report sets it apart, and so does the judge."""
    outside = {"kind": "exception", "target": "pkg.m:f", "base": "raises TypeError: a",
               "head": "raises AttributeError: b", "severity": "major", "verdict": "outside-declared-types"}
    report = {"differences": [outside], "coverage": {}, "stats": {}, "notes": []}
    for label, verdict in (("change", "detected"), ("same", "false_alarm")):
        entry = {"exit": 0, **bench.summarize_report(report, _Related())}
        bench.judge(entry, bench.Case("c", "o/r", "0" * 40, label, "note"))
        assert entry[verdict] is False and entry["differences"][0]["outside_declared_types"] is True
    counted = {"exit": 1, **bench.summarize_report(
        {**report, "differences": [{**outside, "verdict": "unexplained"}]}, _Related())}
    bench.judge(counted, bench.Case("c", "o/r", "0" * 40, "change", "note"))
    assert counted["detected"] is True


# ---------------------------------------------------------------- labels of triage: unintended, mixed

NEW_CASES = """
[[case]]
id = "tiny-feature"
repository = "owner/tiny"
commit = "{feature}"
label = "change"
category = "plain-value"
needs = "whisper('A')"
note = "whisper trails off"
witness = "from tiny.text import whisper; print(whisper('A'))"

[[case]]
id = "tiny-fix"
repository = "owner/tiny"
commit = "{fix}"
label = "unintended"
category = "plain-value"
needs = "shout('a')"
note = "shout loses its exclamation mark again"
witness = "from tiny.text import shout; print(shout('a'))"

[[case]]
id = "tiny-regression"
repository = "owner/tiny"
commit = "{regression}"
label = "regression"
fix = "{regression_fix}"
fix_says = "broken since the speed-up"
category = "plain-value"
needs = "octuple(1)"
note = "octuple shifts instead of calling quadruple"
witness = "import tiny; print(tiny.octuple(1))"

[[case]]
id = "tiny-mixed"
repository = "owner/tiny"
label = "mixed"
change = "tiny-feature"
fix = "tiny-fix"
same_module = true
"""
REPO = bench.Repository("owner/tiny", ".", ("tiny",), (), "true")


def _new_manifest(tmp_path: Path, tiny: dict, text: str = NEW_CASES) -> Path:
    commits = tiny["commits"]
    return _manifest(tmp_path / "manifest.toml", commits,
                     text.format(feature=commits["Whisper trails off"], fix=commits["fix"],
                                 regression=commits["Speed up octuple"],
                                 regression_fix=commits["Fix octuple, broken since the speed-up"]))


def _clone(tiny: dict, target: Path) -> Path:
    mirror = tiny["mirrors"] / "owner+tiny" / "repo"
    _git(target.parent, "clone", "-q", "--no-checkout", str(mirror), str(target))
    return target


def _cases(tmp_path: Path, tiny: dict) -> dict[str, object]:
    return {case.id: case for case in bench.load_manifest(_new_manifest(tmp_path, tiny)).cases}


def _show(clone: Path, spec: str) -> str:
    return _git(clone, "show", spec)


def test_an_unintended_case_puts_the_fixed_source_back_and_leaves_its_tests_out(tmp_path: Path,
                                                                                tiny: dict) -> None:
    clone = _clone(tiny, tmp_path / "clone")
    fix = tiny["commits"]["fix"]
    made = bench.pull_request(clone, _cases(tmp_path, tiny)["tiny-fix"], REPO)
    assert _git(clone, "rev-parse", f"{made.head}^{{tree}}") == _git(clone, "rev-parse", f"{fix}^^{{tree}}")
    assert _git(clone, "rev-parse", f"{made.base}^") == _git(clone, "rev-parse", f"{fix}^")
    assert _git(clone, "rev-parse", f"{made.head}^") == made.base
    assert _git(clone, "diff", "--name-only", f"{fix}^", made.base) == "tiny/text.py"  # the source only
    assert _show(clone, f"{made.base}:tiny/text.py") == _show(clone, f"{fix}:tiny/text.py")
    assert "test_shout" not in _show(clone, f"{made.base}:tests/test_text.py")
    assert _git(clone, "log", "-1", "--format=%B", made.head) == ""  # no words the benchmark wrote
    assert (made.title, made.body) == ("", "")
    assert _git(clone, "rev-parse", "refs/difforacle-bench/tiny-fix/head") == made.head
    again = bench.pull_request(_clone(tiny, tmp_path / "other"), _cases(tmp_path, tiny)["tiny-fix"], REPO)
    assert again == made  # fixed identity and dates: another clone makes the same commits


def test_a_mixed_case_holds_the_change_and_the_reverted_fix(tmp_path: Path, tiny: dict) -> None:
    clone = _clone(tiny, tmp_path / "clone")
    commits = tiny["commits"]
    feature = commits["Whisper trails off"]
    made = bench.pull_request(clone, _cases(tmp_path, tiny)["tiny-mixed"], REPO)
    assert _git(clone, "rev-parse", f"{made.base}^") == commits["fix"]  # the change's parent
    assert _git(clone, "rev-parse", f"{made.head}^") == made.base
    # base: the change's parent without the fix's test and changelog line, its source fixed
    assert _show(clone, f"{made.base}:tiny/text.py") == FIXED.rstrip("\n")
    assert _show(clone, f"{made.base}:tests/test_text.py") == TESTS.rstrip("\n")
    assert _show(clone, f"{made.base}:CHANGES.md") == "# Changes"
    # head: the change without any of the fix
    assert _show(clone, f"{made.head}:tiny/text.py") == TEXT.replace("lower()", 'lower() + "..."').rstrip()
    assert _show(clone, f"{made.head}:tests/test_text.py") == TESTS.replace('== "a"', '== "a..."').rstrip()
    assert _show(clone, f"{made.head}:CHANGES.md") == "# Changes"
    message = _git(clone, "log", "-1", "--format=%B", feature)
    assert _git(clone, "log", "-1", "--format=%B", made.head) == message
    assert (made.title, made.body) == ("Whisper trails off", "whisper() now ends with an ellipsis.")
    assert bench.pull_request(clone, _cases(tmp_path, tiny)["tiny-mixed"], REPO) == made  # reruns: same ids


def test_a_mixed_case_that_cannot_be_made_is_broken(tmp_path: Path, tiny: dict) -> None:
    clone = _clone(tiny, tmp_path / "clone")
    case = _cases(tmp_path, tiny)["tiny-mixed"]
    louder = bench.replace(case, commit=tiny["commits"]["louder"])  # rewrites the fixed line
    with pytest.raises(bench.LabelError, match="does not reverse-apply"):
        bench.pull_request(clone, louder, REPO)
    before = bench.replace(case, commit=tiny["commits"]["change"])  # a change older than the fix
    with pytest.raises(bench.LabelError, match="is not an ancestor of the change's parent"):
        bench.pull_request(clone, before, REPO)


def _synthetic_heads(tmp_path: Path, tiny: dict) -> dict[str, str]:
    clone = _clone(tiny, tmp_path / "heads")
    return {name: bench.pull_request(clone, case, REPO).head for name, case in _cases(tmp_path, tiny).items()}


def _verdict(target: str, verdict: str) -> dict:
    return {**_difference(target), "path": "tiny/text.py", "verdict": verdict}


def test_unintended_and_mixed_cases_run_judge_and_tally(tmp_path: Path, tiny: dict) -> None:
    heads = _synthetic_heads(tmp_path, tiny)
    reports = {
        heads["tiny-feature"]: [_verdict("tiny.text:whisper", "named-by-pr")],
        heads["tiny-fix"]: [_verdict("tiny.text:shout", "unexplained"),
                            _verdict("tiny:double", "unexplained")],
        heads["tiny-mixed"]: [_verdict("tiny.text:shout", "breaks-existing-test"),
                              _verdict("tiny.text:whisper", "named-by-pr")],
    }
    only = ("--only", "tiny-feature,tiny-fix,tiny-mixed")
    code, results = _run(tmp_path, tiny, reports, *only, manifest=_new_manifest(tmp_path, tiny))
    assert code == 0
    fix, mixed, feature = (results["cases"][name] for name in ("tiny-fix", "tiny-mixed", "tiny-feature"))
    assert fix["label_check"] == {"ok": True, "base": "A!\n", "head": "A\n",
                                  "commits": {"base": fix["label_check"]["commits"]["base"],
                                              "head": heads["tiny-fix"]}}
    assert mixed["label_check"]["change"]["head"] == "a...\n" and mixed["label_check"]["fix"]["head"] == "A\n"
    assert fix["detected"] is True and [d["at"] for d in fix["differences"]] == ["fix", None]
    assert mixed["detected"] is True and mixed["detected_change"] is True
    assert [d["at"] for d in mixed["differences"]] == ["fix", "change"]
    assert feature["detected"] is True
    calls = (tmp_path / "calls.log").read_text()
    assert f"{heads['tiny-fix']} ''" in calls  # a fix put back comes with no words
    assert f"{heads['tiny-mixed']} 'Whisper trails off'" in calls  # the change's message
    assert f"{heads['tiny-feature']} 'Whisper trails off'" in calls
    figures = results["triage"]["figures"]["checking"]  # owner/tiny's half
    assert results["triage"]["figures"]["tuning"] == {}
    assert figures["unintended"] == {"detected": {"count": 1, "of": 1, "share": 1.0}}  # detection only
    assert figures["intended"]["cases"] == {"count": 1, "of": 1, "share": 1.0}
    assert figures["mixed"]["of_all"] == figures["mixed"]["of_both_detected"] == {"count": 1, "of": 1,
                                                                                   "share": 1.0}
    table = (tmp_path / "results.md").read_text()
    assert ("| `unintended`: a fix put back, without words | 1/1 (100%) | 1 | 0 | 1 | 0 | 0 | 0 | 1 | 0 |"
            in table)
    assert ("| `mixed` right (regression kept, change explained), of all | >= 60% | - | 1/1 (100%) | "
            "1/1 (100%) |" in table)
    assert "| `mixed`: the reverted fix | 1/1 (100%) | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 |" in table
    assert "| `mixed`: the change | 1/1 (100%) | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |" in table
    assert "| tiny-mixed | mixed | - | regression detected, change detected | 2 (fix 1, change 1, both 0) |" \
        in table
    assert "- tiny-fix: 1, first return at tiny:double (unexplained)" in table  # elsewhere
    # judged again: the same verdicts, with the engine not run again
    runs = calls.count("\n")
    code, again = _run(tmp_path, tiny, {}, *only, "--rejudge", manifest=_new_manifest(tmp_path, tiny))
    assert code == 0 and again["triage"] == results["triage"]
    assert (tmp_path / "calls.log").read_text().count("\n") == runs


def test_labels_only_checks_the_new_labels_and_a_silent_witness_breaks_the_case(tmp_path: Path,
                                                                               tiny: dict) -> None:
    text = NEW_CASES.replace("print(shout('a'))", "print(callable(shout))")  # the same on both sides
    manifest = _new_manifest(tmp_path, tiny, text)
    code, results = _run(tmp_path, tiny, {}, "--labels-only", "--only", "tiny-fix,tiny-mixed",
                         manifest=manifest)
    assert code == 0 and not (tmp_path / "calls.log").exists()
    assert results["cases"]["tiny-fix"]["reason"] == "witness prints the same on base and head"
    assert results["cases"]["tiny-mixed"]["reason"] == "the fix's witness prints the same on base and head"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('label = "unintended"', 'label = "unintended"\ntitle = "Tidy"'),
         "case tiny-fix: field 'title' is retired: a pull request's words are its commits' own"),
        (('fix = "{regression_fix}"', 'fix = "abc1234"'), "case tiny-regression: fix must be a full 40-hex"),
        (('fix = "{regression_fix}"', 'fix = "{regression}"'),
         "case tiny-regression: fix must be another commit than the one that brought the bug in"),
        (('fix_says = "broken since the speed-up"\n', ""), "case tiny-regression: missing field 'fix_says'"),

        (('commit = "{fix}"', 'commit = "abc1234"'), "case tiny-fix: commit must be a full 40-hex commit id"),
        (('change = "tiny-feature"', 'change = "nothing"'), "case tiny-mixed: field 'change' names no case"),
        (('change = "tiny-feature"', 'change = "tiny-same"'),
         "case tiny-mixed: field 'change' must name a 'change' case, not a 'same' one"),
        (('fix = "tiny-fix"', 'fix = "tiny-change"'),
         "case tiny-mixed: field 'fix' must name a 'unintended' case, not a 'change' one"),
        (('fix = "tiny-fix"\n', ""), "case tiny-mixed: missing field 'fix'"),
        (("same_module = true", 'same_module = "yes"'),
         "case tiny-mixed: field 'same_module' must be a bool"),
        (('needs = "shout(\'a\')"\n', ""), "case tiny-fix: missing field 'needs'"),
    ],
)
def test_bad_new_labels_are_one_line_and_exit_2(
    tmp_path: Path, tiny: dict, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], message: str
) -> None:
    assert edit[0] in NEW_CASES
    manifest = _new_manifest(tmp_path, tiny, NEW_CASES.replace(*edit))
    code = bench.main(["--manifest", str(manifest), "--report-only", "--out", str(tmp_path / "none.json")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"run.py: {message}") and err.count("\n") == 1


def test_a_mixed_case_of_another_repository_is_refused(tmp_path: Path, tiny: dict,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = ('\n[repositories."owner/other"]\nsource = "."\nhalf = "checking"\npackages = ["other"]\n'
             'test_command = "true"\n')
    manifest = _new_manifest(tmp_path, tiny, other + NEW_CASES.replace(
        'repository = "owner/tiny"\nlabel = "mixed"', 'repository = "owner/other"\nlabel = "mixed"'))
    assert bench.main(["--manifest", str(manifest), "--report-only", "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "case tiny-mixed: field 'change' names a case of owner/tiny, not owner/other" in err


def _judged(label: str, *differences: tuple[str | None, str], **extra: object) -> dict:
    """A judged entry: (part it counts for, verdict) per difference; None: elsewhere."""
    found = [{"at": at, "related": at is not None, "verdict": verdict, "kind": "return", "target": "p:f"}
             for at, verdict in differences]
    entry = {"label": label, "status": "ok", "differences": found,
             "related": sum(d["related"] for d in found)}
    bench.judge(entry, bench.Case("x", "o/r", "0" * 40, label, "note"))
    return {**entry, **extra}


def test_triage_tallies_per_label_and_the_figures() -> None:
    entries = {
        # intended: one explained, one with an unexplained difference, one missed
        "c1": _judged("change", ("change", "named-by-pr"), ("change", "asserted-by-pr"),
                      (None, "unexplained")),
        "c2": _judged("change", ("change", "named-by-pr"), ("change", "unexplained")),
        "c3": _judged("change", (None, "unexplained")),
        # unintended: one kept a regression, one explained away, one missed (only a minor difference)
        "u1": _judged("unintended", ("fix", "unexplained"), ("fix", "breaks-existing-test")),
        "u2": _judged("unintended", ("fix", "named-by-pr"), ("fix", "unexplained")),
        "u3": {**_judged("unintended"), "differences": [{"at": None, "related": False, "minor": True,
                                                         "verdict": "unexplained"}]},
        # mixed: both right; the change missed (nothing explained away); a difference at both parts
        # explained (the trap); the regression missed
        "m1": _judged("mixed", ("fix", "unexplained"), ("change", "named-by-pr")),
        "m2": _judged("mixed", ("fix", "breaks-existing-test")),
        "m3": _judged("mixed", ("both", "named-by-pr"), ("change", "named-by-pr")),
        "m4": _judged("mixed", ("change", "named-by-pr")),
        "broken": {"label": "mixed", "status": "broken"},
    }
    cases = [bench.Case(name, "o/r", "0" * 40, entry["label"], "note", same_module=name in ("m1", "m3"))
             for name, entry in entries.items()]
    summary = bench.triage_summary({"cases": entries}, cases)
    rows = {row["name"]: row for row in summary["rows"]}
    assert rows["intended (`change`)"] | {"verdicts": None} == {
        "label": "change", "part": "intended", "name": "intended (`change`)", "measured": 3, "detected": 2,
        "differences": 4, "verdicts": None, "elsewhere": 2, "set_apart": 0}
    assert rows["intended (`change`)"]["verdicts"] == {"asserted-by-pr": 1, "named-by-pr": 2,
                                                       "unexplained": 1}
    unintended = rows["`unintended`: a fix put back, without words"]
    assert (unintended["detected"], unintended["set_apart"]) == (2, 1)
    assert rows["`mixed`: the reverted fix"]["verdicts"] == {"breaks-existing-test": 1, "named-by-pr": 1,
                                                             "unexplained": 1}
    assert (rows["`mixed`: the reverted fix"]["measured"], rows["`mixed`: the change"]["detected"]) == (4, 3)
    figures = summary["figures"]["all"]
    assert summary["figures"]["checking"] == summary["figures"]["tuning"] == {}  # no case has a half here
    assert figures["intended"]["detected"] == {"count": 2, "of": 3, "share": 0.667}
    assert figures["intended"]["cases"] == {"count": 1, "of": 2, "share": 0.5}
    assert figures["intended"]["differences"] == {"count": 3, "of": 4, "share": 0.75}
    assert figures["unintended"] == {"detected": {"count": 2, "of": 3, "share": 0.667}}
    # the rules' tallies: a naming rule's explanation of u2's regression is a false one
    assert summary["rules"]["all"] == {"(unnamed)": {"regression": 2, "intended": 6}}
    mixed = figures["mixed"]
    assert mixed["of_all"] == {"count": 2, "of": 4, "share": 0.5}  # m1, and m2 (its change showed nothing)
    assert mixed["of_all_with_change_missed"] == 1
    assert mixed["of_both_detected"] == {"count": 1, "of": 2, "share": 0.5}  # m1 of m1, m3
    assert (mixed["regression_detected"], mixed["change_detected"]) == (3, 3)
    assert mixed["of_same_module"] == {"count": 1, "of": 2, "share": 0.5}
    lines = bench._triage({"cases": entries}, cases)
    assert "| `mixed`: the change | 3/4 (75%) | 3 | 0 | 0 | 0 | 3 | 0 | 0 | 0 |" in lines
    assert ("| `mixed` right (regression kept, change explained), of all | >= 60% | - | - | 2/4 (50%) |"
            in lines)
    assert "| `mixed` right, of those with both parts detected |  | - | - | 1/2 (50%) |" in lines


def test_a_difference_at_both_parts_goes_to_the_one_whose_unit_it_is() -> None:
    """`shout` changed by the fix and calling the changed `whisper`: the fix's (its own changed unit);
    a caller of both stays `both`."""
    fix = bench.ChangeMap({("p", "shout")}, {("p", "shout"), ("p", "both")}, {}, {})
    change = bench.ChangeMap({("p", "whisper")}, {("p", "whisper"), ("p", "shout"), ("p", "both")}, {}, {})
    maps = {"change": change, "fix": fix}
    assert bench.attribute(_difference("p:shout"), maps) == "fix"
    assert bench.attribute(_difference("p:whisper"), maps) == "change"
    assert bench.attribute(_difference("p:both"), maps) == "both"
    assert bench.attribute(_difference("p:other"), maps) is None
    assert bench.attribute({**_difference("p:shout"), "severity": "minor", "minor": True}, maps) is None


def _tested(target: str, call: str) -> dict:
    """A difference at `target` with the test that shows it (as the report's `test` holds it)."""
    test = f"import tiny\n\n\ndef test_it():\n    assert {call} == 0\n"
    return {**_difference(target), "test": test}


def test_a_difference_whose_test_runs_the_change_counts(tmp_path: Path, tiny: dict) -> None:
    commits = tiny["commits"]
    reports = {commits["change"]: [_tested("tiny:unrelated", "tiny.unrelated(1)"),
                                   _tested("tiny:octuple", "tiny.octuple(1)")]}
    _, results = _run(tmp_path, tiny, reports, "--only", "tiny-change")
    change = results["cases"]["tiny-change"]
    # a caller's caller is at the change only by what its test ran: double's changed line
    assert [d.get("ran_parts") for d in change["differences"]] == [[], ["change"]]
    assert [d["at"] for d in change["differences"]] == [None, "change"]
    assert change["detected"] is True
    (tmp_path / "results.json").unlink()
    _, results = _run(tmp_path, tiny, {commits["change"]: [_tested("tiny:unrelated", "tiny.unrelated(1)")]},
                      "--only", "tiny-change")
    assert results["cases"]["tiny-change"]["detected"] is False


def test_the_tracer_counts_a_method_run_on_an_instance_of_a_changed_class(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "words.py").write_text(textwrap.dedent("""\
        class Words:
            table = {"year": "a year"}

            def describe(self, key):
                return self.table[key]


        class Turkish(Words):
            table = {"year": "bir yil"}
        """))
    (tmp_path / "tracer.py").write_text(bench.TRACER)
    (tmp_path / "base.json").write_text(json.dumps({"lines": {}, "classes": [["words", "Turkish"]]}))
    interpreter = Path(sys.executable)
    for call, ran in (("Turkish().describe('year')", True), ("Words().describe('year')", False)):
        (tmp_path / "test_difference.py").write_text(
            f"from words import Turkish, Words\n\n\ndef test_it():\n    assert {call} == ''\n"
        )
        assert bench._ran(interpreter, tmp_path, "base", tmp_path / "lib") is ran, call


def test_the_tracer_counts_a_direct_caller_of_a_changed_table_that_ran(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "table.py").write_text(
        "END = '$'\n\n\ndef read(text):\n    return text.endswith(END)\n"
        "\n\ndef other(text):\n    return text\n")
    (tmp_path / "tracer.py").write_text(bench.TRACER)
    # END's line runs at import, which is not traced; `read`, a direct caller of it, runs in the test
    (tmp_path / "head.json").write_text(json.dumps({"lines": {str(tmp_path / "lib" / "table.py"): [1]},
                                                    "classes": [], "units": [["table", "read"]]}))
    for call, ran in (("read('a')", True), ("other('a')", False)):
        (tmp_path / "test_difference.py").write_text(f"from table import other, read\n\n\ndef test_it():\n"
                                                     f"    assert {call} == 0\n")
        assert bench._ran(Path(sys.executable), tmp_path, "head", tmp_path / "lib") is ran, call


def test_a_mixed_cases_traced_difference_goes_to_the_part_whose_lines_its_test_ran(tmp_path: Path,
                                                                                     tiny: dict) -> None:
    heads = _synthetic_heads(tmp_path, tiny)
    test = "from tiny.text import {0}\n\n\ndef test_it():\n    assert {0}('a') == 0\n"
    calling = {name: {**_difference("tiny:unrelated"), "test": test.format(name)}
               for name in ("shout", "whisper")}
    _, results = _run(tmp_path, tiny, {heads["tiny-mixed"]: [calling["shout"], calling["whisper"]]},
                      "--only", "tiny-mixed", manifest=_new_manifest(tmp_path, tiny))
    mixed = results["cases"]["tiny-mixed"]
    # shout's fixed line is the reverted fix's; whisper's ellipsis is the change's
    assert [d["ran_parts"] for d in mixed["differences"]] == [["fix"], ["change"]]
    assert [d["at"] for d in mixed["differences"]] == ["fix", "change"]
    assert mixed["detected"] is True and mixed["detected_change"] is True


@pytest.mark.slow
def test_a_mixed_cases_difference_goes_to_the_part_whose_commit_alone_makes_its_test_fail(
        tmp_path: Path, tiny: dict) -> None:
    """Both tests sit at `shout` (where the fix is): replayed on C (the change, the fix kept) and on X
    (the fix reverted alone), one fails only with the fix gone, the other only with the change."""
    clone = _clone(tiny, tmp_path / "replay")
    case = _cases(tmp_path, tiny)["tiny-mixed"]
    made = bench.pull_request(clone, case, REPO)
    tests = {"fix": "from tiny.text import shout\n\n\ndef test_it():\n    assert shout('a') == 'A!'\n",
             "change": "from tiny.text import whisper\n\n\ndef test_it():\n    assert whisper('A') == 'a'\n",
             "neither": "def test_it():\n    assert False\n"}
    report = {"differences": [{**_difference("tiny.text:shout"), "test": test} for test in tests.values()]}
    entry = {"differences": [dict(difference) for difference in report["differences"]]}

    bench.replay_parts(entry, report, case, made, clone, REPO, Path(sys.executable), tmp_path)

    caused = [difference.get("caused_by") for difference in entry["differences"]]
    assert caused == [["fix"], ["change"], None]  # the last does not pass on base: not replayed
    maps = bench.change_maps(clone, case, REPO)
    assert [bench.attribute(difference, maps) for difference in entry["differences"]] == [
        "fix", "change", bench.attribute(_difference("tiny.text:shout"), maps)]


# ---------------------------------------------------------------- regression cases (SZZ)


def test_a_regression_case_is_its_commit_with_its_own_words_and_its_fix_checked(tmp_path: Path,
                                                                              tiny: dict) -> None:
    commits = tiny["commits"]
    speedup = commits["Speed up octuple"]
    code, results = _run(tmp_path, tiny, {speedup: [_difference("tiny:octuple")]}, "--only",
                         "tiny-regression", manifest=_new_manifest(tmp_path, tiny))
    assert code == 0
    entry = results["cases"]["tiny-regression"]
    assert entry["label_check"] == {
        "ok": True, "parent": "14\n", "commit": "8\n", "fix": "14\n", "fix_parent": "8\n",
        "still_broken_before_fix": True,
        "commits": {"base": commits["louder"], "head": speedup}}  # its parent, and it
    assert entry["fix_commit"] == commits["Fix octuple, broken since the speed-up"]
    calls = (tmp_path / "calls.log").read_text()
    assert f"{speedup} 'Speed up octuple'" in calls  # the commit's own subject, as --pr-title
    # a difference whose test cannot be replayed (none here) is not the regression found
    assert entry["detected"] is False and entry["detected_change"] is True


def test_a_regression_witness_the_fix_does_not_restore_breaks_the_case(tmp_path: Path, tiny: dict) -> None:
    text = NEW_CASES.replace('fix = "{regression_fix}"', 'fix = "{later}"')
    commits = tiny["commits"]
    manifest = _manifest(tmp_path / "manifest.toml", commits, text.format(
        feature=commits["Whisper trails off"], fix=commits["fix"], regression=commits["Speed up octuple"],
        later=commits["Document unrelated"]))
    _, results = _run(tmp_path, tiny, {}, "--labels-only", "--only", "tiny-regression", manifest=manifest)
    entry = results["cases"]["tiny-regression"]
    assert entry["status"] == "broken"
    assert entry["reason"] == "witness prints on the fix what it does not print on the parent"
    backwards = NEW_CASES.format(feature=commits["Whisper trails off"], fix=commits["fix"],
                                 regression=commits["Fix octuple, broken since the speed-up"],
                                 regression_fix=commits["Speed up octuple"])
    _, results = _run(tmp_path, tiny, {}, "--labels-only", "--only", "tiny-regression",
                      manifest=_manifest(tmp_path / "other.toml", commits, backwards))
    assert results["cases"]["tiny-regression"]["reason"].endswith("does not descend from the commit")


@pytest.mark.slow
def test_a_regression_cases_difference_is_the_bugs_when_the_fix_restores_it(tmp_path: Path,
                                                                            tiny: dict) -> None:
    """Replayed on the fix's parent and the fix: the bug's test fails before the fix and passes on it;
    one that passes before the fix too was not put right by it; a test that fails on base is not
    replayed."""
    clone = _clone(tiny, tmp_path / "replay")
    case = _cases(tmp_path, tiny)["tiny-regression"]
    tests = ["import tiny\n\n\ndef test_it():\n    assert tiny.octuple(1) == 14\n",
             "def test_it():\n    assert False\n",
             "import tiny\n\n\ndef test_it():\n    assert tiny.double(1) == 3\n"]  # passes everywhere
    report = {"differences": [{**_difference("tiny:octuple"), "test": test} for test in tests]}
    entry = {"differences": [dict(difference) for difference in report["differences"]]}

    bench.replay_fix(entry, report, case, clone, REPO, Path(sys.executable), tmp_path)

    assert [d.get("restored") for d in entry["differences"]] == [True, None, False]
    entry.update(status="ok", related=1, label="regression")
    bench.judge(entry, case)
    assert entry["detected"] is True
    entry["differences"] = entry["differences"][1:]
    bench.judge(entry, case)
    assert entry["detected"] is False and entry["detected_change"] is True


def test_the_rules_tallies_count_false_explanations_and_refusals_per_half() -> None:
    """A regression case's bug explained by naming is a false explanation of `words-name-it`; a
    change explained by it is earned; a naming passage refused because it says its change keeps
    behaviour kept one regression unexplained and left one intended change so."""
    keeps = ["the title names it, but says its change keeps behaviour: \"Speed up f\""]
    bug = {"restored": True, "related": True, "kind": "return", "target": "p:f"}
    entries = {
        "r1": {"label": "regression", "status": "ok", "detected": True, "detected_change": True,
               "differences": [{**bug, "verdict": "named-by-pr", "rule": "words-name-it"},
                               {**bug, "restored": False, "verdict": "named-by-pr",
                                "rule": "words-name-it"}]},
        "r2": {"label": "regression", "status": "ok", "detected": True, "detected_change": True,
               "differences": [{**bug, "verdict": "unexplained", "closest": keeps}]},
        "c1": _judged("change", ("change", "named-by-pr")),
        "c2": _judged("change", ("change", "unexplained")),
    }
    entries["c1"]["differences"][0]["rule"] = "words-name-it"
    entries["c2"]["differences"][0]["closest"] = keeps
    halves = {"r1": "tuning", "r2": "checking", "c1": "checking", "c2": "checking"}
    cases = [bench.Case(name, "o/r", "0" * 40, entry["label"], "note", half=halves[name])
             for name, entry in entries.items()]
    rules = bench.triage_summary({"cases": entries}, cases)["rules"]
    # r1's other difference is not scored: whether its commit meant it is not known
    assert rules["tuning"] == {"words-name-it": {"regression": 1, "intended": 0}}
    assert rules["checking"] == {"refused: keeps-behaviour": {"regression": 1, "intended": 1},
                                 "words-name-it": {"regression": 0, "intended": 1}}
    figures = bench.triage_summary({"cases": entries}, cases)["figures"]
    assert figures["tuning"]["regression"]["kept"]["cases"] == {"count": 0, "of": 1, "share": 0.0}
    assert figures["checking"]["regression"]["kept"]["cases"] == {"count": 1, "of": 1, "share": 1.0}
    assert figures["all"]["regression"]["detected"] == {"count": 2, "of": 2, "share": 1.0}


def test_direct_callers_are_found_by_resolved_name_not_by_last_part() -> None:
    """A changed `pkg.util.slug` and `Store.get`/`Store.fetch`: `cfg.get(...)` on any object is not a
    caller of `Store.get` (dicts have a `get`), `store.fetch()` is (no standard type and no other
    class of the package has a `fetch`); imported, module-qualified and `self` uses resolve."""
    index = bench.ModuleIndex.parse(textwrap.dedent("""\
        import pkg.util as u
        from . import util
        from .store import Store
        from .util import slug as make_slug

        def imported(): return make_slug("x")
        def qualified(): return util.slug("x")
        def aliased(): return u.slug("x")
        def other_module(): return other.slug("x")
        def any_get(cfg): return cfg.get("k")
        def unique_member(store): return store.fetch()
        def own_name(): return slug("x")

        class Sub(Store):
            def reads(self):
                return self.get("k")

        class Unrelated:
            def reads(self):
                return self.get("k")
        """), "pkg.api")
    assert index.imports["make_slug"] == "pkg.util.slug" and index.imports["util"] == "pkg.util"
    resolver = bench._Resolver(("pkg",), {"Sub": {"Store"}, "Unrelated": set()},
                               {"get": 1, "fetch": 1, "reads": 2})
    changed = {("pkg.util", "slug", ""), ("pkg.store", "get", "Store"), ("pkg.store", "fetch", "Store")}
    callers = {name for name, used in index.references.items()
               if resolver.uses("pkg.api", index, name, used, changed)}
    assert callers == {"imported", "qualified", "aliased", "unique_member", "Sub.reads"}
    assert resolver.uses("pkg.util", index, "own_name", index.references["own_name"], changed)  # its module


def test_version_metadata_is_no_change() -> None:
    """A release bumps `__version__` and a user agent built from it: neither is a behaviour."""
    old = bench.ModuleIndex.parse('__version__ = "1.2.3"\nVERSION_INFO = (1, 2, 3)\nLIMIT = 10\n')
    new = bench.ModuleIndex.parse('__version__ = "1.2.4"\nVERSION_INFO = (1, 2, 4)\nLIMIT = 20\n')
    versions = bench._versions(old, new, {1, 2, 3}, {1, 2, 3})
    assert versions == [("1.2.3", "1.2.4"), ("(1, 2, 3)", "(1, 2, 4)")]  # not LIMIT: no version name
    changes = bench.ChangeMap(set(), set(), {}, {}, versions=versions)
    assert changes.is_metadata({"target": "pkg:__version__", "base": "'1.2.3'", "head": "'1.2.4'"})
    assert changes.is_metadata({"target": "pkg.http:USER_AGENT", "base": "'pkg/1.2.3 (python)'",
                                "head": "'pkg/1.2.4 (python)'"})
    assert not changes.is_metadata({"target": "pkg:LIMIT", "base": "10", "head": "20"})
    assert not changes.is_metadata({"target": "pkg.http:agent", "base": "'pkg/1.2.3'", "head": "'pkg/2'"})
    assert bench.apart({"metadata": True}) and not bench.apart({"metadata": False})
