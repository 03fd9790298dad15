"""The report's JSON form, `difforacle.report/1`: the contract with the front ends and other
readers, validated against the shipped schema before it is written."""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from ..version import VERSION
from .model import Allocation, Coverage, Difference, Report, Stats

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


SCHEMA_ID = "difforacle.report/1"



def report_to_json(report: Report) -> dict:
    """The report as plain JSON data; `statements` becomes a count, the sequence itself stays internal."""
    return {
        "schema": SCHEMA_ID,
        "version": VERSION,  # difforacle's, that wrote it
        "base": report.base,
        "head": report.head,
        "differences": [_difference_to_json(d) for d in report.differences],
        "coverage": _coverage_to_json(report.coverage),
        **({"allocation": _allocation_to_json(report.allocation)} if report.allocation else {}),
        "stats": _stats_to_json(report.stats),
        "notes": list(report.notes),
        "reach": [asdict(unit) for unit in report.reach],
        **({"error": asdict(report.error)} if report.error else {}),
    }



def _difference_to_json(difference: Difference) -> dict:
    return {
        "id": difference.id,
        "kind": difference.kind,
        "target": difference.target,
        "path": difference.path,
        "line": difference.line,
        "side": difference.side,
        "base": difference.base,
        "head": difference.head,
        "test": difference.test,
        "count": difference.count,
        "statements": len(difference.statements),
        "key": difference.key,
        "pin_base": difference.pin_base,
        "pin_head": difference.pin_head,
        "reproduced": difference.reproduced,
        "minimized": difference.minimized,
        "severity": difference.severity,
        "verdict": str(difference.verdict),
        "evidence": difference.evidence,
        "rule": difference.rule,
        "closest": list(difference.closest),
        "origin": str(difference.origin),
        "carved_by": list(difference.carved_by),
        "direct": difference.direct,
        "entries": [{"change": entry.change, "entry": entry.entry, "words": list(entry.words),
                     "edits": [list(edit) for edit in entry.edits]} for entry in difference.entries],
    }



def _coverage_to_json(coverage: Coverage) -> dict:
    # Sorted so the same coverage always serializes the same way.
    data: dict = {
        "changed_lines": coverage.changed_lines,
        "changed_lines_covered": coverage.changed_lines_covered,
        "uncovered": _lines_by_path(coverage.uncovered),
        "changed_branches": coverage.changed_branches,
        "changed_branches_covered": coverage.changed_branches_covered,
    }
    if coverage.measured_by:
        data["measured_by"] = coverage.measured_by
    if coverage.sides:
        data["sides"] = {side: {**asdict(detail), "uncovered": _lines_by_path(detail.uncovered),
                                "uncovered_branches": dict(sorted(detail.uncovered_branches.items()))}
                         for side, detail in sorted(coverage.sides.items())}
    return data



def _lines_by_path(lines: dict[str, list[int]]) -> dict[str, list[int]]:
    return {path: sorted(set(found)) for path, found in sorted(lines.items())}



def _allocation_to_json(allocation: Allocation) -> dict:
    return {"mode": allocation.mode, "units": [asdict(unit) for unit in allocation.units]}



def _stats_to_json(stats: Stats) -> dict:
    # Timings are rounded: more digits are noise and make reports needlessly differ.
    data = asdict(stats)
    data["seconds"] = round(stats.seconds, 2)
    data["sequences_per_second"] = round(stats.sequences_per_second, 2)
    data["history_seconds"] = round(stats.history_seconds, 3)
    data["techniques"] = {name: dict(sorted(counted.items()))
                          for name, counted in sorted(stats.techniques.items())}
    return data



def load_schema(name: str = "report-1.json") -> dict:
    """A shipped JSON Schema (default `difforacle.report/1`) from the package data, a fresh copy each call."""
    text = (files("difforacle.generator.report") / "schemas" / name).read_text(encoding="utf-8")
    return json.loads(text)



@cache
def schema_validator(name: str = "report-1.json") -> Draft202012Validator:
    """A validator of the shipped schema `name` (checked once, then cached)."""
    from jsonschema import Draft202012Validator  # on first use: it takes a while, `--help` needs none

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)



def validate_report(data: dict) -> None:
    """Raise `jsonschema.ValidationError` if `data` is not a valid `difforacle.report/1` document."""
    schema_validator().validate(data)
