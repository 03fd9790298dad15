"""Tests for `difforacle.generator.generation.replay`'s `Candidates.compare`: a sequence that cannot
be compared costs itself.

Replayed results come back in every shape a worker writes: ended normally, lost with only its
`!` key, skipped with no observations at all. None of them may stop the comparison of the
others (the run once died with `KeyError: 'obs'` on a result without observations).
"""

from __future__ import annotations

from difforacle.generator.changes.scope import EVERYTHING
from difforacle.generator.generation.replay import Candidates, KeptSequence, Replayer
from difforacle.generator.oracle.leaves import EXACT_ENOUGH
from difforacle.generator.worker.protocol import SequenceResult, lost_record

STATEMENTS = [{"op": "pkg.mod:Bar", "args": [], "kwargs": {}},
              {"op": "pkg.mod:Bar.advance", "args": [{"ref": 0}, {"lit": ["int", 1]}], "kwargs": {}}]
OBSERVED = {"0/0": ["T", "pkg.mod.Bar"], "1/1": ["n"], "1/0": ["T", "pkg.mod.Bar"], "1/0.'{0:3'": ["i", 1]}


def ran(observations: dict, status: str = "ok") -> SequenceResult:
    return SequenceResult.from_json({"status": status, "obs": observations, "n": 2, "hit": True})


def skipped() -> SequenceResult:
    """What the worker writes for a sequence calling an operation that hung earlier in the batch."""
    return SequenceResult.from_json({"status": "skipped", "obs": {}, "n": 0, "hit": False,
                                     "skipped_op": "pkg.mod:Bar.advance"})


def kept(base: SequenceResult, head: SequenceResult, explored: SequenceResult | None = None) -> KeptSequence:
    return KeptSequence(STATEMENTS, explored or ran(dict(OBSERVED)), base, head)


def test_a_replay_that_was_skipped_has_nothing_to_compare() -> None:
    candidates = Candidates()
    sequences = [kept(skipped(), ran(dict(OBSERVED))), kept(ran(dict(OBSERVED)), skipped()),
                 kept(skipped(), skipped())]
    candidates.compare(sequences, EXACT_ENOUGH, EVERYTHING)
    assert not candidates.groups and candidates.unreadable == 0
    assert all(r.observations == {} for s in sequences for r in (s.explored, s.replayed_base,
                                                                   s.replayed_head))


def test_results_without_observations_are_compared_without_stopping_the_others() -> None:
    head = dict(OBSERVED, **{"1/0.'{0:3'": ["i", 2]})
    without_obs = SequenceResult.from_json({"status": "crash", "n": 1, "lost": True})  # no "obs" at all
    sequences = [kept(ran(dict(OBSERVED)), without_obs),
                 kept(ran(dict(OBSERVED)), SequenceResult.from_json(lost_record("hang", 1))),
                 kept(ran(dict(OBSERVED)), ran(head))]
    candidates = Candidates()
    candidates.compare(sequences, EXACT_ENOUGH, EVERYTHING)
    found = {(key.kind, key.observation): [m.key for _, m in members]
             for key, members in candidates.groups.items()}
    assert found[("state", "argument.'{0:3'")] == ["1/0.'{0:3'"]  # a quoted name groups as any other
    assert found[("exception", "!")] == ["1/!"]  # the hang: lost at statement 1
    assert len(candidates) == 3 and candidates.unreadable == 0


def test_an_unreadable_key_costs_its_sequence_only() -> None:
    broken = dict(OBSERVED, **{"1/0. .encoding": ["i", 1]})  # the form the old grammar could not read
    good_head = dict(OBSERVED, **{"1/1": ["i", 5]})
    sequences = [kept(ran(dict(OBSERVED)), ran(broken)), kept(ran(dict(OBSERVED)), ran(good_head))]
    candidates = Candidates()
    candidates.compare(sequences, EXACT_ENOUGH, EVERYTHING)
    assert candidates.unreadable == 1
    [(key, members)] = candidates.groups.items()
    assert (key.kind, key.observation, members[0][1].key) == ("return", "result", "1/1")
    assert members[0][0] is sequences[1] and sequences[1].replayed_head.observations == good_head  # type: ignore[union-attr]


class RecordingWorker:
    """Stands in for a worker: records each replay round it is asked for, answers every sequence."""

    def __init__(self) -> None:
        self.rounds: list[int] = []

    def run(self, sequences: list, random_seed: int, **options: object) -> list[SequenceResult]:
        self.rounds.append(len(sequences))
        return [ran(dict(OBSERVED)) for _ in sequences]


def test_kept_sequences_wait_for_a_full_round_and_the_rest_go_when_asked() -> None:
    base, head = RecordingWorker(), RecordingWorker()
    with Replayer(base, head, None) as replayer:  # type: ignore[arg-type]
        few = [kept(None, None) for _ in range(Replayer.ROUND_MIN - 1)]  # type: ignore[arg-type]
        replayer.start(few)
        assert replayer.finish() == [] and base.rounds == []  # too few for a round: they wait
        replayer.start([kept(None, None)])  # type: ignore[arg-type]
        round_one = replayer.finish()
        assert len(round_one) == Replayer.ROUND_MIN and base.rounds == head.rounds == [Replayer.ROUND_MIN]
        assert all(k.replayed_base is not None and k.replayed_head is not None for k in round_one)
        replayer.start([kept(None, None), kept(None, None)])  # type: ignore[arg-type]
        assert replayer.finish() == []
        replayer.start([], all_waiting=True)  # the explorer's last call: whatever waits
        assert len(replayer.finish()) == 2 and base.rounds == [Replayer.ROUND_MIN, 2]
        assert replayer.replayed == Replayer.ROUND_MIN + 2
