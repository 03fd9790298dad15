"""Volume: a change that shows only past a cache's size, which no sequence of a dozen calls
reaches, is shown by one operation called once past the size, with distinct inputs."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.techniques import Components
from difforacle.generator.report.model import Verdict

MEMO = '''\
LIMIT = 256


class Memo:
    """Remembers values by key, the LIMIT newest of them: the oldest is forgotten first."""

    def __init__(self) -> None:
        self._entries: dict = {}

    def put(self, key: str, value: int) -> None:
        self._entries[key] = value
        if len(self._entries) > LIMIT:
            self._entries.pop(next(iter(self._entries)))

    def count(self) -> int:
        return len(self._entries)
'''
# head forgets everything when it is full: only the 257th distinct key shows it
MEMO_HEAD = MEMO.replace("self._entries.pop(next(iter(self._entries)))", "self._entries.clear()")


@pytest.mark.slow
def test_a_change_past_a_cache_size_is_shown_by_a_volume_call(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/memo.py": MEMO}, {"pkg/memo.py": MEMO_HEAD})
    volume = Components.without([], ["volume"])  # off by default
    report = run_analyze(builder, budget=20.0, max_sequences=300, components=volume)
    assert report.stats.techniques["volume"] == {"operations": 1}  # put; count and the constructor keep none
    shown = [d for d in report.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES]
    assert shown and all(d.target == "pkg.memo:Memo.put" for d in shown), [d.target for d in shown]
    # the test repeats the worker's calls: distinct keys, past the size
    assert all(" for i in range(" in d.test and "str(i)" in d.test for d in shown), [d.test for d in shown]
    without = run_analyze(builder, budget=20.0, max_sequences=300)
    assert [d for d in without.differences if d.verdict != Verdict.OUTSIDE_DECLARED_TYPES] == []
    assert "volume" not in without.stats.techniques
