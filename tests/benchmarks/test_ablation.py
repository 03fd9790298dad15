"""The pure parts of benchmarks/ablation.py: the ablation table built from harness results."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from support.paths import BENCHMARKS

_spec = importlib.util.spec_from_file_location("bench_ablation", BENCHMARKS / "ablation.py")
ablation = importlib.util.module_from_spec(_spec)
sys.modules["bench_ablation"] = ablation
_spec.loader.exec_module(ablation)


def _case(killed: bool, detected: bool, seconds: float = 20.0) -> dict:
    return {"killed": killed, "detected": detected, "seconds": seconds, "kind": "mutant"}


Figures = tuple[int, int, int, int, int]  # lines covered, lines, branches covered, branches, sequences


def _write_run(out: Path, name: str, cases: dict[str, dict], reports: list[Figures]) -> None:
    """A harness result file and its kept reports."""
    (out / f"{name}.json").write_text(json.dumps({"tool": "difforacle", "cases": cases}))
    (out / name).mkdir()
    for index, (lines_covered, lines, branches_covered, branches, sequences) in enumerate(reports):
        coverage = {"changed_lines_covered": lines_covered, "changed_lines": lines,
                    "changed_branches_covered": branches_covered, "changed_branches": branches}
        report = {"coverage": coverage, "stats": {"sequences": sequences}}
        (out / name / f"case{index}.json").write_text(json.dumps(report))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    _write_run(tmp_path, "all-s1", {"a-m001": _case(True, True, 10), "a-m002": _case(True, False, 30),
                                    "a-m003": _case(False, True, 20)},
               [(2, 2, 1, 2, 100), (1, 2, 0, 0, 300)])
    _write_run(tmp_path, "all-s2", {"a-m001": _case(True, True), "a-m002": _case(True, True),
                                    "a-m003": _case(False, False)},
               [(2, 2, 2, 2, 200)])
    _write_run(tmp_path, "types-s1", {"a-m001": _case(True, False), "a-m002": _case(True, False),
                                      "a-m003": _case(False, False)},
               [(0, 2, 0, 2, 50)])
    return tmp_path


def _table(out: Path, peers: list[Path] | None = None) -> list[str]:
    return ablation.table(argparse.Namespace(out=str(out), peers=peers or [])).splitlines()


def test_a_configuration_pools_detection_coverage_and_sequences_over_seeds(results: Path) -> None:
    rows = _table(results)
    assert rows[2] == "| all components | 1/2, 2/2 | 3/4 (75.0%) | 5/6 (83.3%) | 3/4 (75.0%) | 200 | 20.0 |"
    assert rows[3] == "| without types | 0/2 | 0/2 (0.0%) | 0/2 (0.0%) | 0/2 (0.0%) | 50 | 20.0 |"
    assert len(rows_with(rows, "| without")) == 1  # configurations not run are left out


def test_the_missed_killed_mutants_are_listed_with_their_seed(results: Path) -> None:
    rows = _table(results)
    assert "- all components: a-m002 (s1)" in rows
    assert "- without types: a-m001 (s1), a-m002 (s1)" in rows


def test_false_alarms_are_named_per_seed(results: Path) -> None:
    assert rows_with(_table(results), "False positives") == [
        "False positives on the refactor and self cases, all components: not run"]
    (results / "fp-s1.json").write_text(json.dumps({"cases": {"a-r001": _case(False, False),
                                                              "a-self": _case(False, True)}}))
    (results / "fp-s2.json").write_text(json.dumps({"cases": {"a-r001": _case(False, False)}}))
    assert rows_with(_table(results), "False positives") == [
        "False positives on the refactor and self cases, all components: s1: 1/2 (a-self); s2: 0/1"]


def test_peers_are_compared_on_exactly_the_cases_measured_here(results: Path, tmp_path: Path) -> None:
    peer = tmp_path / "peers" / "peer-b30.json"
    peer.parent.mkdir()
    peer.write_text(json.dumps({"tool": "peer", "cases": {
        "a-m001": _case(True, True, 70), "a-m002": _case(True, False, 60),  # measured here
        "a-m009": _case(True, True, 50)}}))  # not measured here: ignored
    assert rows_with(_table(results, [peer]), "| peer") == [
        "| peer (peer-b30.json) | 1/2 (50.0%) | 2 of 3 | 65.0 |"]


def rows_with(rows: list[str], prefix: str) -> list[str]:
    return [row for row in rows if row.startswith(prefix)]
