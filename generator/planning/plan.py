"""The plan: which units a pull request's testing goes to, and in what shares. Made once, before
anything is imported, by `diff` and by `difforacle risk` alike.

Tier 1 is the units the pull request changes, tier 2 the public units it reaches without
changing them (`Impact.impacted`). A unit that no public operation of its module reaches (a
removed function, a module-level constant read by nothing public) drops out. `defect`
splits the focused generation by Schwa defect probability from the git history of the units'
files, with the pull request folded in (`risk.score_history`), over the two tiers
(`allocation.allocate`: 90 % / 10 %, a minimum per unit); `uniform` gives every unit the same
and reads no history.
The shares are fractions of the focused picks; `seconds` turns them into seconds of a
budget, as `risk` prints them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..changes.checkout import branch_name, checkouts, open_repo, resolve
from ..changes.model import ChangeSet
from ..changes.scope import EVERYTHING, Scope
from ..changes.units import MODULE, compute_changes, parse_spans
from ..report.model import Allocation, UnitShare
from .allocation import allocate, uniform
from .defect_scores import WINDOW, PullRequestInfo, RiskTable, UnitRisk, score_history
from .impact import Impact, analyze_impact

if TYPE_CHECKING:  # GitPython, slow to import, loads in the functions that call it
    import git

ALLOCATIONS = ("defect", "uniform")
_SYMLINK = 0o120000


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


@dataclass(frozen=True)
class HistoryOptions:
    """How the defect scores are read: `window` commits before base, from the cache when it has them."""

    window: int = WINDOW
    title: str = ""  # the pull request's title: one that says "fix" makes its commits fixes
    cache: bool = True
    cache_dir: Path | None = None
    progress: Callable[[int], None] | None = None  # called with the commits read so far


@dataclass
class Plan:
    mode: str  # "defect" or "uniform" (uniform when the history could not be read)
    units: list[PlannedUnit]  # tier by tier, most likely defective first
    shares: dict[PlannedUnit, float]  # of the focused generation, summing to 1
    history: RiskTable | None = None
    notes: list[str] = field(default_factory=list)

    def risk(self, unit: PlannedUnit) -> UnitRisk:
        return self.history.get(unit.key) if self.history is not None else UnitRisk()

    @property
    def history_seconds(self) -> float:
        return self.history.seconds if self.history is not None else 0.0

    def seconds(self, budget: float) -> dict[PlannedUnit, float]:
        """Each unit's seconds of `budget` less the history's time, summing exactly to that."""
        table = self.history if self.mode == "defect" else None
        return split_budget(max(0.0, budget - self.history_seconds), self.units, table, self.mode)

    def allocation(self) -> Allocation:
        """The plan as the report shows it (probabilities only when they decide the shares)."""
        return Allocation(self.mode, [
            UnitShare(unit.target, unit.tier, self.risk(unit).probability if self.mode == "defect" else 0.0,
                      self.shares[unit]) for unit in self.units])


@dataclass
class PlannedChange:
    """A plan with the commits it is for, and the changed files it could not plan for."""

    plan: Plan
    base: str
    head: str | None
    skipped: tuple[str, ...] = ()


def plan_change(repo: git.Repo, base_sha: str, head_sha: str, head_ref: str, changes: ChangeSet,
                impact: Impact, mode: str, history: HistoryOptions, scope: Scope = EVERYTHING) -> Plan:
    """The plan `diff` follows. `defect` reads the history (a failure to read it is a note, and
    the split uniform); `uniform` reads none."""
    import git

    if mode not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {ALLOCATIONS}, not {mode!r}")
    table, notes = None, []
    if mode == "defect":
        try:
            table = defect_scores(repo, base_sha, head_sha, head_ref, history,
                                  pull_request_units(changes, impact))
        except (git.GitCommandError, ValueError, OSError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            notes.append(f"Defect scores could not be computed from the git history ({first}); "
                         "the budget is split uniformly.")
    return make_plan(changes, impact, mode if table is not None else "uniform", table, scope, notes=notes)


def plan_pull_request(repo_path: str | Path, base_ref: str, head_ref: str, mode: str, history: HistoryOptions,
                      scope: Scope = EVERYTHING) -> PlannedChange:
    """The plan `diff` with the same options follows, with the scores read whatever the mode
    (`risk` shows them)."""
    repo = open_repo(repo_path)
    base_sha, head_sha = resolve(repo, base_ref), resolve(repo, head_ref)
    with checkouts(repo, base_sha, head_sha) as (base, head):
        changes = scope.restrict(compute_changes(repo, base_sha, head_sha, base, head))
        impact = analyze_impact(changes, base, head)
    table = defect_scores(repo, base_sha, head_sha, head_ref, history, pull_request_units(changes, impact))
    plan = make_plan(changes, impact, mode, table, scope, rank_by_scores=True)
    return PlannedChange(plan, base_sha, head_sha, changes.skipped)


def plan_repository(repo_path: str | Path, base_ref: str, mode: str,
                    history: HistoryOptions) -> PlannedChange:
    """Every unit of every Python file at base, as one tier, ranked by defect score (`risk` without
    a head): where bugs are likely to live, whatever the next pull request changes."""
    repo = open_repo(repo_path)
    base_sha = resolve(repo, base_ref)
    units = [PlannedUnit(1, path, qualname, "") for path, qualname in _units_at(repo, base_sha)]
    table = score_history(repo, base_sha, window=history.window, cache=history.cache,
                          cache_dir=history.cache_dir)
    plan = Plan(mode, ranked(units, table), split_budget(1.0, units, table, mode), table)
    return PlannedChange(plan, base_sha, None)


def defect_scores(repo: git.Repo, base_sha: str, head_sha: str, head_ref: str, history: HistoryOptions,
                  units: Iterable[PlannedUnit]) -> RiskTable:
    """The Schwa table of the units' files, from the history before base with the pull request folded
    in: only those files' history is read (and that of the files renamed into them), so its cost
    follows the pull request, not the repository."""
    pr = PullRequestInfo(head_sha, title=history.title, branch=branch_name(repo, head_ref))
    return score_history(repo, base_sha, window=history.window, pr=pr, cache=history.cache,
                         cache_dir=history.cache_dir, paths={unit.path for unit in units},
                         progress=history.progress)


def make_plan(changes: ChangeSet, impact: Impact, mode: str, table: RiskTable | None,
              scope: Scope = EVERYTHING, *, rank_by_scores: bool = False,
              notes: list[str] | None = None) -> Plan:
    """Tiers and shares of the units some public operation reaches (none the scope ignores). The
    units are ranked by score when the scores decide the shares (or `rank_by_scores`), else by
    tier and name."""
    units = [unit for unit in reachable_units(changes, impact) if not scope.ignores(unit.target)]
    shares = split_budget(1.0, units, table, mode) if units else {}
    order = ranked(units, table if mode == "defect" or rank_by_scores else None)
    return Plan(mode, order, shares, table, notes or [])


def pull_request_units(changes: ChangeSet, impact: Impact) -> list[PlannedUnit]:
    """Tier 1 (changed units, in diff order), then tier 2 (impacted ones, sorted); no unit twice."""
    tier1 = {(u.path, u.qualname): PlannedUnit(1, u.path, u.qualname, u.module) for u in changes.units}
    paths = {change.module: change.head_path or change.base_path for change in changes.files if change.module}
    tier2 = sorted({PlannedUnit(2, paths[module], qualname, module) for module, qualname in impact.impacted
                    if paths.get(module)} - set(tier1.values()))
    return [*tier1.values(), *(unit for unit in tier2 if unit.key not in tier1)]


def reachable_units(changes: ChangeSet, impact: Impact) -> list[PlannedUnit]:
    """The units of importable modules that some public operation of the source reaches."""
    units = [u for u in pull_request_units(changes, impact) if u.module]
    reach = impact.reaching(impact.definitions, {(u.module, u.qualname) for u in units})
    return [u for u in units if reach.get((u.module, u.qualname))]


def split_budget(budget: float, units: list[PlannedUnit], table: RiskTable | None,
                 allocation: str) -> dict[PlannedUnit, float]:
    """Seconds (or shares of 1) per unit, summing exactly to `budget`; `table` may be None for `uniform`."""
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


def _units_at(repo: git.Repo, sha: str) -> list[tuple[str, str]]:
    """Every unit of every Python file of the commit: `<module>` for each file, then its definitions."""
    units: list[tuple[str, str]] = []
    for item in repo.commit(sha).tree.traverse():
        if item.type != "blob" or item.mode == _SYMLINK or not item.path.endswith(".py"):
            continue
        spans = parse_spans(item.data_stream.read()) or ()
        qualnames = dict.fromkeys([MODULE, *(span.qualname for span in spans)])
        units.extend((item.path, qualname) for qualname in qualnames)
    return units
