"""Tests for `difforacle.generator.generation.search.divergence`, divergence-directed search: what a
search may move in a sequence, the alternating variable method's moves a generation at a time, and
the plugin that starts searches from the sequences that come closest to a changed condition and
proposes their steps. End to end: tests/end_to_end/test_divergence.py."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange
from difforacle.generator.generation.search.divergence import (
    DivergencePlugin,
    Variable,
    alternating_variables,
    changed_conditions,
    variables,
)
from difforacle.generator.worker.protocol import SequenceResult, Status

FEE = "pkg.fees:fee"
SITE = "base:/c/pkg/fees.py:3:7"
HEAD_SITE = "head:/c/pkg/fees.py:3:7"


def _call(*literals: list, **keywords: list) -> list[dict]:
    return [{"op": FEE, "args": [{"lit": lit} for lit in literals],
             "kwargs": {name: {"lit": lit} for name, lit in keywords.items()}}]


def _quantity(statements: list[dict]) -> int:
    return statements[0]["args"][0]["lit"][1]


def _fee_distance(statements: list[dict]) -> float:
    """The branch distance of `quantity * 3 >= 22020`: zero at 7340."""
    return float(abs(_quantity(statements) * 3 - 22020))


def test_numbers_lengths_and_numbers_written_in_texts_are_what_a_search_moves() -> None:
    statements = _call(["int", 5], ["float", "0.5"], ["str", "09:05"], ["bool", True], ["none"],
                       ["list", [["int", 1]]], ["bytes", "6162"], unit=["str", "s"])
    assert [(v.place, v.axis) for v in variables(statements)] == [
        (0, "value"), (1, "float"), (2, "length"), (2, "digits0"), (2, "digits1"),
        *((2, f"at{k}") for k in range(5)), (5, "length"), (6, "length"), ("unit", "length"), ("unit", "at0")]
    long = _call(["str", "x" * 100])
    assert [v.axis for v in variables(long)][-3:] == ["at90", "at93", "at96"]  # 32 places spread


def test_a_move_changes_one_literal_of_a_copy() -> None:
    statements = _call(["int", 5], ["str", "09:05"], ["list", [["int", 1]]], ["bytes", "6162"])
    assert _quantity(Variable(0, 0, "value").moved(statements, 4)) == 9
    assert Variable(0, 1, "digits1").moved(statements, 1)[0]["args"][1]["lit"] == ["str", "09:06"]
    assert Variable(0, 1, "length").moved(statements, 2)[0]["args"][1]["lit"] == ["str", "09:0555"]
    assert Variable(0, 1, "at3").moved(statements, 2)[0]["args"][1]["lit"] == ["str", "09:0005"]
    assert Variable(0, 1, "at1").moved(statements, -2)[0]["args"][1]["lit"] == ["str", "005"]
    assert Variable(0, 2, "length").moved(statements, 1)[0]["args"][2]["lit"] == ["list", [["int", 1]] * 2]
    assert Variable(0, 3, "length").moved(statements, -1)[0]["args"][3]["lit"] == ["bytes", "61"]
    assert _quantity(statements) == 5  # the original is left as it was


def test_a_move_that_cannot_be_made_is_none() -> None:
    statements = _call(["str", "ab"], ["str", "00"])
    assert Variable(0, 0, "length").moved(statements, -3) is None  # shorter than empty
    assert Variable(0, 1, "digits0").moved(statements, -1) is None  # below zero
    assert Variable(0, 1, "digits1").moved(statements, 1) is None  # no second number
    assert Variable(0, 0, "at1").moved(statements, -2) is None  # past the end


def _walk(start: list[dict], fitness) -> tuple[float, int]:
    """Run a search to its end with `fitness` as the replay: the least distance and generations."""
    search = alternating_variables(start, fitness(start))
    best, generations = fitness(start), 0
    try:
        generation = next(search)
        while True:
            generations += 1
            found = [fitness(step) for step in generation]
            best = min(best, *found)
            generation = search.send(found)
    except StopIteration:
        return best, generations


def test_the_search_reaches_a_linear_boundary_in_a_few_generations() -> None:
    best, generations = _walk(_call(["int", 5]), _fee_distance)
    assert best == 0 and generations <= 4  # exploratory, then the secant step lands on it


def test_the_search_reaches_a_boundary_the_secant_step_misses_by_doubling() -> None:
    def stepped(statements: list[dict]) -> float:  # falls in stairs: the secant overshoots
        return float(abs(_quantity(statements) // 10 - 734))

    best, generations = _walk(_call(["int", 5]), stepped)
    assert best == 0 and generations <= 12


def test_the_search_ends_where_no_move_comes_closer() -> None:
    def unreachable(statements: list[dict]) -> float:  # 9 * x never equals 22020: 3 is the least
        return float(abs(9 * _quantity(statements) - 22020))

    best, generations = _walk(_call(["int", 5]), unreachable)
    assert best == 3 and generations <= 8


_PLATEAU_SCRIPT = """
from difforacle.generator.generation.search.divergence import alternating_variables
start = [{"op": "pkg.fees:fee", "args": [{"lit": ["int", 5]}, {"lit": ["str", "ab"]}],
          "kwargs": {"unit": {"lit": ["str", "s"]}, "tag": {"lit": ["str", "xy"]}}}]
search = alternating_variables(start, 10.0)
next(search)
exploratory = search.gi_frame.f_locals["exploratory"]
print(repr(search.send([10.0] * len(exploratory))))  # a plateau: every move as far as the start
"""


def test_the_moves_off_a_plateau_do_not_depend_on_the_hash_seed() -> None:
    # the variables level with the start are moved in their order in the sequence, not in a set's
    # order, which follows the interpreter's hash seed (and would make `--max-sequences` runs differ)
    runs = {subprocess.run([sys.executable, "-c", _PLATEAU_SCRIPT], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "3")}
    assert len(runs) == 1 and runs.pop().count("pkg.fees:fee") > 8


def test_the_search_empties_a_name_inside_a_text_by_dropping_its_characters() -> None:
    def name_length(statements: list[dict]) -> float:  # `not name.strip()` in a parser of "[name]"
        text = statements[0]["args"][0]["lit"][1]
        if not (text.startswith("[") and "]" in text):
            return math.inf  # the parser stops before the condition
        return float(len(text[1:text.index("]")].strip()))

    best, generations = _walk(_call(["str", "[server]\nport = 80\n"]), name_length)
    assert best == 0 and generations <= 8


def _plugin() -> DivergencePlugin:
    return DivergencePlugin(random.Random(0).random, frozenset({FEE}))


FOCUS = SimpleNamespace(id=FEE)
OK = SequenceResult(Status.OK, {}, hit=True)


def _replay_proposals(plugin: DivergencePlugin, fitness, rounds: int = 50) -> list[list[dict]]:
    """Propose and replay, a round at a time, as exploration would; every step proposed."""
    proposed = []
    for _ in range(rounds):
        batch = [step.statements for _ in range(60) if (step := plugin.propose(FOCUS)) is not None]
        for statements in batch:
            plugin.proposal_ran(SimpleNamespace(statements=statements), OK)
        proposed += batch
        plugin.distances([(s, fitness(s)) for s in batch])
    return proposed


def test_the_plugin_searches_from_the_closest_sequence_and_reaches_the_boundary() -> None:
    plugin = _plugin()
    start = _call(["int", 5])
    plugin.distances([(start, {SITE: _fee_distance(start)})])
    proposed = _replay_proposals(plugin, lambda s: {SITE: _fee_distance(s)})
    assert any(_quantity(s) == 7340 for s in proposed)
    assert plugin.stats.searches == 1 and plugin.stats.boundaries >= 1
    assert plugin.least[SITE] == 0 and plugin.stats.conditions == plugin.stats.met == 1
    assert plugin.propose(FOCUS) is None  # the boundary was reached: nothing more to search


def test_early_stopping_waits_while_a_search_is_under_way_and_while_distances_fall() -> None:
    plugin = _plugin()
    assert plugin.found() == 0 and not plugin.searching()
    start = _call(["int", 5])
    plugin.distances([(start, {SITE: _fee_distance(start)})])
    assert plugin.found() == 1 and plugin.searching()  # a point waiting to start a search
    _replay_proposals(plugin, lambda s: {SITE: _fee_distance(s)})
    assert plugin.found() > 1  # the search came closer, step by step
    assert not plugin.searching()  # the boundary was met: nothing left to search
    found = plugin.found()
    plugin.distances([(start, {SITE: _fee_distance(start)})])  # no closer than before
    assert plugin.found() == found


def test_the_searches_of_one_comparisons_two_sides_run_each_step_once() -> None:
    plugin = _plugin()
    start = _call(["int", 5])

    def both(statements: list[dict]) -> dict[str, float]:  # head's boundary one further: `>` for `>=`
        return {SITE: _fee_distance(statements), HEAD_SITE: float(abs(_quantity(statements) * 3 - 22023))}

    plugin.distances([(start, both(start))])
    proposed = _replay_proposals(plugin, both)
    keys = [repr(s) for s in proposed]
    assert len(keys) == len(set(keys))
    assert plugin.stats.searches == 2 and plugin.least == {SITE: 0, HEAD_SITE: 0}


def test_a_step_that_never_enters_changed_code_counts_as_no_closer() -> None:
    plugin = _plugin()
    start = _call(["int", 5])
    plugin.distances([(start, {SITE: _fee_distance(start)})])
    step = plugin.propose(FOCUS) or plugin.propose(FOCUS) or plugin.propose(FOCUS)
    assert step is not None
    plugin.proposal_ran(step, SequenceResult(Status.OK, {}, hit=False))
    assert not any(step.statements is s for _, s in plugin.proposed.values())


def test_only_picks_of_focus_operations_carry_steps() -> None:
    plugin = _plugin()
    start = _call(["int", 5])
    plugin.distances([(start, {SITE: 100.0})])
    assert all(plugin.propose(SimpleNamespace(id="pkg.other:f")) is None for _ in range(20))


def test_a_search_ends_after_its_steps_with_its_last_generation_cut_short(monkeypatch) -> None:
    from difforacle.generator.generation.search import divergence

    monkeypatch.setattr(divergence, "MAX_STEPS", 10)  # the pattern generation is longer than what is left
    plugin = _plugin()
    start = _call(["int", 5])
    plugin.distances([(start, {SITE: _fee_distance(start)})])
    proposed = _replay_proposals(plugin, lambda s: {SITE: _fee_distance(s)})
    assert plugin.stats.searches == 3 and len(proposed) == 30 and not plugin.under_way  # 10 each


BASE_MODULE = "TABLE = {\n    'a': 1,\n    'b': 2,\n}\n\n\ndef f(n):\n    return n\n"


@pytest.mark.parametrize(("old", "new", "measured"), [
    ("    'b': 2,", "    'b': 3,", False),  # a table's entry
    ("    return n", "    return 'x' + str(n)", False),  # a computation
    ("    return n", "    return n == 2 and 'x'", True),
    ("    return n", "    return 1 if n else 2", True),
    ("    return n", "    if n > 2:\n        return n", True),
    ("    return n", "    while not n:\n        n += 1", True),
])
def test_the_workers_rewrite_only_when_a_changed_line_holds_a_condition(tmp_path: Path, old: str, new: str,
                                                                      measured: bool) -> None:
    head_text = BASE_MODULE.replace(old, new)
    first = head_text.splitlines().index(new.splitlines()[0]) + 1
    sides = []
    for side, text in (("base", BASE_MODULE), ("head", head_text)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "mod.py").write_text(text, encoding="utf-8")
        sides.append(Checkout(side, side[0] * 40, tmp_path / side, (tmp_path / side,)))
    lines = frozenset(range(first, first + new.count("\n") + 1))
    change = FileChange("mod.py", "mod.py", "mod", frozenset(), lines)
    assert changed_conditions(ChangeSet("m" * 40, (change,), ()), *sides) is measured
