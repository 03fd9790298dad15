"""Asynchronous code: coroutines are awaited and asynchronous generators drained, in the worker and
in the rendered tests alike."""

from __future__ import annotations

import pytest
from support.analysis import differences_summary, run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Verdict

PRICES = '''\
class Basket:
    """A basket whose total is computed asynchronously (as if it asked a price service)."""

    def __init__(self, prices: list[int]) -> None:
        self.prices = prices

    async def total(self) -> int:
        return sum(self.prices)


async def discounted(total: int) -> int:
    return total - total // 10


async def instalments(total: int, months: int):
    for _ in range(months):
        yield total // months
'''
PRICES_HEAD = (PRICES.replace("return total - total // 10", "return total - total // 9")
               .replace("return sum(self.prices)", "return sum(self.prices[1:])")
               .replace("yield total // months", "yield -(-total // months)"))


@pytest.mark.slow
def test_asynchronous_differences_are_found_and_their_tests_await(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES}, {"pkg/prices.py": PRICES_HEAD})
    report = run_analyze(builder, budget=20.0, max_sequences=300)
    counted = [d for d in report.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    for target in ("pkg.prices:discounted", "pkg.prices:Basket.total", "pkg.prices:instalments"):
        found = [d for d in counted if d.target == target]
        assert found, (target, differences_summary(report))
        assert all("asyncio.run(" in d.test and d.reproduced is not False for d in found), found
    assert all("async def drained(" in d.test for d in counted if d.target == "pkg.prices:instalments")
    # total, discounted and instalments; not the constructor
    assert report.stats.techniques["asynchronous"] == {"operations": 3}


def test_without_the_technique_a_coroutine_is_an_object_nothing_runs(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/prices.py": PRICES}, {"pkg/prices.py": PRICES_HEAD})
    off = Components.without(["asynchronous"])
    report = run_analyze(builder, budget=20.0, max_sequences=300, components=off)
    assert not [d for d in report.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    assert "asynchronous" not in report.stats.techniques
