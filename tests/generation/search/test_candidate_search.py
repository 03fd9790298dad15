"""Tests for `difforacle.generator.generation.search.candidate_search`: JTestCraft's Candidate
Sequence Search. Partial-order reduction (§4.3.4): calls that commute by the static facts are
prepended in one order only, calls that do not in every order; and the breadth-first builder of
Listing 4.2 on the Monitor sample (`support.influence_samples`), with the pruning the influence
check's verdicts decide."""

from __future__ import annotations

import itertools
import random
import textwrap

import pytest
from support.influence_samples import BY_ID, monitor_search

from difforacle.generator.generation.call_builder import CallBuilder
from difforacle.generator.generation.pools import Pools
from difforacle.generator.generation.search import candidate_search
from difforacle.generator.generation.search.candidate_search import Built, CandidateSearch
from difforacle.generator.generation.search.influence import influence_map
from difforacle.generator.generation.techniques import ALL, Components
from difforacle.generator.generation.type_learning import TypeLearning
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.runtime.catalog import Catalog, Operation, Parameter
from difforacle.generator.worker.protocol import SequenceResult, Status

SOURCE = textwrap.dedent('''\
    class Token:
        pass


    class Panel:
        def __init__(self) -> None:
            self.a = self.b = self.c = 0
            self.armed = False
            self.level = 0
            self.mode = "sum"
            self.items = []

        def set_a(self, value: int) -> None:
            self.a = value

        def set_b(self, value: int) -> None:
            self.b = value

        def set_c(self, value: int) -> None:
            self.c = value

        def reset(self) -> None:
            self.a = 0

        def show(self) -> int:
            return self.a + self.b + self.c

        def charge(self) -> None:
            if self.armed:
                self.level += 1

        def arm(self) -> None:
            self.armed = True

        def fire(self) -> bool:
            return self.armed and self.level > 1

        def set_mode(self, mode: str) -> None:
            self.mode = mode

        def add(self, value: int) -> None:
            if self.mode == "sum":
                self.items.append(value)

        def total(self) -> int:
            return sum(self.items) if self.mode == "sum" else len(self.items)


    def token() -> Token:
        return Token()


    def other_token() -> Token:
        return Token()
''')

INT = ("builtins.int",)


def _op(name: str, kind: str = "method", params: tuple[str, ...] = (),
        returns: tuple[str, ...] = ()) -> Operation:
    owner = {"method": "pkg.panel.Panel", "constructor": "pkg.panel.Panel"}.get(kind)
    qualname = name if kind != "method" else f"Panel.{name}"
    parameters = tuple(Parameter(p, "POSITIONAL_OR_KEYWORD", False, INT if p != "mode" else ("builtins.str",))
                       for p in params)
    return Operation(f"pkg.panel:{qualname}", kind, owner, parameters, returns, None, None)


# the numbering of the reduction is this order: `charge` before `arm`, `set_mode` before `add`
OPERATIONS = [
    _op("Panel", "constructor"),
    *(_op(name, params=("value",)) for name in ("set_a", "set_b", "set_c")),
    _op("reset"), _op("show", returns=INT),
    _op("charge"), _op("arm"), _op("fire", returns=("builtins.bool",)),
    _op("set_mode", params=("mode",)), _op("add", params=("value",)), _op("total", returns=INT),
    _op("token", "function", returns=("pkg.panel.Token",)),
    _op("other_token", "function", returns=("pkg.panel.Token",)),
]
BY_NAME = {op.qualname.rpartition(".")[2]: op for op in OPERATIONS}
CATALOG = Catalog(OPERATIONS, {"pkg.panel.Panel": {"mro": ["pkg.panel.Panel"]},
                               "pkg.panel.Token": {"mro": ["pkg.panel.Token"]}}, {})


def _search(components: Components = ALL) -> CandidateSearch:
    switches = components.switches
    rng = random.Random(0)
    values = ValueGenerator(random.Random(2), Constants())
    learning = TypeLearning({op.id: op for op in OPERATIONS}, values.can_make)
    calls = CallBuilder(CATALOG, OPERATIONS, values, rng, Pools(rng=random.Random(1)), learning, switches)
    return CandidateSearch(influence_map({"pkg.panel": SOURCE}, CATALOG), calls, OPERATIONS,
                           prune=switches.pruning, reduce=switches.reduction)


def _built(search: CandidateSearch, focus: str, proposals: int) -> set[tuple[str, ...]]:
    """The candidates (as operation names) that `proposals` proposals for `focus` built."""
    found = set()
    for _ in range(proposals):
        built = search.propose(BY_NAME[focus])
        if built is not None:
            found.add(tuple(op.rpartition(".")[2].rpartition(":")[2] for op in built.operations))
    return found


def _setter_orders(candidates: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    return {c for c in candidates if c in {("Panel", *order, "show")
                                           for order in itertools.permutations(("set_a", "set_b", "set_c"))}}


def test_setters_of_distinct_fields_commute_and_conflicting_calls_do_not() -> None:
    influence = influence_map({"pkg.panel": SOURCE}, CATALOG)

    def commute(first: str, then: str) -> bool:
        return influence.commute(BY_NAME[first], BY_NAME[then])

    assert commute("set_a", "set_b") and commute("set_b", "set_c") and commute("arm", "set_a")
    assert not commute("set_a", "reset")  # both write `a`: the later write stays
    assert not commute("arm", "charge") and not commute("charge", "arm")  # charge() reads `armed`
    assert not commute("charge", "charge")  # `level += 1` reads what it writes
    assert not commute("Panel", "set_a")  # the constructor makes the receiver
    assert not commute("token", "other_token")  # which Token a later call gets depends on the order


def test_three_commuting_setters_are_built_in_one_order_of_six() -> None:
    search = _search()
    assert _setter_orders(_built(search, "show", 600)) == {("Panel", "set_a", "set_b", "set_c", "show")}
    assert search.stats.reduced > 0


def test_without_the_reduction_every_order_is_built() -> None:
    search = _search(Components.without(["reduction"]))
    assert len(_setter_orders(_built(search, "show", 3000))) == 6
    assert search.stats.reduced == 0


def test_the_reduction_reaches_longer_candidates_in_as_many_runs() -> None:
    def longest(components: Components) -> int:
        search, built = _search(components), []
        while len(built) < 150:
            built += [b for b in [search.propose(BY_NAME["show"])] if b is not None]
        return max(len(b.operations) for b in built)

    # five calls between Panel() and show(): built 117th with the reduction, 342nd without
    assert longest(ALL) == 7 and longest(Components.without(["reduction"])) == 6


def test_a_call_that_influences_the_first_call_is_prepended_out_of_order() -> None:
    # arm() comes after charge() in the numbering, and sets the `armed` charge() reads
    built = _built(_search(), "fire", 300)
    assert ("Panel", "arm", "charge", "fire") in built and ("Panel", "charge", "arm", "fire") in built


def test_a_call_the_first_call_influences_is_prepended_out_of_order() -> None:
    # add() after set_mode() in the numbering, influencing neither it nor being commutable with it:
    # set_mode() changes what add() does. The thesis's rule (keep an out-of-order call only when it
    # influences the first call) would leave this order out; it ends in another state.
    built = _built(_search(), "total", 300)
    assert ("Panel", "add", "set_mode", "total") in built and ("Panel", "set_mode", "add", "total") in built


def _least_order(candidate: tuple[str, ...], search: CandidateSearch) -> tuple[str, ...]:
    """The candidate with adjacent commuting calls swapped into the numbering's order until none is out
    of it: the least of its equivalent orders."""
    calls = [BY_NAME[name] for name in candidate]
    swapped = True
    while swapped:
        swapped = False
        for i in range(len(calls) - 1):
            if (search.number[calls[i].id] > search.number[calls[i + 1].id]
                    and search.influence.commute(calls[i], calls[i + 1])):
                calls[i], calls[i + 1] = calls[i + 1], calls[i]
                swapped = True
    return tuple(op.qualname.rpartition(".")[2] for op in calls)


@pytest.mark.parametrize("focus", ["show", "fire", "total"])
def test_every_candidate_left_out_has_an_equivalent_one_built(focus: str) -> None:
    reduced = _search()
    built = _built(reduced, focus, 1000)
    everything = {c for c in _built(_search(Components.without(["reduction"])), focus, 3000) if len(c) <= 4}
    assert len(everything) > 5  # every candidate of up to three calls before the focus call
    assert all(_least_order(candidate, reduced) in built for candidate in everything)


# ---------------------------------------------------------------- the cost of a proposal


def test_a_proposal_tries_a_bounded_number_of_candidates() -> None:
    search, tried = _search(), []

    def unbuildable(candidate: tuple[str, ...], focus: object) -> None:
        tried.append(candidate)  # as when every candidate's arguments overflow a sequence

    search._concrete = unbuildable  # type: ignore[method-assign]
    per_proposal = []
    for _ in range(20):
        before = len(tried)
        assert search.propose(BY_NAME["show"]) is None
        per_proposal.append(len(tried) - before)
    assert max(per_proposal) == candidate_search.MAX_TRIES  # the frontier held more
    assert len(set(tried)) > 3 * candidate_search.MAX_TRIES  # the next proposal goes on from there



# ---------------------------------------------------------------- the breadth-first builder (Listing 4.2)


def _proposals(search: CandidateSearch, focus: Operation, count: int = 60) -> list:
    """What `count` proposals built (a proposal builds nothing while only unexecutable candidates wait)."""
    return [built for built in (search.propose(focus) for _ in range(count)) if built is not None]


def _names(operations: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(op.partition(":")[2] for op in operations)


def test_candidates_are_built_breadth_first_and_start_with_the_receivers_maker() -> None:
    search = monitor_search()
    warning = BY_ID["pkg.mon:Monitor.warning"]
    candidates = [_names(b.operations) for b in _proposals(search, warning, 12)]
    lengths = [len(c) for c in candidates]
    assert lengths == sorted(lengths)  # breadth first: shorter candidates first
    assert ("Monitor", "Monitor.set_enabled", "Monitor.warning") in candidates
    assert ("Monitor", "Monitor.update", "Monitor.warning") in candidates
    for candidate in candidates:  # executable: one receiver made, before anything called on it
        made = [i for i, op in enumerate(candidate) if op in ("Monitor", "Strict")]
        assert len(made) == 1 and all(op in ("Reading", "make_reading") for op in candidate[:made[0]])


def test_a_built_candidate_passes_returned_values_and_calls_on_one_receiver() -> None:
    search = monitor_search()
    update = BY_ID["pkg.mon:Monitor.update"]
    # make_reading() and Monitor() commute: partial-order reduction builds them in catalog order
    built = next(b for b in _proposals(search, update)
                 if _names(b.operations) == ("Monitor", "make_reading", "Monitor.update"))
    monitor, reading, call = built.statements
    assert reading["op"] == "pkg.mon:make_reading" and monitor["op"] == "pkg.mon:Monitor"
    assert call["args"] == [{"ref": 0}, {"ref": 1}]  # on the receiver, given the reading made before
    assert built.receiver == 0 and built.calls == (0, 1)


def _result(facts: dict | None, types: list[list[str]] | None = None, status: Status = Status.OK,
            executed: int = 3) -> SequenceResult:
    return SequenceResult(status, {}, executed=executed, types=types or [], influence=facts)


def _pruned_update(search: CandidateSearch) -> Built:
    """`(Monitor, update, warning)` run and pruned: update() wrote `temperature` and `history`, and
    warning() read only `enabled` (False: `self.enabled and self.hot` reads no more). Proposed
    one by one, so that no longer candidate is built before."""
    warning = BY_ID["pkg.mon:Monitor.warning"]
    wanted = ("Monitor", "Monitor.update", "Monitor.warning")
    built = next(b for b in (search.propose(warning) for _ in range(60))
                 if b is not None and _names(b.operations) == wanted)
    maker, update = built.calls
    last = len(built.statements) - 1
    facts = {"reads": {str(last): ["enabled"]},
             "writes": {str(maker): ["enabled", "temperature"], str(update): ["history"]}}
    search.learn(built, _result(facts, executed=last + 1))
    assert (search.stats.checked, search.stats.pruned) == (1, 1)
    return built


def test_a_candidate_whose_write_is_dead_is_pruned_with_its_extensions() -> None:
    search = monitor_search(reduce=False)  # every order of the calls is built: the pruning alone
    built = _pruned_update(search)
    later = [b.operations for b in _proposals(search, BY_ID["pkg.mon:Monitor.warning"], 200)]
    assert later and not any(ops[-2:] == built.operations[-2:] and len(ops) > 3 for ops in later)
    assert search.stats.skipped > 0


def test_with_the_reduction_a_pruned_candidate_is_extended_by_the_calls_that_commute_with_it() -> None:
    # set_enabled() commutes with update(): (Monitor, set_enabled, update, warning) is the one order
    # of the two built, and the pruning of (update, warning) says nothing of the other order
    search = monitor_search()
    _pruned_update(search)
    later = {_names(b.operations) for b in _proposals(search, BY_ID["pkg.mon:Monitor.warning"], 200)}
    assert ("Monitor", "Monitor.set_enabled", "Monitor.update", "Monitor.warning") in later
    assert not any(ops[-2:] == ("Monitor.update", "Monitor.warning") and "Monitor.set_enabled" not in ops
                   and len(ops) > 3 for ops in later)  # update() again, or a reading made before
    assert search.stats.skipped > 0


def test_without_pruning_every_candidate_is_extended() -> None:
    search = monitor_search(prune=False)
    warning = BY_ID["pkg.mon:Monitor.warning"]
    built = next(b for b in _proposals(search, warning)
                 if _names(b.operations) == ("Monitor", "Monitor.update", "Monitor.warning"))
    last = len(built.statements) - 1
    search.learn(built, _result({"reads": {str(last): []}, "writes": {str(built.calls[-1]): ["history"]}},
                                executed=last + 1))
    assert search.stats.checked == 0 and not search.stats.skipped
