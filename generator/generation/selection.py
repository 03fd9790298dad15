"""Which operation the next candidate calls.

Three tiers: the *focus* (operations that touch the change and reach a planned unit), the
*related* ones (their classes' other operations, which build the states the changed code
sees, and focus operations that reach no planned unit), and every other *builder*; picked
50 %, 30 % and 20 % of the time. Within the focus, the budget plan's quota names the unit
whose turn it is (stride scheduling over the plan's shares) and only its operations
compete; within a tier, GRT's Bloodhound weighs operations by the changed lines and branches
they can still cover (`bloodhound`). An operation that hangs or kills its process a few times
is dropped: each such sequence costs a whole timeout, and Randoop treats them as illegal.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Mapping

from ..planning.quota import UnitQuota
from ..runtime.catalog import Catalog, Operation
from ..worker.protocol import OperationKind
from .bloodhound import Bloodhound

TIER_SHARES = (0.5, 0.3, 0.2)  # focus, related (same class hierarchy), other builders
MAX_TIMEOUTS = 2


class OperationSelector:
    def __init__(self, catalog: Catalog, focus: set[str], rng: random.Random, *, bloodhound: bool = True,
                 quota: UnitQuota | None = None, unit_operations: Mapping[Hashable, set[str]] | None = None,
                 uncovered: Callable[[], Mapping[str, float]] | None = None) -> None:
        """`quota` shares the focus picks over planned units, `unit_operations` says which operations
        reach each unit, and `uncovered()` gives, per operation, the fraction of its changed lines
        and branches not yet covered (Bloodhound's weights)."""
        self.rng = rng
        self.weighted = bloodhound
        self.operations = [op for op in catalog.operations if op.kind != OperationKind.CONSTRUCTOR or
                           not catalog.classes.get(op.owner or "", {}).get("abstract")]
        self.by_id = {op.id: op for op in self.operations}
        related = _related_types(catalog, focus)
        others = [op for op in self.operations if op.id not in focus]
        self.focus = [op for op in self.operations if op.id in focus]
        self.related = [op for op in others if op.owner in related]
        self.builders = [op for op in others if op.owner not in related]
        self.bloodhound = Bloodhound(len(self.operations))
        self._uncovered: Callable[[], Mapping[str, float]] = uncovered or dict
        self._quota: UnitQuota | None = None
        self._unit_operations: dict = {}
        self._units_of: dict[str, list] = {}  # operation -> the units it reaches
        self._timeouts: dict[str, int] = {}
        if uncovered is not None:
            self.bloodhound.refresh(uncovered())
        if quota:
            self._aim(quota, unit_operations or {})

    def _aim(self, quota: UnitQuota, unit_operations: Mapping[Hashable, set[str]]) -> None:
        """A focus operation that reaches no planned unit (the constructor of a class whose methods
        changed) becomes a related one: it builds states but takes no unit's share."""
        self._quota, self._unit_operations = quota, dict(unit_operations)
        for unit, op_ids in self._unit_operations.items():
            for op_id in op_ids:
                self._units_of.setdefault(op_id, []).append(unit)
        aimed = set().union(*self._unit_operations.values())
        self.related = [op for op in self.focus if op.id not in aimed] + self.related
        self.focus = [op for op in self.focus if op.id in aimed]

    def choose(self) -> Operation | None:
        """Focus operations most often, then their classes' other operations, then everything else."""
        tiers = [(share, tier) for share, tier in zip(TIER_SHARES, (self.focus, self.related, self.builders),
                                                      strict=True) if tier]
        if not tiers:
            return None
        roll = self.rng.random() * sum(share for share, _ in tiers)
        chosen = tiers[-1][1]
        for share, tier in tiers:
            roll -= share
            if roll < 0:
                chosen = tier
                break
        if chosen is self.focus and self._quota is not None:
            chosen = self._aimed_operations() or chosen
        if not self.weighted:
            return self.rng.choice(chosen)
        return self.by_id[self.bloodhound.choose([op.id for op in chosen], self.rng)]

    def _aimed_operations(self) -> list[Operation]:
        """The focus operations that reach the unit whose turn it is (by the budget quota)."""
        assert self._quota is not None
        alive = {op.id for op in self.focus}
        unit = self._quota.next({u for u, ops in self._unit_operations.items() if ops & alive})
        if unit is None:
            return []
        return [op for op in self.focus if op.id in self._unit_operations[unit]]

    # ------------------------------------------------------------ feedback

    def lost(self, op_id: str) -> None:
        """A sequence hung or crashed in `op_id`: drop it after the first time when it takes no
        argument (it will do it again), else after MAX_TIMEOUTS times."""
        self._timeouts[op_id] = self._timeouts.get(op_id, 0) + 1
        op = self.by_id.get(op_id)
        if self._timeouts[op_id] == (1 if op is not None and not op.params else MAX_TIMEOUTS):
            tiers = (self.focus, self.related, self.builders)
            self.focus, self.related, self.builders = ([op for op in t if op.id != op_id] for t in tiers)

    def took(self, op_id: str, milliseconds: float) -> None:
        """What a sequence ending in `op_id` took: charged to the units it reaches."""
        if self._quota is not None:
            for unit in self._units_of.get(op_id, ()):
                self._quota.observe(unit, milliseconds)

    def succeeded(self, op_id: str) -> None:
        """A sequence ending in `op_id` was kept; Bloodhound's weights are refreshed now and then."""
        if self.bloodhound.success(op_id):
            self.bloodhound.refresh(self._uncovered())


def _related_types(catalog: Catalog, focus: set[str]) -> set[str]:
    """Classes in the same hierarchy as the classes that own focus operations."""
    owners = {op.owner for op in catalog.operations if op.id in focus and op.owner}
    related = set(owners)
    for type_name, info in catalog.classes.items():
        mro = set(info.get("mro", ()))
        if mro & owners:
            related.add(type_name)
    for owner in owners:
        related.update(t for t in catalog.classes.get(owner, {}).get("mro", ()) if t in catalog.classes)
    return related
