"""Randoop's feedback-directed generation, on the host side of the worker boundary.

Sequences are built bottom-up: pick an operation (`selection`), fill its receiver and
arguments from pools of earlier sequences whose values have the right runtime type, from
literals, or by building the object on demand (`call_builder`, `pools`), and append the call,
sometimes several times in a row (Randoop's repetition; half the time the very same call).
Duplicates are discarded before execution. After execution, the generator learns from each
result (`type_learning`): sequences that ended normally and whose states are new extend the
pools; sequences that raised are never extended (but are still kept as regression tests by the
engine). The techniques that take part in this loop (returned callables, influence search,
field-coverage novelty, the path memo) are plugins, called through their hooks (`plugin`) in the
order of the technique table.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..planning.operation_plan import OperationPlan
from ..runtime.catalog import Catalog
from ..runtime.sequence import CallSequence, origin, plain_operation, sequence_key
from ..worker.protocol import OperationKind, SequenceResult, Status, digest_key
from ..worker.resolve import volume_id, volume_target
from ..worker.volume import SIZES, varies
from .call_builder import MAX_LENGTH, CallBuilder
from .plugin import Plugin, PluginContext, Proposal
from .pools import PoolEntry, Pools, SequenceBuilder
from .search.influence import InfluenceMap
from .search.path_memo import PathEdges
from .search.solver import SolverInput
from .selection import OperationSelector
from .techniques import DEFAULTS, Switches
from .type_learning import TypeLearning
from .values.primitives import ValueGenerator

REPEAT_RATIO = 0.05
VOLUME_RATIO = 0.1  # of calls of an operation that keeps state: made many times in a row (volume)
MAX_REPEAT = 6
# of repetitions: the very same call again (setting an item already set, adding a key already
# there: what code re-handling an existing entry gets wrong), not a new call of the operation
SAME_CALL_RATIO = 0.5
P = TypeVar("P", bound=Plugin)


@dataclass
class Attempts:
    """What became of the attempts to call one operation: why code it reaches ran or did not."""

    chosen: int = 0
    no_receiver: int = 0  # no object to call the method on could be found or built
    no_argument: Counter[str] = field(default_factory=Counter)  # parameter -> nothing could be built for it
    unprepared: int = 0  # executed sequences ending in this call that raised before reaching it
    ran: int = 0  # ... that ran it and ended normally
    raised: int = 0  # ... that ran it and raised
    lost: int = 0  # ... that crashed, hung, or were skipped by the worker

    @property
    def executed(self) -> int:
        return self.ran + self.raised + self.lost


class SequenceGenerator:
    """Proposes new candidate sequences and learns from their execution results."""

    def __init__(self, catalog: Catalog, values: ValueGenerator, rng: random.Random, focus: set[str], *,
                 switches: Switches = DEFAULTS, plan: OperationPlan | None = None,
                 uncovered: Callable[[], Mapping[str, float]] | None = None, timed: bool = True,
                 influence: InfluenceMap | None = None) -> None:
        """`focus`: the ids of the operations that touch the change. `plan` shares the focus over the
        plan's units; `uncovered()` gives, per operation, the fraction of its changed lines and
        branches not yet covered. `timed`: orienteering and the quota may weigh entries and units by
        measured time (not in reproducible runs). `influence`: the static influence between
        operations, for Candidate Sequence Search (when that component is on)."""
        self.switches, self.timed, self.rng = switches, timed, rng
        self.pools = Pools(rng=random.Random(rng.random()), by_mro=switches.elephant,
                           orienteering=switches.orienteering)
        self.selector = OperationSelector(
            catalog, focus, rng, bloodhound=switches.bloodhound, uncovered=uncovered,
            quota=plan.quota if plan is not None else None,
            unit_operations=plan.unit_operations if plan is not None else None)
        self.learning = TypeLearning(self.selector.by_id, values.can_make)
        self.builder = CallBuilder(catalog, self.selector.operations, values, rng, self.pools, self.learning,
                                   switches)
        context = PluginContext(rng, self.builder, self.selector.operations,
                                frozenset(op.id for op in self.selector.focus), switches, influence,
                                self._cost, self._revisit, self._is_seed)
        self.plugins = switches.plugins(context)
        # without a plugin that judges novelty, a state equal to a pooled one is redundant
        self._by_state = not any(plugin.judges_novelty for plugin in self.plugins)
        self._traced = any(plugin.traces for plugin in self.plugins)
        # id of a proposed candidate's statements -> its plugin and the proposal
        self._proposed: dict[int, tuple[Plugin, Proposal]] = {}
        # id of a proposed sequence that entered changed code -> it (alive until replayed), its plugin
        # and the proposal: a plugin may ask to run it again once its path is measured
        self._replaying: dict[int, tuple[CallSequence, Plugin, Proposal]] = {}
        self.seen: set[str] = set()
        self.duplicates = 0
        self.attempts: dict[str, Attempts] = {}  # operation id -> what became of its calls
        # operation id -> the fewest calls of a volume call of it that hung: no more are made
        self.volume_limits: dict[str, int] = {}
        self.failed: list[str] = []  # the techniques switched off after their plugin raised, and why

    def candidates(self, count: int, attempts: int = 20) -> Iterator[CallSequence]:
        """Up to `count` new, distinct sequences."""
        made = 0
        for _ in range(count * attempts):
            if made == count:
                return
            statements = self._candidate()
            if statements is None:
                continue
            key = sequence_key(statements)
            if key in self.seen:
                self.duplicates += 1
                self._proposed.pop(id(statements), None)
                continue
            self.seen.add(key)
            made += 1
            yield statements

    def calls_with(self, inputs: list[SolverInput]) -> list[CallSequence]:
        """A sequence calling each input's operation with its literal arguments (a method on a
        receiver from the pools or built on demand); inputs whose receiver cannot be had are left out."""
        made = []
        for found in inputs:
            op = self.builder.by_id.get(found.op_id)
            if op is None:
                continue
            builder = SequenceBuilder()
            args = [{"lit": lit} for lit in found.args]
            if op.kind == OperationKind.METHOD:
                entry = self.builder.object_of(op.owner or "")
                if entry is None:
                    continue
                args.insert(0, builder.include(entry))
            builder.statements.append({"op": op.id, "args": args,
                                       "kwargs": {name: {"lit": lit} for name, lit in found.kwargs}})
            made.append(builder.statements)
        return made

    def requests(self, batch: list[CallSequence]) -> list[dict | None] | None:
        """Per sequence of `batch`, what the worker records while running it (the dynamic influence
        check's reads and writes of a proposal); None when no plugin traces its proposals."""
        if not self._traced:
            return None
        return [proposed[1].request if (proposed := self._proposed.get(id(s))) is not None else None
                for s in batch]

    def feedback(self, statements: CallSequence, result: SequenceResult) -> None:
        """Learn from a result; pool the values of a normally-ended sequence whose states are new."""
        if not statements:
            return
        proposed = self._proposed.pop(id(statements), None)
        if proposed is not None:
            plugin, proposal = proposed
            self._guarded(plugin, "proposal_ran", proposal, result)
            if result.hit and result.status in (Status.OK, Status.EXCEPTION):  # its replay measures its path
                self._replaying[id(statements)] = (statements, plugin, proposal)
        self._each("learn", statements, result)
        last_op = origin(statements, len(statements) - 1)  # a returned callable's call: its origin's
        attempts = self._attempts(last_op)
        attempts.ran += result.status == Status.OK
        if result.status == Status.EXCEPTION:
            first_call = next(i for i, statement in enumerate(statements)
                              if plain_operation(statement["op"]) == last_op)
            if result.executed < first_call:
                attempts.unprepared += 1  # building its receiver or an argument raised
            else:
                attempts.raised += 1
        if result.status in (Status.TIMEOUT, Status.CRASH, Status.SKIPPED):
            attempts.lost += 1
            stopped_at = statements[min(result.executed, len(statements) - 1)]["op"]
            repeated = volume_target(stopped_at)
            if repeated is not None:
                inner, count = repeated
                self.volume_limits[inner] = min(count, self.volume_limits.get(inner, count))
            self.selector.lost(result.skipped_operation or stopped_at)
        if self.timed and result.milliseconds is not None:
            self.selector.took(last_op, float(result.milliseconds))
        if result.status == Status.EXCEPTION:
            self.learning.from_exception(statements, result)
        if result.status != Status.OK:
            return
        self.selector.succeeded(last_op)
        self.learning.from_success(statements, result.types)
        if not all(admitted for _, admitted in self._calls("admit", statements, result)):
            return  # redundant (no new field-coverage triple): not extended
        pooled = self._pool(statements, result)
        self._each("pooled", statements, pooled)

    def replayed(self, measured: list[tuple[CallSequence, PathEdges | None]],
                 untaken: Callable[[], set]) -> None:
        """The paths replay measured (None: not measured) go to the plugins; `untaken()` gives the
        branches out of changed lines no sequence has taken yet."""
        self._each("replayed", measured, untaken)
        for statements, _ in measured:
            self._replaying.pop(id(statements), None)

    def distances(self, measured: list[tuple[CallSequence, dict[str, float]]]) -> None:
        """The branch distances replay measured go to the plugins."""
        self._each("distances", measured)

    def progress(self) -> tuple[int, bool]:
        """The plugins' count of something new found in the changed code, and whether a search of
        theirs is under way (what early stopping watches)."""
        found = sum(count for _, count in self._calls("found"))
        return found, any([searching for _, searching in self._calls("searching")])

    def _calls(self, hook: str, *args: object) -> Iterator[tuple[Plugin, Any]]:
        """Each plugin's `hook(*args)`, in the plugins' order, lazily (a caller that stops early
        leaves the later plugins uncalled, and their random draws undrawn)."""
        for plugin in list(self.plugins):  # a copy: one that raises is switched off on the way
            try:
                yield plugin, getattr(plugin, hook)(*args)
            except Exception as exc:
                self._switch_off(plugin, hook, exc)

    def _each(self, hook: str, *args: object) -> None:
        """Every plugin's `hook(*args)`."""
        for _ in self._calls(hook, *args):
            pass

    def _guarded(self, plugin: Plugin, hook: str, *args: object) -> Any:
        """`plugin.hook(*args)`, or None once it raised (or had raised before)."""
        if not any(on is plugin for on in self.plugins):
            return None
        try:
            return getattr(plugin, hook)(*args)
        except Exception as exc:
            self._switch_off(plugin, hook, exc)
            return None

    def _switch_off(self, plugin: Plugin, hook: str, exc: Exception) -> None:
        """A technique's failure costs the technique, not the run: its plugin is called no more, and
        the report says so (a bug of ours, to report)."""
        self.plugins = [on for on in self.plugins if on is not plugin]
        name = plugin.technique or type(plugin).__name__
        self.failed.append(f"{name} ({hook}: {type(exc).__name__}: {exc})")

    def plugin(self, kind: type[P]) -> P | None:
        """The plugin of that class, when its technique is on."""
        return next((plugin for plugin in self.plugins if isinstance(plugin, kind)), None)

    def _is_seed(self, statements: CallSequence) -> bool:
        """Whether exploration was given `statements` (a carved or solved seed): not one of ours."""
        return id(statements) not in self._proposed and sequence_key(statements) not in self.seen

    def _revisit(self, statements: CallSequence) -> bool:
        """Ask the plugin that proposed `statements` to run its proposal again soon."""
        replaying = self._replaying.get(id(statements))
        return replaying is not None and bool(self._guarded(replaying[1], "revisit", replaying[2]))

    def _pool(self, statements: CallSequence, result: SequenceResult) -> list[PoolEntry]:
        """The last statement's value, and the objects it was given (as the call left them); the
        entries pooled."""
        types, digests, last = result.types, result.digests, len(statements) - 1
        by_state = self._by_state
        entry_statements = tuple(statements)
        cost = self._cost(result)
        offered = []
        if result.reusable and result.reusable[-1] and len(types) > last:
            digest = digests.get(digest_key(last, last), "") if by_state else None
            offered.append((PoolEntry(entry_statements, last, cost), types[last], digest))
        for arg in statements[-1]["args"]:
            ref = arg.get("ref")
            if ref is not None and ref < len(types) and digest_key(last, ref) in digests:
                digest = digests[digest_key(last, ref)] if by_state else None
                offered.append((PoolEntry(entry_statements, ref, cost), types[ref], digest))
        return [entry for entry, mro, digest in offered if self.pools.add(entry, mro, digest)]

    def _cost(self, result: SequenceResult) -> float:
        """What a pooled entry of this result costs (orienteering): its milliseconds when timed."""
        return float(result.milliseconds if result.milliseconds is not None else 1.0) if self.timed else 1.0

    def _candidate(self) -> CallSequence | None:
        op = self.selector.choose()
        if op is None:
            return None
        attempts = self._attempts(op.id)
        attempts.chosen += 1
        substitute = next((found for _, found in self._calls("substitute", op) if found), None)
        if substitute is None:
            for plugin, proposal in self._calls("propose", op):
                if proposal is not None:
                    self._proposed[id(proposal.statements)] = (plugin, proposal)
                    return proposal.statements
        builder = SequenceBuilder()
        receiver = None
        if substitute is not None:  # e.g. a callable the operation returned, called instead of it
            op, receiver = substitute.operation, builder.include(substitute.receiver)
        elif op.kind == OperationKind.METHOD:
            entry = self.builder.object_of(op.owner or "")
            if entry is None:
                attempts.no_receiver += 1
                return None
            receiver = builder.include(entry)
        repeating = self.switches.repetition and self.rng.random() < REPEAT_RATIO
        repeat = self.rng.randint(2, MAX_REPEAT) if repeating else 1
        same = repeating and self.rng.random() < SAME_CALL_RATIO
        for _ in range(repeat):
            call = (copy.deepcopy(builder.statements[-1]) if same and builder.statements and
                    builder.statements[-1]["op"] == op.id else self.builder.call(op, builder, receiver))
            if call is None:
                attempts.no_argument[self.builder.unbuilt or "?"] += 1
                return None
            builder.statements.append(call)
        if len(builder.statements) > MAX_LENGTH:
            return None
        # the draw only where a volume call can be made: other sequences keep their random stream
        if (not repeating and op.state and self.switches.volume and varies(builder.statements[-1])
                and self.rng.random() < VOLUME_RATIO):
            limit = self.volume_limits.get(op.id)
            counts = [size + 1 for size in SIZES if limit is None or size + 1 < limit]
            if counts:
                count = self.rng.choice(counts)
                builder.statements[-1] = {**builder.statements[-1], "op": volume_id(op.id, count)}
        return builder.statements

    def _attempts(self, op_id: str) -> Attempts:
        return self.attempts.setdefault(op_id, Attempts())
