"""The difforacle engine: (repository, base, head, budget) -> Report. No network, no GitHub.

This module is the engine's whole surface for its front ends (`difforacle.bot`): running it,
planning a run without running it, and the report's data, JSON form and files. Presenting the
report to people (its Markdown) is the front ends' job. Nothing else of the engine is imported
from outside it (tests/test_architecture.py checks that).
"""

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

__all__ = [
    "ALLOCATIONS", "COMPONENTS", "COUNTED", "DEMO_DESCRIPTION", "EVERYTHING", "EXACT_ENOUGH", "EXPLAINED",
    "NOT_MEASURED", "OFF_BY_DEFAULT", "READING_HISTORY", "TIER1_SHARE", "WINDOW",
    "Components", "FloatPolicy", "HistoryOptions", "InternalError", "Options", "PlannedChange", "Progress",
    "Report", "RiskTable", "Scope", "SetupError", "UnitRisk", "Verdict",
    "analyze", "build_demo_repo", "open_repo", "plan_pull_request", "plan_repository", "report_to_json",
    "schema_validator", "validate_report", "write_atomic", "write_json", "write_tests",
]
