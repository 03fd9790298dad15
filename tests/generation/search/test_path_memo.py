"""Tests for `difforacle.generator.generation.search.path_memo`, the path memo (JTestCraft's
Constraint Tree without a solver): paths through changed code counted, rare ones favoured and
often-seen ones discounted in the pools, near misses of untaken branches favoured and their
influence-search candidates run again; each sequence's path measured by the replay's coverage.
End to end: tests/end_to_end/test_path_memo.py."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from support.engine_parts import WITH_PATHS
from support.influence_samples import BY_ID, CATALOG, monitor_search

from difforacle.generator.changes.changed_lines import ChangedLines
from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.generation.generator import SequenceGenerator
from difforacle.generator.generation.pools import PoolEntry, Pools
from difforacle.generator.generation.replay import KeptSequence, Replayer
from difforacle.generator.generation.search.path_memo import FRONTIER_BOOST, MAX_RARITY, MemoPlugin, PathMemo
from difforacle.generator.generation.techniques import Components
from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.worker.protocol import ExecutedLines, SequenceResult, Status

COMMON = frozenset({("head", "pkg/mod.py", 7, 8)})
RARE = frozenset({("head", "pkg/mod.py", 7, 9)})
ELSEWHERE = frozenset({("head", "pkg/mod.py", 12, 13)})



def _memo(*paths: frozenset) -> PathMemo:
    memo = PathMemo()
    for path in paths:
        memo.record(path)
    memo.refresh()
    return memo


# ---------------------------------------------------------------- counting and the discount


def test_paths_are_counted_and_a_rare_one_weighs_more_than_a_common_one() -> None:
    memo = _memo(*[COMMON] * 9, RARE)
    common, rare = memo.paths[COMMON], memo.paths[RARE]
    assert (common.count, rare.count) == (9, 1)
    assert (memo.stats.recorded, memo.stats.distinct, memo.stats.top_share) == (10, 2, 0.9)
    assert common.factor == pytest.approx(math.sqrt(5 / 9))  # the mean path is taken 5 times
    assert rare.factor == pytest.approx(math.sqrt(5))
    assert _memo(COMMON, RARE).paths[COMMON].factor == 1.0  # as often as the mean: unchanged


def test_a_very_rare_path_is_capped() -> None:
    memo = _memo(*[COMMON] * 200, RARE)
    assert memo.paths[RARE].factor == MAX_RARITY


def test_a_path_that_reached_a_line_with_an_untaken_branch_is_a_near_miss_until_it_is_taken() -> None:
    memo = PathMemo()
    memo.untaken({("head", "pkg/mod.py", 7, 9)})  # line 7 went to 8 so far, never to 9
    common, elsewhere = memo.record(COMMON), memo.record(ELSEWHERE)
    memo.refresh()
    assert common.frontier and not elsewhere.frontier
    assert (common.factor, elsewhere.factor) == (FRONTIER_BOOST, 1.0)
    assert memo.stats.near_misses == 1
    memo.untaken(set())  # some sequence took 7 -> 9
    memo.refresh()
    assert not common.frontier and common.factor == 1.0


def test_the_same_line_on_the_other_side_is_another_node() -> None:
    memo = PathMemo()
    memo.untaken({("base", "pkg/mod.py", 7, 9)})
    assert not memo.record(COMMON).frontier


# ---------------------------------------------------------------- the pools


def test_a_pooled_value_weighs_its_path_factor_and_is_picked_accordingly() -> None:
    memo = _memo(*[COMMON] * 9, RARE)
    pools = Pools(rng=random.Random(0))
    common, rare = PoolEntry(({"op": "a", "args": [], "kwargs": {}},), 0), PoolEntry(({"op": "b"},), 0)
    for entry in (common, rare):
        pools.add(entry, ["pkg.T"], None)
    assert common.weight() == rare.weight() == 1.0
    common.path, rare.path = memo.paths[COMMON], memo.paths[RARE]
    assert rare.weight() / common.weight() == pytest.approx(3.0)  # sqrt(9 / 1)
    rng = random.Random(1)
    for entry in (common, rare):
        entry.picks = 0
    pools.orienteering = False  # the discount holds without orienteering too
    picks = [pools.pick(["pkg.T"], rng) for _ in range(400)]
    assert picks.count(rare) > 2.5 * picks.count(common)


def test_the_generator_gives_its_pooled_values_their_measured_path() -> None:
    generator = SequenceGenerator(CATALOG, ValueGenerator(random.Random(0), Constants()), random.Random(0),
                                  {"pkg.mon:Monitor.warning"}, switches=WITH_PATHS.switches)
    monitor = [{"op": "pkg.mon:Monitor", "args": [], "kwargs": {}},
               {"op": "pkg.mon:Monitor.warning", "args": [{"ref": 0}], "kwargs": {}}]
    result = SequenceResult(Status.OK, {}, executed=2, hit=True,
                            types=[["pkg.mon.Monitor"], ["builtins.bool"]], reusable=[True, True],
                            digests={"1/0": "d0"}, fields=["pkg.mon.Monitor.enabled:0:False"])
    generator.feedback(monitor, result)
    [entry] = generator.pools.by_type["pkg.mon.Monitor"]
    assert entry.path is None  # not measured yet: its replay comes later
    generator.replayed([(monitor, COMMON)], lambda: {("head", "pkg/mod.py", 7, 9)})
    memo = generator.plugin(MemoPlugin)
    assert memo is not None
    assert entry.path is memo.memo.paths[COMMON] and entry.path.frontier
    generator.replayed([(monitor, RARE)], set)  # measured once: forgotten since
    elsewhere = [{"op": "pkg.mon:Monitor", "args": [], "kwargs": {}}]  # never entered changed code
    generator.feedback(elsewhere, SequenceResult(Status.OK, {}, executed=1, types=[["pkg.mon.Monitor"]]))
    generator.replayed([(elsewhere, frozenset())], set)  # replayed when everything is
    assert memo.memo.stats.recorded == 1


def test_without_the_component_nothing_is_recorded() -> None:
    generator = SequenceGenerator(CATALOG, ValueGenerator(random.Random(0), Constants()), random.Random(0),
                                  set(), switches=Components.without(["paths"]).switches)
    assert generator.plugin(MemoPlugin) is None
    generator.replayed([([], COMMON)], set)


def test_a_near_missing_candidate_of_influence_search_runs_again_next_but_not_forever() -> None:
    search = monitor_search()
    warning = BY_ID["pkg.mon:Monitor.warning"]
    first = next(b for b in (search.propose(warning) for _ in range(20)) if b is not None)
    assert search.revisit(first)
    assert search.propose(warning).operations == first.operations  # type: ignore[union-attr]
    assert search.revisit(first) and not search.revisit(first)  # at most twice


# ---------------------------------------------------------------- measuring paths

SOURCE = '''\
"""Module."""
LIMIT = 3


def f(x):
    # a comment
    if (x > LIMIT
            and x < 100):
        return 1
    return 0
'''


def _lines(tmp_path: Path) -> tuple[ChangedLines, str]:
    for side in ("base", "head"):
        (tmp_path / side / "pkg").mkdir(parents=True)
        (tmp_path / side / "pkg" / "mod.py").write_text(SOURCE)
    base = Checkout("base", "a" * 40, tmp_path / "base", (tmp_path / "base",))
    head = Checkout("head", "b" * 40, tmp_path / "head", (tmp_path / "head",))
    change = FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset(), frozenset({8}))
    return ChangedLines(ChangeSet("c" * 40, (change,), ()), base, head), str(tmp_path / "head" / "pkg/mod.py")


def test_the_branches_a_sequence_took_out_of_a_changed_statement_spanning_lines(tmp_path: Path) -> None:
    lines, head_file = _lines(tmp_path)
    assert lines.branching("head") == {head_file: [7, 8]} and lines.branching("base") == {}
    taken = lines.branches_taken("head", [(head_file, 8, 9), (head_file, 5, 7), ("/elsewhere.py", 7, 9)])
    assert taken == {("head", "pkg/mod.py", 7, 9)}  # the raw arc from the statement's second line


class _Worker:
    """Replays as a worker would: per sequence, the arcs of `paths`, on each process's last result."""

    def __init__(self, file: str, arcs: list[list], lost: int = -1) -> None:
        self.file, self.arcs, self.lost = file, arcs, lost
        self.asked: list[dict | None] = []

    def run(self, batch: list, seed: int, *, lines: bool, paths: dict | None = None,
            distances: bool = False) -> list[SequenceResult]:
        self.asked.append(paths)
        results = [SequenceResult(Status.OK, {}) for _ in batch]
        if self.lost >= 0:  # its process died here: the sequences before it lose their arcs too
            results[self.lost] = SequenceResult(Status.CRASH, {}, lost=True)
        reported = {position: [(self.file, a, b)] for position, (a, b) in enumerate(self.arcs)
                    if position > self.lost}
        results[-1].lines = ExecutedLines(paths=reported if paths else None)
        return results


def test_replay_gives_each_sequence_its_path_and_none_to_those_a_dead_process_ran(tmp_path: Path) -> None:
    lines, head_file = _lines(tmp_path)
    head = _Worker(head_file, [[7, 9], [8, 10], [7, 9]], lost=0)
    kept = [KeptSequence([{"op": str(i)}], SequenceResult(Status.OK, {})) for i in range(3)]
    with Replayer(_Worker(head_file, []), head, lines, paths=True) as replayer:  # type: ignore[arg-type]
        replayer.start(kept, all_waiting=True)
        replayer.finish()
    assert head.asked == [{head_file: [7, 8]}]
    assert [k.path for k in kept] == [None, frozenset({("head", "pkg/mod.py", 7, 10)}),
                                      frozenset({("head", "pkg/mod.py", 7, 9)})]


def test_replay_asks_for_no_paths_without_the_component(tmp_path: Path) -> None:
    lines, head_file = _lines(tmp_path)
    head = _Worker(head_file, [[7, 9]])
    kept = [KeptSequence([{"op": "f"}], SequenceResult(Status.OK, {}))]
    with Replayer(_Worker(head_file, []), head, lines) as replayer:  # type: ignore[arg-type]
        replayer.start(kept, all_waiting=True)
        replayer.finish()
    assert head.asked == [None] and kept[0].path is None

