"""Which units a pull request's testing budget goes to, and in what shares.

Tier 1 is the units the PR changes, tier 2 the units it reaches without changing them
(`catalog.impacted_units`). `defect` splits the budget by Schwa defect probability over
the two tiers (`allocation.allocate`: 90 % / 10 %, a minimum per unit); `uniform` gives
every unit the same. `difforacle risk` prints this plan; `difforacle diff` follows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .allocation import allocate, uniform
from .catalog import impacted_units
from .model import ChangeSet
from .risk import RiskTable

ALLOCATIONS = ("defect", "uniform")


@dataclass(frozen=True, order=True)
class PlannedUnit:
    tier: int
    path: str  # repository-relative
    qualname: str
    module: str  # dotted; "" for a file that is not an importable module

    @property
    def key(self) -> tuple[str, str]:
        """The risk table's key."""
        return (self.path, self.qualname)

    @property
    def target(self) -> str:
        return f"{self.module}:{self.qualname}"


def pull_request_units(changes: ChangeSet, sources: dict[str, str]) -> list[PlannedUnit]:
    """Tier 1 (changed units, in diff order), then tier 2 (impacted ones, sorted); no unit twice."""
    tier1 = {(u.path, u.qualname): PlannedUnit(1, u.path, u.qualname, u.module) for u in changes.units}
    paths = {change.module: change.head_path or change.base_path for change in changes.files if change.module}
    tier2 = sorted({PlannedUnit(2, paths[module], qualname, module) for module, qualname in
                    impacted_units(changes, sources) if paths.get(module)} - set(tier1.values()))
    return [*tier1.values(), *(unit for unit in tier2 if unit.key not in tier1)]


def split_budget(budget: float, units: list[PlannedUnit], table: RiskTable | None,
                 allocation: str) -> dict[PlannedUnit, float]:
    """Seconds per unit, summing exactly to `budget`; `table` may be None for `uniform`."""
    if allocation not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, not {allocation!r}")
    if allocation == "uniform" or table is None:
        return uniform(budget, units)
    tiers = [[(unit, table.get(unit.key).probability) for unit in units if unit.tier == tier]
             for tier in (1, 2)]
    return allocate(budget, *tiers)


def ranked(units: list[PlannedUnit], table: RiskTable | None) -> list[PlannedUnit]:
    """Tier by tier, most likely defective first; ties by path and name (reproducible)."""
    def score(unit: PlannedUnit) -> float:
        return table.get(unit.key).score if table is not None else 0.0

    return sorted(units, key=lambda unit: (unit.tier, -score(unit), unit.key))
