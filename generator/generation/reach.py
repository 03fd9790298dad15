"""Reach: per changed unit, how many of its changed lines the generated calls ran, and why not the rest.

A clean run means little when the changed code never ran: "no difference" must read as "not
tested" there. This stage turns the changed-line coverage into a verdict per unit (a function,
method, class body or module-level code around the changed lines, on the side the report
counts: head, or base for removed lines) with the likeliest reason for what did not run, read
from what is known after exploring: the module did not import, the code runs only at import,
no public operation reaches it, the operations that reach it were never chosen, their receiver
or an argument could never be built, or they ran and never took the changed lines' branch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from ..changes.changed_lines import ChangedLines
from ..changes.units import MODULE
from ..planning.impact import Impact, UnitKey
from ..report.model import UnitReach
from ..runtime.catalog import Catalog
from ..worker.protocol import OperationKind
from .generator import Attempts

ONLY_AT_IMPORT = ("it ran only while its module was imported: no generated sequence was compared on both "
                  "commits, so nothing checked what it does")


def assess_reach(impact: Impact, catalog: Catalog, lines: ChangedLines, attempts: Mapping[str, Attempts],
                 *, compared: bool = True) -> list[UnitReach]:
    """The reach of every changed unit that has executable changed lines, in file and line order.

    `compared`: some sequence was replayed and compared on both commits. Without one, lines that
    ran did so only at import (a table filled at import, a class body), and nothing checked them:
    they count as not run."""
    counts: dict[tuple[str, str, UnitKey], list[int]] = {}  # (side, path, unit) -> [lines, run]
    for side, path, line, run in lines.primary_lines():
        unit = impact.unit_at(side, path, line)
        if unit is not None:
            count = counts.setdefault((side, path, unit), [0, 0])
            count[0] += 1
            count[1] += run
    explain = Reasons(impact, catalog, attempts)
    found = []
    for (side, path, unit), (total, run) in counts.items():
        if not compared and run:
            found.append(UnitReach(f"{unit[0]}:{unit[1]}", path, side, total, 0, ONLY_AT_IMPORT))
        else:
            reason = explain(unit, partly=run > 0) if run < total else ""
            found.append(UnitReach(f"{unit[0]}:{unit[1]}", path, side, total, run, reason))
    return found


class Reasons:
    """The likeliest reason some changed lines of a unit did not run, first match wins."""

    def __init__(self, impact: Impact, catalog: Catalog, attempts: Mapping[str, Attempts]) -> None:
        self.kinds = {(u.module, u.qualname): u.kind for u in impact.changes.units}
        self.catalog, self.attempts, self.impact = catalog, attempts, impact

    def __call__(self, unit: UnitKey, *, partly: bool) -> str:
        module, qualname = unit
        if module in self.impact.changes.added_modules:
            return "its module is new: base has nothing to compare it with"
        for side, errors in (("base", self.catalog.import_errors), ("head", self.catalog.head_import_errors)):
            if module in errors:
                return f"its module does not import on {side}"
        if qualname == MODULE:
            return "module-level code that did not run at import (a branch not taken there)"
        if self.kinds.get(unit) == "class":
            return "class-body code that did not run at import"
        operations = self._reaching(unit)
        if not operations:
            return "no public operation reaches it (nothing the module offers calls it)"
        tried = [self.attempts[op] for op in sorted(operations) if op in self.attempts]
        chosen = sum(a.chosen for a in tried)
        executed = sum(a.executed for a in tried)
        if not chosen:
            return "never called: the time went to other operations"
        if not executed:
            if sum(a.unprepared for a in tried):
                return "building its receiver or arguments always raised before the call"
            return self._never_built(operations, tried)
        if not sum(a.ran + a.raised for a in tried):
            return f"its {executed} call(s) all crashed or timed out"
        if not sum(a.ran for a in tried):
            return f"its {executed} call(s) all raised, never along its changed lines"
        some = "some of its changed lines" if partly else "its changed lines"
        raised = sum(a.raised for a in tried)
        return (f"called {executed} time(s) ({raised} raised), but never along {some}: a branch "
                "those calls did not take")

    def _reaching(self, unit: UnitKey) -> set[str]:
        """The operations of the catalog that are the unit, its methods, or call it by name: those
        through which a call reaches it (the explorer also aims at whole modules, whose other
        operations need not reach it)."""
        callers = self.impact.reached_by.get(unit, {unit})
        return {op.id for op in self.catalog.operations
                if (op.module, op.qualname) in callers
                or (op.module == unit[0] and op.qualname.startswith(unit[1] + "."))}

    def _never_built(self, operations: set[str], tried: list[Attempts]) -> str:
        """Every attempt stopped before running: say what could not be built."""
        receivers = sum(a.no_receiver for a in tried)
        missing = sum((a.no_argument for a in tried), start=Counter())
        if receivers >= sum(missing.values()):
            owners = sorted({op.owner.rsplit(".", 1)[-1] for op in self.catalog.operations
                             if op.id in operations and op.kind == OperationKind.METHOD and op.owner})
            return f"no {' or '.join(owners) or 'receiver'} object to call it on could be built"
        name = missing.most_common(1)[0][0]
        return f"no value could be built for its argument {name!r}"
