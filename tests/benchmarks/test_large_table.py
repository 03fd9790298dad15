"""The parts of benchmarks/large_table.py that need no run: the repository it builds, and how it
judges a report."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from support.paths import BENCHMARKS

_spec = importlib.util.spec_from_file_location("bench_large_table", BENCHMARKS / "large_table.py")
large_table = importlib.util.module_from_spec(_spec)
sys.modules["bench_large_table"] = large_table
_spec.loader.exec_module(large_table)


def _show(repo: Path, commit: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def test_the_repository_changes_one_entry_of_a_table_of_the_size_asked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base, head, changed = large_table.build(repo, 0.2, 0.1)
    before, after = _show(repo, base, "tables/generated.py"), _show(repo, head, "tables/generated.py")
    assert abs(len(before) - 200_000) < 10_000
    old = [line for line in before.splitlines() if line not in after.splitlines()]
    assert len(old) == 1 and f"'name{changed:06d}'" in old[0]
    assert (repo / "tables" / "names.dat").stat().st_size == 100_000


def _report(differences: list[dict], covered: int) -> dict:
    return {"schema": "difforacle.report/1", "base": "a" * 40, "head": "b" * 40, "differences": differences,
            "coverage": {"changed_lines": 1, "changed_lines_covered": covered, "uncovered": {}},
            "reach": [{"unit": "tables.generated:<module>", "path": "tables/generated.py", "lines": 1,
                       "run": 0, "reason": "it ran only while its module was imported"}],
            "stats": {"sequences": 0, "seconds": 1.0}, "notes": []}


def test_a_report_is_judged_by_the_entry_and_by_what_it_says_of_the_line() -> None:
    unchecked = large_table.judge(_report([], covered=1), 7)
    assert not unchecked["entry_reported"] and not unchecked["contradiction"]
    assert "ran only at import" in unchecked["headline"]
    unrun = large_table.judge(_report([], covered=0), 7)
    assert "none of the" in unrun["headline"] and not unrun["contradiction"]
