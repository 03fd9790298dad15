"""Tests for `difforacle.generator.generation.search.influence_check`: JTestCraft's dynamic influence
check (§4.4.1), the verdicts of its Table 4.4 on recorded reads and writes."""

from __future__ import annotations

import pytest
from support.influence_samples import calls_on

from difforacle.generator.generation.search.influence_check import check_influence


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
    statements = [{"op": "C", "args": [], "kwargs": {}}, *calls_on(0, 3)]
    verdict = check_influence(statements, [1, 2], {"reads": reads, "writes": writes}, [])
    assert verdict.checked and (verdict.redundant, verdict.dead) == (redundant, dead)


def test_a_returned_value_used_by_the_method_under_test_influences_it() -> None:
    statements = [{"op": "make", "args": [], "kwargs": {}}, {"op": "C", "args": [], "kwargs": {}},
                  {"op": "m", "args": [{"ref": 1}, {"ref": 0}], "kwargs": {}}]
    facts = {"reads": {"2": []}, "writes": {"1": ["a"]}}
    assert check_influence(statements, [0, 1], facts, [["pkg.R"], ["pkg.C"]]).redundant == ()
    assert check_influence(statements, [0, 1], facts, [["builtins.NoneType"], ["pkg.C"]]).redundant == (0,)


def test_without_facts_nothing_is_judged() -> None:
    statements = [{"op": "C", "args": [], "kwargs": {}}, *calls_on(0, 1)]
    assert not check_influence(statements, [0], None, []).checked
