"""The difforacle engine: (repository, base, head, budget) -> Report. No network, no GitHub.

This module is the engine's whole surface for its front ends (`difforacle.bot`): running it,
planning a run without running it, and the report's outside forms. Nothing else of the
engine is imported from outside it (tests/test_architecture.py checks that).
"""

from .allocation import TIER1_SHARE
from .compare import EXACT_ENOUGH, FloatPolicy
from .components import NAMES as COMPONENTS
from .components import OFF_BY_DEFAULT, Components
from .demo import DEMO_DESCRIPTION, build_demo_repo
from .engine import analyze
from .model import NOT_MEASURED, InternalError, Report, SetupError
from .options import READING_HISTORY, Options, Progress
from .plan import ALLOCATIONS, HistoryOptions, PlannedChange, plan_pull_request, plan_repository
from .report import (
    checked_lines,
    compress_lines,
    fenced,
    inline_code,
    inline_value,
    longest_backtick_run,
    render_markdown,
    report_to_json,
    schema_validator,
    unreached_markdown,
    validate_report,
    verdict,
    write_atomic,
    write_json,
    write_markdown,
    write_tests,
)
from .risk import WINDOW, RiskTable, UnitRisk
from .scope import EVERYTHING, Scope
from .workspace import open_repo

__all__ = [
    "ALLOCATIONS", "COMPONENTS", "DEMO_DESCRIPTION", "EVERYTHING", "EXACT_ENOUGH", "NOT_MEASURED",
    "OFF_BY_DEFAULT", "READING_HISTORY", "TIER1_SHARE", "WINDOW",
    "Components", "FloatPolicy", "HistoryOptions", "InternalError", "Options", "PlannedChange", "Progress",
    "Report",
    "RiskTable", "Scope", "SetupError", "UnitRisk", "analyze", "build_demo_repo", "checked_lines",
    "compress_lines", "fenced",
    "inline_code", "inline_value", "longest_backtick_run", "open_repo", "plan_pull_request",
    "plan_repository", "render_markdown", "report_to_json", "schema_validator", "unreached_markdown",
    "validate_report", "verdict",
    "write_atomic", "write_json", "write_markdown", "write_tests",
]
