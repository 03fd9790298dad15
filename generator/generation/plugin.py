"""The hooks through which a generation technique takes part in generation.

A technique that does more than flip a flag is a `Plugin`: the sequence generator makes one per
technique that is on (its entry in `techniques.TECHNIQUES` names the factory) and calls each hook
of every plugin, in the table's order, at fixed points of Randoop's loop:

    pick an operation  -> substitute: call something else in its place (a callable it returned)
                       -> propose: a whole candidate sequence for it (influence search)
    run the batch      -> learn: every result; proposal_ran: the result of the plugin's own proposal
                       -> admit: may a normally-ended sequence's values extend the pools (novelty)
                       -> pooled: the pool entries made from a sequence
    replay on both     -> replayed: the paths replay measured (the path memo), and revisit:
                          run a proposal again soon
                       -> distances: the branch distances replay measured (divergence search)
    after each batch   -> found, searching: what early stopping watches (something new still found;
                          a search under way)

Every hook does nothing by default, so a plugin implements only the ones it needs. A plugin whose
hook raises is switched off for the rest of the run, and the report says so: a technique's bug
costs the technique, not the run. A plugin draws random numbers only from `PluginContext.rng`,
in hook order: a run with a fixed seed and sequence count stays reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..runtime.sequence import CallSequence

if TYPE_CHECKING:
    from ..runtime.catalog import Operation
    from ..worker.protocol import SequenceResult
    from .call_builder import CallBuilder
    from .pools import PoolEntry
    from .search.influence import InfluenceMap
    from .search.path_memo import PathEdges
    from .techniques import Switches


class Proposal(Protocol):
    """A candidate sequence a plugin proposed; `request` is what the worker records while running
    it (None: nothing)."""

    @property
    def statements(self) -> CallSequence: ...

    @property
    def request(self) -> dict | None: ...


@dataclass(frozen=True)
class Substitute:
    """What a pick calls instead of the operation picked: `operation` on the value of `receiver`."""

    operation: Operation
    receiver: PoolEntry


@dataclass(frozen=True)
class PluginContext:
    """What the generator lends its plugins."""

    rng: random.Random  # the generator's own: draws must stay in hook order
    builder: CallBuilder  # builds calls and finds receivers from the pools
    operations: list[Operation]  # the operations the selector may pick
    focus: frozenset[str]  # ids of the operations that touch the change
    switches: Switches
    influence: InfluenceMap | None  # the static influence between operations, when computed
    cost: Callable[[SequenceResult], float]  # what a pooled entry of a result costs (orienteering)
    revisit: Callable[[CallSequence], bool]  # ask the proposer of a sequence to run its proposal again
    is_seed: Callable[[CallSequence], bool]  # a sequence exploration was given (carved, solved), not made


class Plugin:
    """A generation technique's part in the generator's loop (see the module docstring)."""

    technique = ""  # the name of the technique it is the part of (set by `Switches.plugins`)
    judges_novelty = False  # True: `admit` replaces state equality as the pools' redundancy filter
    traces = False  # True: the worker records each of its proposals' `request`

    def substitute(self, op: Operation) -> Substitute | None:
        """Something to call in place of `op`, which the selector picked; None: call `op`."""
        return None

    def propose(self, op: Operation) -> Proposal | None:
        """A whole candidate sequence for this pick of `op` (asked when nothing substitutes it)."""
        return None

    def proposal_ran(self, proposal: Proposal, result: SequenceResult) -> None:
        """The result of running a proposal of this plugin's."""

    def learn(self, statements: CallSequence, result: SequenceResult) -> None:
        """The result of any sequence the generator proposed."""

    def admit(self, statements: CallSequence, result: SequenceResult) -> bool:
        """Whether a sequence that ended normally may extend the pools."""
        return True

    def pooled(self, statements: CallSequence, entries: list[PoolEntry]) -> None:
        """The pool entries made from a sequence that ended normally (possibly none)."""

    def replayed(self, measured: Sequence[tuple[CallSequence, PathEdges | None]],
                 untaken: Callable[[], set]) -> None:
        """The paths through changed code replay measured (None: not measured); `untaken()` gives
        the branches out of changed lines no sequence has taken yet."""

    def distances(self, measured: Sequence[tuple[CallSequence, dict[str, float]]]) -> None:
        """Per replayed sequence, the least branch distance it reached at each changed condition
        ("base:<site>", "head:<site>"; empty when not measured)."""

    def found(self) -> int:
        """A count that grows while the technique still finds something new in the changed code (early
        stopping waits while it does); 0: the technique says nothing of it."""
        return 0

    def searching(self) -> bool:
        """Whether the technique is in the middle of a search that early stopping should not cut short."""
        return False

    def counters(self) -> dict[str, float]:
        """What the technique did in this run, by name, for the report's statistics
        (`stats.techniques[NAME]`); empty: it has nothing to count."""
        return {}

    def revisit(self, proposal: Proposal) -> bool:
        """Run `proposal` again soon: its run came near a branch no sequence has taken. True if it
        will be."""
        return False
