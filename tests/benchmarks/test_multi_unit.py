"""The pure parts of benchmarks/multi_unit.py: edit planning, line mapping, the results table."""

from __future__ import annotations

import ast
import importlib.util
import sys

import pytest
from support.paths import BENCHMARKS

_spec = importlib.util.spec_from_file_location("bench_multi_unit", BENCHMARKS / "multi_unit.py")
bmu = importlib.util.module_from_spec(_spec)
sys.modules["bench_multi_unit"] = bmu
_spec.loader.exec_module(bmu)

SOURCE = '''\
def target(x):
    return x + 1


def renamable(x):
    total = x * 2
    return total


def swappable(x):
    if x > 0:
        return "pos"
    else:
        return "neg"


def commented(x):
    return x
'''
OTHER = '''\
def elsewhere(items):
    found = [i for i in items if i]
    return found
'''


@pytest.fixture(scope="module")
def harness():
    if not (bmu.DEFAULT_BENCH / "refactor.py").is_file():
        pytest.skip(f"no shared benchmark harness at {bmu.DEFAULT_BENCH}")
    return bmu.load_harness(bmu.DEFAULT_BENCH)


def test_plan_edits_touches_other_units_only_and_is_deterministic(harness):
    sources = {"pkg/a.py": SOURCE.replace("x + 1", "x - 1"), "pkg/b.py": OTHER}
    final, edits = bmu.plan_edits(harness, sources, "pkg/a.py", "target", 3, "seed")
    assert len(edits) == 3
    assert "target" not in {e.function for e in edits}
    assert {e.operator for e in edits} <= {"rename_local", "swap_if"}  # code edits come before comments
    assert "pkg/b.py" in {e.file for e in edits}  # slots alternate between modules
    for file, text in final.items():
        changed = set(harness.astutil.changed_functions(sources[file], text))
        assert changed == {e.function for e in edits if e.file == file}
        ast.parse(text)
    again = bmu.plan_edits(harness, sources, "pkg/a.py", "target", 3, "seed")
    assert again[0] == final


def test_plan_edits_falls_back_to_comments_in_the_mutated_file(harness):
    sources = {"pkg/a.py": SOURCE, "pkg/b.py": OTHER}
    _, edits = bmu.plan_edits(harness, sources, "pkg/a.py", "target", 10, "seed")
    comments = [e for e in edits if e.operator == "comment"]
    assert comments and all(e.file == "pkg/a.py" for e in comments)
    assert len(edits) == 4  # renamable, swappable, elsewhere, commented


def test_map_line_follows_inserted_lines():
    old = "a\nb\nc\n"
    assert bmu.map_line(old, "a\n# new\nb\nc\n", 3) == 4
    assert bmu.map_line(old, "a\nB\nc\n", 2) is None


def test_mutant_line_covered():
    case = {"mutant": {"file": "m.py", "head_line": 7}}
    assert bmu.mutant_line_covered(case, {"changed_lines": 3, "changed_lines_covered": 2,
                                          "uncovered": {"m.py": [7]}}) is False
    assert bmu.mutant_line_covered(case, {"changed_lines": 3, "changed_lines_covered": 2,
                                          "uncovered": {"m.py": [9]}}) is True
    assert bmu.mutant_line_covered(case, {}) is None
    head = {"changed_lines": 1, "changed_lines_covered": 0, "uncovered": {"m.py": [7]}}
    assert bmu.mutant_line_covered(case, {"changed_lines": 1, "changed_lines_covered": 1,
                                          "sides": {"head": head}}) is False


def test_render_table_pools_seeds_and_pairs_allocations():
    def run(case, allocation, seed, detected):
        return {"case": case, "subject": "s", "allocation": allocation, "seed": seed, "detected": detected,
                "seconds": 10.0, "coverage": {"changed_lines": 4, "changed_lines_covered": 2},
                "mutant_line_covered": detected, "error": None}

    runs = [run("c1", "defect", 1, True), run("c1", "uniform", 1, False),
            run("c1", "defect", 2, True), run("c1", "uniform", 2, True)]
    table = bmu.render_table(runs, 10)
    assert "| s | defect | s1 1/1, s2 1/1 | 2/2 (100%) | 10.0 | 50% | 2/2 | 0 |" in table
    assert "| s | uniform | s1 0/1, s2 1/1 | 1/2 (50%) |" in table
    assert "s: defect only 1, uniform only 0, of 2 pairs" in table


def test_missing_manifest_is_a_one_line_error(tmp_path, capsys):
    assert bmu.main(["run", "--budget", "5", "--manifest", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
