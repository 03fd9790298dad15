"""Where a run's generation goes: the plan and the impact made concrete for the explorer, once
the base worker has listed the catalog.

- `focus`: the operations that touch the change (`Impact.focus` over the catalog); the
  explorer picks among them most often.
- `unit_operations`: for every planned unit, the operations through which a test reaches it;
  `quota` picks the unit whose turn it is by the plan's shares (units no operation of the
  catalog reaches are never picked).
- `operation_targets`: for every operation, the changed lines and branches it can reach (the
  targets of Bloodhound's coverage weights).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..changes.changed_lines import ChangedLines, Target
from ..runtime.catalog import Catalog
from .impact import Impact, UnitKey
from .plan import Plan, ranked
from .quota import UnitQuota


@dataclass
class OperationPlan:
    """The plan over the catalog's operations (see the module docstring)."""

    focus: set[str]
    quota: UnitQuota
    unit_operations: dict[UnitKey, set[str]]
    operation_targets: dict[str, set[Target]]


def plan_operations(plan: Plan, catalog: Catalog, impact: Impact, lines: ChangedLines) -> OperationPlan:
    operations = catalog.operations
    reach = impact.reaching(operations, {(u.module, u.qualname) for u in plan.units})
    reached = [unit for unit in plan.units if reach.get((unit.module, unit.qualname))]
    quota = UnitQuota({(unit.module, unit.qualname): plan.shares[unit] for unit in ranked(reached, None)})
    unit_operations = {(unit.module, unit.qualname): reach[(unit.module, unit.qualname)] for unit in reached}
    targets = _targets_by_operation(impact, lines, catalog)
    return OperationPlan(impact.focus(operations), quota, unit_operations, targets)


def _targets_by_operation(impact: Impact, lines: ChangedLines, catalog: Catalog) -> dict[str, set[Target]]:
    """Each changed line and branch, credited to the operations that reach its innermost unit."""
    units_of: dict[Target, UnitKey] = {}
    for target in lines.targets():
        unit = impact.unit_at(target[1], target[2], target[3])
        if unit is not None:
            units_of[target] = unit
    reach = impact.reaching(catalog.operations, set(units_of.values()))
    found: dict[str, set[Target]] = {}
    for target, unit in units_of.items():
        for op in reach.get(unit, ()):
            found.setdefault(op, set()).add(target)
    return found
