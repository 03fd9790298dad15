"""`difforacle risk`: a pull request's units ranked by defect score, with their share of a budget.

With a head, this is the plan `diff` with the same options follows (the engine's `planning.plan`): tier 1
the units the PR changes (`merge-base..head`), tier 2 the public units it reaches without
changing them, each unit that some public operation reaches, with its share. Without a head,
every unit of every Python file at base is ranked, as one tier. Scores come from the history
before base with the PR folded in; the budget, less the time the history took, is split by
the plan's shares. Nothing is imported or run.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from difforacle.generator import (
    ALLOCATIONS,
    EVERYTHING,
    TIER1_SHARE,
    WINDOW,
    HistoryOptions,
    RiskTable,
    Scope,
    UnitRisk,
    plan_pull_request,
    plan_repository,
    schema_validator,
    write_atomic,
)

from .config import Config, scope_of

SCHEMA_ID = "difforacle.risk/1"
SCHEMA_FILE = "risk-1.json"


@dataclass(frozen=True)
class RankedUnit:
    """One row: a unit, its tier, its risk, its share of the plan and its seconds of the budget."""

    path: str
    qualname: str
    tier: int
    risk: UnitRisk
    seconds: float
    share: float

    @property
    def unit(self) -> str:
        return f"{self.path}:{self.qualname}"


@dataclass
class Assessment:
    """What `difforacle risk` prints: the ranked units and the figures behind them."""

    base: str
    head: str | None
    history: RiskTable
    allocation: str
    budget: float
    allocated: float
    units: list[RankedUnit]
    notes: list[str] = field(default_factory=list)


def run(args: argparse.Namespace, config: Config) -> int:
    """The `risk` subcommand, with the project's settings (`config`: budget, allocation and scope)
    resolved (errors are `SetupError`s, reported by `bot.cli.main`)."""
    assessment = assess(Path(args.repo), args.base, args.head, budget=config.budget, window=args.window,
                        allocation=config.allocation, cache=not args.no_cache, scope=scope_of(config))
    if args.json:
        write_json(assessment, args.json)
    print(render(assessment), end="")
    return 0


def assess(repo_path: str | Path, base_ref: str, head_ref: str | None = None, *, budget: float = 60.0,
           window: int = WINDOW, allocation: str = "defect", cache: bool = True,
           cache_dir: Path | None = None, scope: Scope = EVERYTHING) -> Assessment:
    """Rank the PR's units (or, with no head, every unit at base) and split the budget over them."""
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, not {allocation!r}")
    history = HistoryOptions(window=window, cache=cache, cache_dir=cache_dir)
    if head_ref is None:
        planned = plan_repository(repo_path, base_ref, allocation, history)
    else:
        planned = plan_pull_request(repo_path, base_ref, head_ref, allocation, history, scope)
    plan = planned.plan
    assert plan.history is not None  # `risk` always reads the history
    seconds = plan.seconds(budget)
    rows = [RankedUnit(unit.path, unit.qualname, unit.tier, plan.risk(unit), seconds[unit], plan.shares[unit])
            for unit in plan.units]
    allocated = max(0.0, budget - plan.history_seconds)
    return Assessment(planned.base, planned.head, plan.history, allocation, budget, allocated, rows,
                      list(planned.skipped))


# ---------------------------------------------------------------- outputs


def to_json(assessment: Assessment) -> dict:
    """The `difforacle.risk/1` document (seconds unrounded, so the shares add up to `allocated`)."""
    history = assessment.history
    return {
        "schema": SCHEMA_ID,
        "base": assessment.base,
        "head": assessment.head,
        "history": {"commits_read": history.commits_read, "commits_cached": history.commits_cached,
                    "window_commits": history.window_commits, "pr_commits": history.pr_commits,
                    "seconds": history.seconds},
        "allocation": assessment.allocation,
        "budget": assessment.budget,
        "allocated": assessment.allocated,
        "units": [
            {"unit": row.unit, "path": row.path, "qualname": row.qualname, "tier": row.tier,
             "revisions": row.risk.revisions, "fixes": row.risk.fixes, "new_authors": row.risk.new_authors,
             "score": row.risk.score, "probability": row.risk.probability, "share": row.share,
             "seconds": row.seconds}
            for row in assessment.units
        ],
        "notes": list(assessment.notes),
    }


def validate(data: dict) -> None:
    """Raise `jsonschema.ValidationError` unless `data` is a valid `difforacle.risk/1` document."""
    schema_validator(SCHEMA_FILE).validate(data)


def write_json(assessment: Assessment, path: str | os.PathLike[str]) -> None:
    """Validate, then write atomically."""
    data = to_json(assessment)
    validate(data)
    write_atomic(Path(path), json.dumps(data, indent=2, ensure_ascii=False) + "\n")


_COLUMNS = ("rank", "tier", "unit", "revisions", "fixes", "new authors", "score", "probability", "seconds")


def render(assessment: Assessment) -> str:
    """Header lines, then the units as an aligned table (text left, numbers right)."""
    history, budget = assessment.history, assessment.budget
    if assessment.head is None:
        scope = f"{len(assessment.units)} units of the Python files at base {assessment.base[:12]}"
    else:
        changed = sum(row.tier == 1 for row in assessment.units)
        scope = (f"{changed} changed and {len(assessment.units) - changed} impacted units of "
                 f"{assessment.base[:12]}..{assessment.head[:12]}")
    if assessment.allocation == "uniform":
        split = "equal shares"
    elif any(row.tier == 2 for row in assessment.units) and any(row.tier == 1 for row in assessment.units):
        split = f"by defect probability, {TIER1_SHARE:.0%} to tier 1 and {1 - TIER1_SHARE:.0%} to tier 2"
    else:
        split = "by defect probability"
    lines = [
        f"difforacle risk: {scope}",
        f"history: {_commits(history.window_commits)} before base"
        + (f", {_commits(history.pr_commits)} in the pull request" if assessment.head else "")
        + f"; {history.commits_read} read from git, {history.commits_cached} from the cache, "
        f"{_seconds(history.seconds)} s",
        f"budget {_seconds(budget)} s, history {_seconds(history.seconds)} s, "
        f"{_seconds(assessment.allocated)} s allocated ({assessment.allocation}: {split})",
        "",
    ]
    rows = [
        (str(rank), str(row.tier), row.unit, str(row.risk.revisions), str(row.risk.fixes),
         str(row.risk.new_authors), f"{row.risk.score:.3f}", f"{row.risk.probability:.3f}",
         f"{row.seconds:.2f}")
        for rank, row in enumerate(assessment.units, start=1)
    ]
    if rows:
        widths = [max(len(cells[i]) for cells in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
        for cells in [_COLUMNS, *rows]:
            aligned = [cell.ljust(width) if i == 2 else cell.rjust(width)
                       for i, (cell, width) in enumerate(zip(cells, widths, strict=True))]
            lines.append("  ".join(aligned).rstrip())
    else:
        lines.append("no Python unit to rank")
    lines.extend(f"skipped {note}" for note in assessment.notes)
    return "\n".join(lines) + "\n"


def _seconds(value: float) -> str:
    """60 -> '60', 1.234 -> '1.23', 0.5 -> '0.5', 0.001 -> '0.001'."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.2g}" if text == "0" and value > 0 else text


def _commits(count: int) -> str:
    return f"{count} commit" if count == 1 else f"{count} commits"
