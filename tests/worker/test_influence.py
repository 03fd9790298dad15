"""Tests for `difforacle.generator.worker.influence`: the worker's record of the fields each call
read and wrote on the receiver, as the influence check reads it."""

from __future__ import annotations

from support.influence_samples import calls_on

from difforacle.generator.generation.search.influence_check import check_influence
from difforacle.generator.worker.influence import InfluenceRecorder


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
    statements = [{"op": "C", "args": [], "kwargs": {}}, *calls_on(0, 4)]
    verdict = check_influence(statements, [0, 1, 2, 3], facts, [["Counter"]] + [["builtins.NoneType"]] * 4)
    assert verdict.redundant == (2, 3) and verdict.dead == (2,)  # rename: dead; same(): changed nothing


def test_an_object_without_a_dictionary_cannot_be_traced() -> None:
    recorder = InfluenceRecorder({"receiver": 0, "calls": []})
    values: list = [3]
    recorder.around(1, 1, values, lambda: values[0] + 1)
    assert recorder.record() is None
