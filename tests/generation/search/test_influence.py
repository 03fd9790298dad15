"""Tests for `difforacle.generator.generation.search.influence`: the static criteria of JTestCraft's
Candidate Sequence Search (§4.3.1), return-argument pairs and field define-use pairs over callees
and overrides, on the Monitor sample (`support.influence_samples`).

The breadth-first builder is tested with `candidate_search`, the dynamic check with
`influence_check`, the worker's record of reads and writes with `worker.influence`, and influence
search end to end in tests/end_to_end/test_influence_search.py."""

from __future__ import annotations

from support.influence_samples import BY_ID, SOURCE, monitor_influence

from difforacle.generator.generation.search.influence import class_facts


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
