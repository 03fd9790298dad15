"""FieldNovelty (`difforacle.generator.generation.field_novelty`): a sequence is new when it covers
at least one new field triple."""

from __future__ import annotations

from difforacle.generator.generation.field_novelty import FieldNovelty


def test_first_triples_are_new_and_repeats_are_not() -> None:
    novelty = FieldNovelty()
    assert novelty.add(["A.x|0|int:1", "$result|-|A#0"])
    assert not novelty.add(["$result|-|A#0", "A.x|0|int:1"])
    assert not novelty.add(["A.x|0|int:1"])  # a subset of what was covered
    assert novelty.add(["A.x|0|int:1", "A.y|0|None"])  # one new triple is enough
    assert len(novelty) == 3 and "A.y|0|None" in novelty
    assert (novelty.added, novelty.redundant) == (2, 2)


def test_empty_triples_are_never_new() -> None:
    novelty = FieldNovelty()
    assert not novelty.add([])
    assert not novelty.add(iter(()))
    assert len(novelty.seen) == 0


def test_field_sizes_count_distinct_triples_per_field() -> None:
    novelty = FieldNovelty()
    novelty.add(["N.left|0|N#1", "N.left|1|None", "N.right|0|None", "$result|-|N#0"])
    novelty.add(["N.left|0|N#1", "N.left|0|None"])
    assert novelty.field_sizes() == {"$result": 1, "N.left": 3, "N.right": 1}
