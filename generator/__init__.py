"""The difforacle engine: (repository, base, head, budget) -> Report. No network, no GitHub.

This module is the engine's whole surface for its front ends (`difforacle.bot`): running it,
planning a run without running it, and the report's data, JSON form and files. Presenting the
report to people (its Markdown) is the front ends' job. Nothing else of the engine is imported
from outside it (tests/test_architecture.py checks that).

Each name loads its module when it is first used (PEP 562), so that what needs little of the
engine loads little: `difforacle --version` reads `VERSION` without the engine's modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .changes.checkout import open_repo
    from .changes.scope import EVERYTHING, Scope
    from .demo import DEMO_DESCRIPTION, build_demo_repo
    from .engine import analyze
    from .errors import InternalError, SetupError
    from .generation.techniques import NAMES as COMPONENTS
    from .generation.techniques import OFF_BY_DEFAULT, Components
    from .options import READING_HISTORY, Options, Progress
    from .oracle.leaves import EXACT_ENOUGH, FloatPolicy
    from .planning.allocation import TIER1_SHARE
    from .planning.defect_scores import WINDOW, RiskTable, UnitRisk
    from .planning.plan import ALLOCATIONS, HistoryOptions, PlannedChange, plan_pull_request, plan_repository
    from .report.files import write_atomic, write_json, write_tests
    from .report.json_form import report_to_json, schema_validator, validate_report
    from .report.model import COUNTED, EXPLAINED, NOT_MEASURED, Report, Verdict
    from .version import VERSION

_WHERE = {  # name -> the module of the engine that defines it (":NAME": under another name there)
    "open_repo": ".changes.checkout",
    "EVERYTHING": ".changes.scope",
    "Scope": ".changes.scope",
    "DEMO_DESCRIPTION": ".demo",
    "build_demo_repo": ".demo",
    "analyze": ".engine",
    "InternalError": ".errors",
    "SetupError": ".errors",
    "COMPONENTS": ".generation.techniques:NAMES",
    "OFF_BY_DEFAULT": ".generation.techniques",
    "Components": ".generation.techniques",
    "READING_HISTORY": ".options",
    "Options": ".options",
    "Progress": ".options",
    "EXACT_ENOUGH": ".oracle.leaves",
    "FloatPolicy": ".oracle.leaves",
    "TIER1_SHARE": ".planning.allocation",
    "WINDOW": ".planning.defect_scores",
    "RiskTable": ".planning.defect_scores",
    "UnitRisk": ".planning.defect_scores",
    "ALLOCATIONS": ".planning.plan",
    "HistoryOptions": ".planning.plan",
    "PlannedChange": ".planning.plan",
    "plan_pull_request": ".planning.plan",
    "plan_repository": ".planning.plan",
    "write_atomic": ".report.files",
    "write_json": ".report.files",
    "write_tests": ".report.files",
    "report_to_json": ".report.json_form",
    "schema_validator": ".report.json_form",
    "validate_report": ".report.json_form",
    "COUNTED": ".report.model",
    "EXPLAINED": ".report.model",
    "NOT_MEASURED": ".report.model",
    "Report": ".report.model",
    "Verdict": ".report.model",
    "VERSION": ".version",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, defined_as = _WHERE[name].partition(":")
    value = getattr(importlib.import_module(module, __name__), defined_as or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
