"""JTestCraft's Candidate Sequence Search and its dynamic influence check: the static criteria
(return-argument pairs, field define-use pairs over callees and overrides), the breadth-first
builder of Listing 4.2, the worker's record of reads and writes and the Table 4.4 verdicts, and,
end to end, a changed method that only behaves differently after `arm(); charge(); charge()`."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.influence_samples import BY_ID, SOURCE, monitor_influence, monitor_search
from support.repos import RepoBuilder, make_pr

from difforacle.bot.cli import build_parser
from difforacle.generator.generation.search.candidate_search import Built, CandidateSearch
from difforacle.generator.generation.search.influence import class_facts
from difforacle.generator.generation.search.influence_check import check_influence
from difforacle.generator.generation.techniques import ALL, Components, Switches
from difforacle.generator.runtime.catalog import Operation
from difforacle.generator.worker.influence import InfluenceRecorder
from difforacle.generator.worker.protocol import SequenceResult, Status


def _influencers(qualname: str) -> set[str]:
    return {op.qualname for op in monitor_influence().influencers(BY_ID[f"pkg.mon:{qualname}"])}


# ---------------------------------------------------------------- static criteria (§4.3.1)


def test_fields_are_read_and_written_through_self() -> None:
    facts = class_facts("pkg.mon", SOURCE)["pkg.mon.Monitor"].methods
    assert facts["set_enabled"].writes == {"enabled"}
    assert facts["_store"].writes == {"temperature", "history"}  # `self.history.append(...)` writes it
    assert facts["warning"].reads == {"enabled", "hot"}


def test_define_use_pairs_follow_callees_and_properties() -> None:
    influence = monitor_influence()
    # update() writes through its callee _store; warning() reads through the property `hot`
    assert influence.effects(BY_ID["pkg.mon:Monitor.update"]).writes == {"temperature", "history"}
    assert {"enabled", "temperature"} <= influence.effects(BY_ID["pkg.mon:Monitor.warning"]).reads
    assert _influencers("Monitor.warning") == {"Monitor", "Monitor.set_enabled", "Monitor.update", "Strict"}


def test_a_write_nothing_reads_influences_nothing() -> None:
    assert "Monitor.rename" not in _influencers("Monitor.warning")


def test_overriding_implementations_of_a_callee_are_included() -> None:
    # check() calls self.limit(); Monitor.limit reads nothing, Strict's override reads `history`
    assert "history" in monitor_influence().effects(BY_ID["pkg.mon:Monitor.check"]).reads
    assert "Monitor.update" in _influencers("Monitor.check")


def test_return_argument_pairs() -> None:
    # make_reading() and Reading() return what update() takes
    assert {"make_reading", "Reading"} <= _influencers("Monitor.update")
    assert "make_reading" not in _influencers("Monitor.warning")


def test_a_constructor_makes_the_receiver_and_reads_nothing() -> None:
    influence = monitor_influence()
    assert influence.makes_receiver(BY_ID["pkg.mon:Strict"], "pkg.mon.Monitor")
    assert not influence.makes_receiver(BY_ID["pkg.mon:Reading"], "pkg.mon.Monitor")
    assert not influence.effects(BY_ID["pkg.mon:Monitor"]).reads


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


# ---------------------------------------------------------------- the dynamic check (§4.4.1, Table 4.4)


def _calls_on(receiver: int, count: int) -> list[dict]:
    return [{"op": "m", "args": [{"ref": receiver}], "kwargs": {}} for _ in range(count)]


@pytest.mark.parametrize(("reads", "writes", "redundant", "dead"), [
    # def(a); use(a); use(a): the middle call changes nothing
    ({"2": ["a"], "3": ["a"]}, {"1": ["a"], "2": []}, (2,), ()),
    # def(a); def(a); use(a): the first write is overwritten
    ({"3": ["a"]}, {"1": ["a"], "2": ["a"]}, (1,), (1,)),
    # def(a); def(b); use(a), use(b): both kept
    ({"3": ["a", "b"]}, {"1": ["a"], "2": ["b"]}, (), ()),
    # def(a); use(a), def(a); use(a): both kept
    ({"2": ["a"], "3": ["a"]}, {"1": ["a"], "2": ["a"]}, (), ()),
])
def test_table_4_4(reads: dict, writes: dict, redundant: tuple, dead: tuple) -> None:
    statements = [{"op": "C", "args": [], "kwargs": {}}, *_calls_on(0, 3)]
    verdict = check_influence(statements, [1, 2], {"reads": reads, "writes": writes}, [])
    assert verdict.checked and (verdict.redundant, verdict.dead) == (redundant, dead)


def test_a_returned_value_used_by_the_method_under_test_influences_it() -> None:
    statements = [{"op": "make", "args": [], "kwargs": {}}, {"op": "C", "args": [], "kwargs": {}},
                  {"op": "m", "args": [{"ref": 1}, {"ref": 0}], "kwargs": {}}]
    facts = {"reads": {"2": []}, "writes": {"1": ["a"]}}
    assert check_influence(statements, [0, 1], facts, [["pkg.R"], ["pkg.C"]]).redundant == ()
    assert check_influence(statements, [0, 1], facts, [["builtins.NoneType"], ["pkg.C"]]).redundant == (0,)


def test_without_facts_nothing_is_judged() -> None:
    statements = [{"op": "C", "args": [], "kwargs": {}}, *_calls_on(0, 1)]
    assert not check_influence(statements, [0], None, []).checked


class Counter:
    def __init__(self) -> None:
        self.count = 0
        self.items: list[int] = []
        self.label = ""

    def add(self, item: int) -> None:
        self.items.append(item)

    def rename(self, label: str) -> None:
        self.label = label

    def same(self) -> None:
        self.count = 0

    def total(self) -> int:
        return sum(self.items) + self.count


def test_the_worker_records_reads_and_writes_on_the_receiver() -> None:
    recorder = InfluenceRecorder({"receiver": 0, "calls": [0, 1, 2, 3]})
    values: list = []
    values.append(recorder.around(0, 4, values, Counter))
    receiver = values[0]
    for index, call in enumerate((lambda: receiver.add(3), lambda: receiver.rename("x"), receiver.same,
                                  receiver.total), start=1):
        values.append(recorder.around(index, 4, values, call))
    facts = recorder.record()
    assert facts is not None
    assert facts["writes"] == {"0": ["count", "items", "label"], "1": ["items"], "2": ["label"],
                               "3": [], "4": []}
    assert facts["reads"]["4"] == ["count", "items"]
    assert "__getattribute__" not in vars(Counter)  # the recording hook is gone after each call
    statements = [{"op": "C", "args": [], "kwargs": {}}, *_calls_on(0, 4)]
    verdict = check_influence(statements, [0, 1, 2, 3], facts, [["Counter"]] + [["builtins.NoneType"]] * 4)
    assert verdict.redundant == (2, 3) and verdict.dead == (2,)  # rename: dead; same(): changed nothing


def test_an_object_without_a_dictionary_cannot_be_traced() -> None:
    recorder = InfluenceRecorder({"receiver": 0, "calls": []})
    values: list = [3]
    recorder.around(1, 1, values, lambda: values[0] + 1)
    assert recorder.record() is None


# ---------------------------------------------------------------- end to end

MACHINE = '''\
class Machine:
    """A machine that must be armed, then charged twice, before it fires."""

    def __init__(self) -> None:
        self.armed = False
        self.level = 0
        self.label = ""

    def arm(self) -> None:
        self.armed = True

    def disarm(self) -> None:
        self.armed = False
        self.level = 0

    def charge(self) -> None:
        if self.armed:
            self.level += 1

    def drain(self) -> None:
        self.level = 0

    def rename(self, label: str) -> None:
        self.label = label

    def paint(self, color: str) -> None:
        self.color = color

    def weigh(self, grams: int) -> None:
        self.grams = grams

    def describe(self) -> str:
        return f"{self.label}:{self.level}"

    def fire(self) -> str:
        if self.armed and self.level >= 2:
            return "boom"
        return "click"
'''


def _fired(builder: RepoBuilder, components: Components, seed: int):
    make_pr(builder, {"pkg/__init__.py": "", "pkg/machine.py": MACHINE},
            {"pkg/machine.py": MACHINE.replace('return "boom"', 'return "BOOM"')})
    return run_analyze(builder, max_sequences=150, seed=seed, budget=30, components=components)


def _boom(report) -> list:
    """The differences that show fire() saying "BOOM" on head (as a call or as an observer)."""
    return [d for d in report.differences if "'boom'" in d.base and "'BOOM'" in d.head]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_change_reached_only_after_a_sequence_of_setters(builder: RepoBuilder, seed: int) -> None:
    report = _fired(builder, ALL, seed)
    assert _boom(report)
    stats = report.stats
    assert stats.influence_candidates > 0 and stats.influence_checked > 0
    assert stats.influence_checked >= stats.influence_redundant >= stats.influence_pruned
    assert stats.influence_longest_prefix >= 3  # Machine(), arm(), charge(), charge() before fire()


# Repetition's same call again (`charge(); charge()`) reaches the state too, now and then: the pair
# below leaves it out on both sides, so that what it compares is influence search alone.
WITHOUT_REPETITION = Components.without(["repetition"])


def test_the_change_is_found_with_influence_search(builder: RepoBuilder) -> None:
    report = _fired(builder, WITHOUT_REPETITION, 0)
    [difference] = _boom(report)
    assert difference.test.count(".charge()") == 2 and ".arm()" in difference.test
    assert report.stats.influence_reduced > 0  # arm() and drain() commute: one order of the two


def test_the_same_sequences_miss_it_without_influence_search(builder: RepoBuilder) -> None:
    report = _fired(builder, Components.without(["influence", "repetition"]), 0)
    assert not report.differences
    assert report.stats.influence_candidates == 0


def test_the_command_line_switches_the_components_off() -> None:
    args = build_parser().parse_args(["diff", "--base", "a", "--head", "b",
                                      "--disable", "influence", "--disable", "pruning",
                                      "--disable", "reduction"])
    switches = Components.without(args.disable).switches
    assert not switches.influence and not switches.pruning and not switches.reduction
    assert Switches().influence and Switches().pruning and Switches().reduction
