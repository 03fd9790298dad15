"""The scope and the float policy applied by the engine as it runs, and read by `difforacle diff`
from the project's settings (its flags override them; bad settings stop it with one line)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from support.analysis import run_analyze
from support.command_line import run_cli
from support.repos import RepoBuilder, make_pr

from difforacle.generator import FloatPolicy, Scope

BEFORE = {
    "pkg/__init__.py": "",
    "pkg/a.py": "def f(x):\n    return x + 1\n\n\ndef k(x):\n    return x * 0.1\n",
    "pkg/b.py": "def g(x):\n    return x - 1\n",
    "vendor/__init__.py": "",
    "vendor/c.py": "def h(x):\n    return x * 2\n",
}
AFTER = {
    "pkg/a.py": "def f(x):\n    return x + 2\n\n\ndef k(x):\n    return x * 0.10000001\n",
    "pkg/b.py": "def g(x):\n    return x - 2\n",
    "vendor/c.py": "def h(x):\n    return x * 3\n",
}
SETTINGS = textwrap.dedent("""
    [tool.difforacle]
    exclude = ["vendor"]
    ignore-targets = ["pkg.b:*"]
    float-policy = {rel = 1e-6}
""")


@pytest.fixture
def project(builder: RepoBuilder) -> RepoBuilder:
    make_pr(builder, BEFORE, AFTER)
    return builder


def _targets(report) -> set[str]:
    return {d.target for d in report.differences}


@pytest.mark.slow
def test_without_settings_every_change_differs(project: RepoBuilder) -> None:
    report = run_analyze(project, budget=10, max_sequences=400)
    assert _targets(report) == {"pkg.a:f", "pkg.a:k", "pkg.b:g", "vendor.c:h"}


@pytest.mark.slow
def test_the_scope_and_the_float_policy_apply_before_and_during_the_run(project: RepoBuilder) -> None:
    report = run_analyze(project, budget=10, max_sequences=400,
                         scope=Scope(exclude=("vendor",), ignore_targets=("pkg.b:*",)),
                         floats=FloatPolicy(rel=1e-6))
    assert _targets(report) == {"pkg.a:f"}
    assert report.allocation is not None  # no budget planned for what is left out
    assert {u.unit for u in report.allocation.units} == {"pkg.a:f", "pkg.a:k"}
    assert any("1 changed Python file(s) outside the include/exclude settings" in n for n in report.notes)
    assert "vendor/c.py" not in report.coverage.sides["head"].uncovered  # not measured either


@pytest.mark.slow
def test_diff_reads_the_projects_settings_and_its_flags_override_them(project: RepoBuilder,
                                                                      tmp_path: Path) -> None:
    (project.root / "pyproject.toml").write_text(SETTINGS)  # the working tree's, as a user edits it
    common = ("diff", "--repo", str(project.root), "--base", "main", "--head", "feature", "--budget", "10",
              "--max-sequences", "400", "--quiet")
    read = run_cli(*common, "--json", str(tmp_path / "read.json"))
    assert read.returncode == 1, read.stderr
    assert re.search(r"^### D\d+ return: `pkg\.a:f`$", read.stdout, re.M) and "pkg.b:g" not in read.stdout
    assert "vendor.c:h" not in read.stdout and "pkg.a:k" not in read.stdout
    flags = run_cli(*common, "--exclude", "pkg/a.py", "--include", "pkg")  # replaces the file's lists
    assert flags.returncode == 0, flags.stderr  # only pkg/b.py is left, and its target is still ignored
    assert "showed differences in targets the project ignores" in flags.stdout
    other = tmp_path / "settings.toml"
    other.write_text("[tool.difforacle]\nexclude = [\"pkg\"]\n")
    elsewhere = run_cli(*common, "--config", str(other))
    assert elsewhere.returncode == 1 and "vendor.c:h" in elsewhere.stdout and "pkg.a" not in elsewhere.stdout


def test_bad_settings_stop_diff_with_one_line(project: RepoBuilder, tmp_path: Path) -> None:
    (project.root / "pyproject.toml").write_text("[tool.difforacle]\nexclued = [\"vendor\"]\n")
    result = run_cli("diff", "--repo", str(project.root), "--base", "main", "--head", "feature", "--quiet")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown key 'exclued' (did you mean 'exclude'?)" in result.stderr
    missing = run_cli("diff", "--repo", str(project.root), "--base", "main", "--head", "feature",
                      "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
