"""Candidate Sequence Search (JTestCraft §4, Listing 4.2): receivers prepared for a focus operation
by sequences of calls that can influence it.

For each focus operation, candidates are tuples of operations ending in it, enumerated
breadth-first by *prepending* an operation that can influence the candidate (the static check of
`influence`, cached there): `(compute,)`, then `(set_b, compute)`, `(Calc, compute)`, then
`(set_a, set_b, compute)`, ... The enumeration is lazy: a candidate's extensions are made when
it is taken from the frontier, and the frontier is bounded. A call can only influence what runs
on the object after it exists, so nothing that needs the receiver is prepended before the
constructor (or factory) that makes it. As in the thesis, only *executable* candidates run: those
with a call that makes the receiver of the calls after it (`(Calc, set_b, compute)`, not
`(set_b, compute)`, whose state would depend on whatever pooled object it got); a candidate
for a function is always executable.

A candidate becomes a concrete sequence through the same `CallBuilder` as every generated
call (arguments from literals, pools, and the values earlier calls of the candidate returned,
for the return-argument pairs), runs in the ordinary batches, and enters the pools through the
ordinary feedback, so the feedback loop explores it further. With the dynamic influence check
on (§4.4.1, `influence_check`), a candidate whose run shows a call that influenced nothing is
redundant; when that call wrote fields none of which the method under test used (overwritten,
or never read) the candidate is *pruned*: no extension of its calls after the receiver's making
is run, since prepending calls cannot revive a write that a later call overwrites. A call that
wrote nothing is not pruned on: prepending is how the call that enables it arrives
(`raise_level()` writes only once `arm()` ran).

With partial-order reduction on (§4.3.4, which the thesis describes but did not build), calls
that commute are prepended in one order only: the operations are numbered, and an operation is
prepended before the candidate's first call only if its number is not greater, or if the two
do not commute (`InfluenceMap.commute`). Of `set_a`, `set_b`, `set_c`, each writing a field the
others neither read nor write, only `(set_a, set_b, set_c, show)` of the six orders is built. The
thesis keeps an out-of-order call only when it directly influences the first call; that also
drops `(add, set_mode, total)` when `set_mode` changes what `add` does, an order that leaves
another state than `(set_mode, add, total)`. With commuting as the condition, every candidate left out
has an equivalent one that is built: of its orders reached by swapping adjacent commuting calls,
the least by the numbers (compared call by call) has no commuting pair out of order, and such
swaps keep every call influencing a later one and no call on the receiver before its making.
Pruning is judged on one order, so with the reduction a pruned candidate's extension still runs
when a prepended call commutes with the pruned calls' first: it stands for the orders that put
that call later, which are no longer built.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

from ...runtime.catalog import Operation
from ...runtime.sequence import CallSequence
from ...worker.protocol import OperationKind, SequenceResult, Status
from ..call_builder import MAX_LENGTH, CallBuilder
from ..plugin import Plugin, PluginContext
from ..pools import SequenceBuilder
from .influence import INVOKABLE_KINDS, InfluenceMap
from .influence_check import check_influence

MAX_PREFIX = 8  # calls before the focus operation (the thesis reached 5-6)
FRONTIER_LIMIT = 2000  # candidates waiting per focus operation; wider levels are cut here
MAX_ATTEMPTS = 3  # runs of one candidate that could not be built or did not reach the focus call
MAX_REVISITS = 2  # runs again of one candidate whose path came near a branch no sequence took
MAX_TRIES = 8  # candidates one proposal tries to make concrete before the pick goes to plain generation
SEARCH_RATIO = 0.5  # of the picks of a focus operation that something can influence: its next candidate


@dataclass(frozen=True)
class Built:
    """A candidate made concrete: its statements, and what the worker records for the check."""

    operations: tuple[str, ...]  # the candidate: operation ids, the focus operation last
    statements: CallSequence
    receiver: int  # statement index of the focus call's receiver, -1 when it has none
    calls: tuple[int, ...]  # statement indexes of the candidate's calls before the focus call

    @property
    def request(self) -> dict | None:
        """What the worker records for the dynamic influence check (the worker's `influence`):
        nothing when the focus call has no receiver (only returned values can count)."""
        return {"receiver": self.receiver, "calls": list(self.calls)} if self.receiver >= 0 else None


@dataclass
class SearchStats:
    built: int = 0  # candidates made concrete and run (duplicates of earlier sequences are not)
    checked: int = 0  # of them with calls before the focus call, judged by the dynamic influence check
    redundant: int = 0  # of those, with a call that influenced nothing
    pruned: int = 0  # of those, with a call whose writes were all dead: no extension is run
    skipped: int = 0  # extensions of pruned candidates left out
    reduced: int = 0  # extensions left out by partial-order reduction: a commuting call out of order
    longest_prefix: int = 0  # most calls before the focus call in a candidate that influenced it

    @property
    def pruned_share(self) -> float:
        return self.pruned / self.checked if self.checked else 0.0


class CandidateSearch:
    def __init__(self, influence: InfluenceMap, calls: CallBuilder, operations: list[Operation], *,
                 prune: bool = True, reduce: bool = True) -> None:
        """`prune`: apply the dynamic influence check (else every candidate is extended). `reduce`:
        prepend commuting calls in one order only (else in every order)."""
        self.influence, self.calls, self.prune, self.reduce = influence, calls, prune, reduce
        self.by_id = {op.id: op for op in operations}
        self.number = {op.id: number for number, op in enumerate(operations)}  # the reduction's order
        self.invokables = [op for op in operations if op.kind in INVOKABLE_KINDS]
        self.stats = SearchStats()
        self._frontiers: dict[str, deque[tuple[str, ...]]] = {}
        self._pruned: set[tuple[str, ...]] = set()
        self._attempts: Counter[tuple[str, ...]] = Counter()
        self._revisits: Counter[tuple[str, ...]] = Counter()

    def propose(self, focus: Operation) -> Built | None:
        """The next candidate for `focus`, made concrete; None when none could be built now. At most
        MAX_TRIES candidates are tried: making one concrete builds its calls' arguments, and on a
        package whose objects take long sequences most tries fail, so an unbounded proposal would
        spend the host's time that exploration needs (the next proposal goes on from here)."""
        frontier = self._frontiers.get(focus.id)
        if not frontier:  # first call, or every candidate explored: the search starts over
            frontier = self._frontiers[focus.id] = deque([(focus.id,)])
        tries = 0
        for _ in range(len(frontier)):
            candidate = frontier.popleft()
            if self._extends_pruned(candidate):
                self.stats.skipped += 1
                continue
            if not self._attempts[candidate] and not self._revisits[candidate]:  # extended when first taken
                self._extend(candidate, focus, frontier)
            if not self._executable(candidate, focus):
                continue
            built = self._concrete(candidate, focus)
            if built is not None:
                return built
            self._retry(candidate, frontier)
            tries += 1
            if tries >= MAX_TRIES:
                break
        return None

    def learn(self, built: Built, result: SequenceResult) -> None:
        """The dynamic influence check on a candidate's run: prune it when a call's writes were all
        dead; a candidate whose run never reached the focus call is tried again."""
        self.stats.built += 1
        last = len(built.statements) - 1
        reached = result.status in (Status.OK, Status.EXCEPTION) and result.executed >= last
        if not reached:
            frontier = self._frontiers.get(built.operations[-1])
            if frontier is not None:
                self._retry(built.operations, frontier)
            return
        if not self.prune or not built.calls:
            return  # a candidate of the focus call alone has nothing to judge
        # without a receiver there are no fields: only the values the calls returned can count
        facts = result.influence if built.receiver >= 0 else {"reads": {str(last): []}, "writes": {}}
        verdict = check_influence(built.statements, built.calls, facts, result.types)
        if not verdict.checked:
            return
        self.stats.checked += 1
        self.stats.redundant += bool(verdict.redundant)
        if verdict.dead:
            self.stats.pruned += 1
            self._pruned.add(built.operations[self._receiver_made_at(built.operations) + 1:])
        elif not verdict.redundant:
            self.stats.longest_prefix = max(self.stats.longest_prefix, len(built.operations) - 1)

    def revisit(self, built: Built) -> bool:
        """Run a candidate again next, with other arguments: its run reached a changed line and
        took a branch other than one no sequence has taken (the path memo's near miss). False
        when it was run again enough already."""
        candidate = built.operations
        frontier = self._frontiers.get(candidate[-1])
        if frontier is None or self._revisits[candidate] >= MAX_REVISITS:
            return False
        self._revisits[candidate] += 1
        frontier.appendleft(candidate)
        return True

    # ------------------------------------------------------------ enumeration (Listing 4.2)

    def _extend(self, candidate: tuple[str, ...], focus: Operation, frontier: deque[tuple[str, ...]]) -> None:
        """Queue every candidate made by prepending an operation that can influence this one."""
        if len(candidate) > MAX_PREFIX or len(frontier) >= FRONTIER_LIMIT:
            return
        owner = focus.owner if focus.kind == OperationKind.METHOD else None
        visible: list[Operation] = []  # what a prepended call runs before: up to the receiver's making
        for op_id in candidate:
            visible.append(self.by_id[op_id])
            if owner and self.influence.makes_receiver(visible[-1], owner):
                break
        made = owner is not None and self.influence.makes_receiver(visible[-1], owner)
        before_receiver = {op.id for target in visible for op in self.influence.influencers(target)}
        anywhere = {op.id for op_id in candidate for op in self.influence.influencers(self.by_id[op_id])}
        first = self.by_id[candidate[0]]
        for op in self.invokables:
            needs = owner is not None and self._needs_receiver(op, owner)
            if op.id not in (before_receiver if needs else anywhere) or (made and needs):
                continue
            if self._out_of_order(op, first):
                self.stats.reduced += 1
            else:
                frontier.append((op.id, *candidate))

    def _out_of_order(self, op: Operation, first: Operation) -> bool:
        """Partial-order reduction (§4.3.4): `op` before `first` is the order left out when the two
        commute and `first` comes earlier in the numbering."""
        return (self.reduce and self.number[op.id] > self.number[first.id]
                and self.influence.commute(op, first))

    def _executable(self, candidate: tuple[str, ...], focus: Operation) -> bool:
        """A function's candidates always; a method's when a call makes the receiver (the calls
        before it never need the receiver: `_extend` prepends none)."""
        return focus.kind != OperationKind.METHOD or not focus.owner or self._receiver_made_at(candidate) >= 0

    def _receiver_made_at(self, candidate: tuple[str, ...]) -> int:
        """The position of the call that makes the focus call's receiver, -1 when none does."""
        owner = self.by_id[candidate[-1]].owner
        if self.by_id[candidate[-1]].kind != OperationKind.METHOD or not owner:
            return -1
        return next((i for i, op_id in enumerate(candidate)
                     if self.influence.makes_receiver(self.by_id[op_id], owner)), -1)

    def _needs_receiver(self, op: Operation, owner: str) -> bool:
        """Whether `op` is called on the focus call's receiver, or makes it."""
        return self._acts_on(op, owner) or self.influence.makes_receiver(op, owner)

    def _acts_on(self, op: Operation, owner: str) -> bool:
        """A method an object of type `owner` has (its class is in the owner's MRO)."""
        return op.kind == OperationKind.METHOD and op.owner in self.influence.mro(owner)

    def _extends_pruned(self, candidate: tuple[str, ...]) -> bool:
        """Whether the candidate prepends calls to a pruned one's calls. With the reduction on, not
        when a prepended call commutes with the pruned calls' first: the candidate then stands for
        equivalent orders that put that call later, which the pruning says nothing about, and
        which are not built (`(set_name, set_email, show)` is the one order built when
        `(set_email, show)` was pruned because `show` read no `email` while `name` was empty)."""
        return any(candidate[start:] in self._pruned
                   and not self._moves_into(candidate[:start], candidate[start])
                   for start in range(len(candidate)))

    def _moves_into(self, prepended: tuple[str, ...], first: str) -> bool:
        """Whether, with the reduction on, a prepended call commutes with `first`."""
        return self.reduce and any(self.influence.commute(self.by_id[op_id], self.by_id[first])
                                   for op_id in prepended)

    def _retry(self, candidate: tuple[str, ...], frontier: deque[tuple[str, ...]]) -> None:
        self._attempts[candidate] += 1
        if self._attempts[candidate] < MAX_ATTEMPTS:
            frontier.append(candidate)

    # ------------------------------------------------------------ concretization

    def _concrete(self, candidate: tuple[str, ...], focus: Operation) -> Built | None:
        """The candidate's calls with arguments; an object a call returned is passed to the later
        calls that take its type (the return-argument pairs the candidate was built from)."""
        owner = focus.owner if focus.kind == OperationKind.METHOD else None
        builder = SequenceBuilder()
        receiver: dict | None = None
        returned: dict[str, dict] = {}  # type name -> reference to a value a call of the candidate returned
        calls: list[int] = []
        for position, op_id in enumerate(candidate):
            op = self.by_id[op_id]
            target: dict | None = None
            if owner and receiver is None and self.influence.makes_receiver(op, owner):
                pass  # the constructor that makes the receiver
            elif owner and self._acts_on(op, owner):
                receiver = receiver or self._receiver_of(owner, builder)
                target = receiver
            elif op.kind == OperationKind.METHOD:
                target = self._receiver_of(op.owner or "", builder)
            if op.kind == OperationKind.METHOD and target is None:
                return None
            call = self.calls.call(op, builder, target, provided=returned)
            if call is None or len(builder.statements) >= MAX_LENGTH:
                return None
            builder.statements.append(call)
            index = len(builder.statements) - 1
            if owner and receiver is None and self.influence.makes_receiver(op, owner):
                receiver = {"ref": index}
            if position < len(candidate) - 1:
                calls.append(index)
            for made in self.influence.returned_types(op):
                returned.update({name: {"ref": index} for name in self.influence.mro(made)})
        return Built(candidate, builder.statements, receiver["ref"] if receiver else -1, tuple(calls))

    def _receiver_of(self, type_name: str, builder: SequenceBuilder) -> dict | None:
        entry = self.calls.object_of(type_name)
        return builder.include(entry) if entry is not None else None


class SearchPlugin(Plugin):
    """The technique `influence` (with `pruning` and `reduction`): a pick of a focus operation that
    something can influence takes Candidate Sequence Search's next candidate, SEARCH_RATIO of the
    time; with the dynamic influence check on, the worker traces each candidate's reads and writes."""

    def __init__(self, context: PluginContext, influence: InfluenceMap) -> None:
        self.rng, self.focus = context.rng, context.focus
        switches = context.switches
        self.search = CandidateSearch(influence, context.builder, context.operations,
                                      prune=switches.pruning, reduce=switches.reduction)
        self.traces = switches.pruning

    def counters(self) -> dict[str, float]:
        stats = self.search.stats
        return {"candidates": stats.built, "checked": stats.checked, "redundant": stats.redundant,
                "pruned": stats.pruned, "pruned_share": round(stats.pruned_share, 3),
                "longest_prefix": stats.longest_prefix, "reduced": stats.reduced}

    @staticmethod
    def make(context: PluginContext) -> SearchPlugin | None:
        """None without the static influence map (the engine computes it when the technique is on)."""
        return None if context.influence is None else SearchPlugin(context, context.influence)

    def propose(self, op: Operation) -> Built | None:
        if (op.id not in self.focus or not self.search.influence.influencers(op)
                or self.rng.random() >= SEARCH_RATIO):
            return None
        return self.search.propose(op)

    def proposal_ran(self, proposal: Built, result: SequenceResult) -> None:  # type: ignore[override]
        self.search.learn(proposal, result)

    def revisit(self, proposal: Built) -> bool:  # type: ignore[override]
        return self.search.revisit(proposal)
