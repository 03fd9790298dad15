"""Structured strings end to end: the format specifications drawn for `format()` reach a changed
`__format__` that only a specification with grouping shows; without them, no such difference."""

from __future__ import annotations

import re

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components

MONEY = '''\
class Money(int):
    def __new__(cls, cents: int) -> "Money":
        return super().__new__(cls, cents)
'''
MONEY_HEAD = MONEY + '''
    def __format__(self, spec: str) -> str:
        return format(int(self), spec.replace(chr(44), chr(95)))  # the grouping character, changed
'''


@pytest.mark.slow
def test_a_format_spec_with_grouping_reaches_the_change(builder: RepoBuilder) -> None:
    make_pr(builder, {"bank/__init__.py": "", "bank/money.py": MONEY}, {"bank/money.py": MONEY_HEAD})
    with_specs = run_analyze(builder, max_sequences=400, components=Components.without(["constants"]))
    found = [d for d in with_specs.differences if d.target == "bank.money:Money.__format__"]
    # the money, or a user's subclass of it (`my_money`), formatted with a grouping comma
    assert any(re.search(r'format\((my_)?money, "[^"]*,', d.test) for d in found), [d.test for d in found]
    without = run_analyze(builder, max_sequences=400,
                          components=Components.without(["constants", "structured"]))
    # (what remains is the minor one: int's own error message names `int` on head, `Money` on base)
    assert not [d for d in without.differences
                if d.target == "bank.money:Money.__format__" and d.severity != "minor"]
