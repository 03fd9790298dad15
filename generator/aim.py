"""Where a run's generation goes: the budget plan made concrete for the explorer.

The plan (`budget_plan`) names units and shares; the explorer picks operations. This
module joins the two: for every unit, the operations through which a test reaches it
(`catalog.operations_reaching`); for every operation, the changed lines and branches it
can reach (the targets of Bloodhound's coverage weights). Units no operation reaches
(a removed function, a module-level constant read by nothing public) drop out and their
share goes to the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

from .budget_plan import PlannedUnit, pull_request_units, ranked, split_budget
from .catalog import Catalog, operations_reaching
from .changed_lines import ChangedLines, Target
from .changes import MODULE, Span, parse_spans
from .guidance import UnitQuota
from .model import Allocation, ChangeSet, Checkout, UnitShare
from .risk import PullRequestInfo, RiskTable, score_history
from .workspace import branch_name

UnitKey = tuple[str, str]  # (module, qualname)


@dataclass
class Aim:
    quota: UnitQuota
    unit_operations: dict[UnitKey, set[str]]
    operation_targets: dict[str, set[Target]]
    allocation: Allocation


def defect_scores(repo: git.Repo, base_sha: str, head_sha: str, head_ref: str, *, window: int,
                  title: str = "") -> tuple[RiskTable | None, str | None]:
    """The Schwa table with the PR folded in, or None and why not (then the split is uniform)."""
    pr = PullRequestInfo(head_sha, title=title, branch=branch_name(repo, head_ref))
    try:
        return score_history(repo, base_sha, window=window, pr=pr), None
    except (git.GitCommandError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return None, (f"Defect scores could not be computed from the git history ({first}); "
                      "the budget is split uniformly.")


def plan_aim(catalog: Catalog, changes: ChangeSet, sources: dict[str, str], base: Checkout, head: Checkout,
             lines: ChangedLines, table: RiskTable | None, mode: str) -> Aim:
    units = [u for u in pull_request_units(changes, sources) if u.module]
    reach = operations_reaching(catalog, changes, sources, {(u.module, u.qualname) for u in units})
    reachable = [u for u in units if reach.get((u.module, u.qualname))]
    shares = split_budget(1.0, reachable, table, mode) if reachable else {}
    allocation = Allocation(mode, [
        UnitShare(unit.target, unit.tier, _probability(unit, table, mode), shares[unit])
        for unit in ranked(reachable, table if mode == "defect" else None)])
    unit_operations = {(u.module, u.qualname): reach[(u.module, u.qualname)] for u in reachable}
    quota = UnitQuota({(u.module, u.qualname): shares[u] for u in ranked(reachable, None)})
    targets = _targets_by_operation(changes, base, head, lines, catalog, sources)
    return Aim(quota, unit_operations, targets, allocation)


def _probability(unit: PlannedUnit, table: RiskTable | None, mode: str) -> float:
    return table.get(unit.key).probability if table is not None and mode == "defect" else 0.0


def _targets_by_operation(changes: ChangeSet, base: Checkout, head: Checkout, lines: ChangedLines,
                          catalog: Catalog, sources: dict[str, str]) -> dict[str, set[Target]]:
    """Each changed line and branch, credited to the operations that reach its innermost unit."""
    modules: dict[tuple[str, str], str] = {}  # (side, path) -> module
    for change in changes.files:
        if change.module:
            for side, path in (("base", change.base_path), ("head", change.head_path)):
                if path:
                    modules[(side, path)] = change.module
    spans: dict[tuple[str, str], tuple[Span, ...]] = {}
    units_of: dict[Target, UnitKey] = {}
    for target in lines.targets():
        side, path, line = target[1], target[2], target[3]
        if (side, path) not in spans:
            root = base.root if side == "base" else head.root
            spans[(side, path)] = _spans(root / path)
        module = modules.get((side, path))
        if module is not None:
            units_of[target] = (module, _innermost(spans[(side, path)], line))
    reach = operations_reaching(catalog, changes, sources, set(units_of.values()))
    found: dict[str, set[Target]] = {}
    for target, unit in units_of.items():
        for op in reach.get(unit, ()):
            found.setdefault(op, set()).add(target)
    return found


def _spans(path: Path) -> tuple[Span, ...]:
    try:
        return parse_spans(path.read_bytes()) or ()
    except OSError:
        return ()


def _innermost(spans: tuple[Span, ...], line: int) -> str:
    containing = [span for span in spans if line in span and span.qualname != MODULE]
    if not containing:
        return MODULE
    return min(containing, key=lambda span: span.end - span.start).qualname
