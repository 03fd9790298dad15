"""What a call that raised left behind is observed and compared: the state of its receiver and
arguments after the exception (a bulk update that rolls back, or does not, on failure)."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze, statuses_on_both_commits
from support.repos import RepoBuilder, make_pr

from difforacle.generator.findings.render import render_test
from difforacle.generator.oracle.compare import Mismatch, first_mismatch
from difforacle.generator.worker.protocol import SequenceResult

REGISTRY = '''\
class Registry:
    def __init__(self):
        self.counts = {}

    def add_all(self, values: list) -> int:
        """Counts every value, or none: a negative value fails the whole update."""
        before = dict(self.counts)
        try:
            for value in values:
                if value < 0:
                    raise ValueError("negative value")
                self.counts[value] = self.counts.get(value, 0) + 1
        except ValueError:
            self.counts = before
            raise
        return len(self.counts)
'''
# head forgets to roll back: the values before the failing one stay counted
NO_ROLLBACK = REGISTRY.replace("            self.counts = before\n", "")


@pytest.mark.slow
def test_a_failed_update_that_no_longer_rolls_back(builder: RepoBuilder, tmp_path) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/registry.py": REGISTRY}, {"pkg/registry.py": NO_ROLLBACK})
    report = run_analyze(builder, max_sequences=400)
    found = [d for d in report.differences if d.target == "pkg.registry:Registry.add_all"]
    assert found, [d.target for d in report.differences]
    difference = found[0]
    assert difference.kind == "state" and difference.reproduced
    assert "with pytest.raises(ValueError" in difference.test
    assert statuses_on_both_commits(builder, difference.test, tmp_path) == (0, 1)


def _result(observations: dict) -> SequenceResult:
    return SequenceResult.from_json({"status": "exception", "obs": observations, "n": 1, "hit": True})


STATEMENTS = [{"op": "pkg.registry:Registry", "args": [], "kwargs": {}},
              {"op": "pkg.registry:Registry.add_all",
               "args": [{"ref": 0}, {"lit": ["list", [["int", 1], ["int", -1]]]}],
               "kwargs": {}}]
FAILED = ["E", "ValueError", "negative value", "builtins", "raise"]


def test_the_mismatch_carries_the_exception_and_the_test_expects_it_first() -> None:
    common = {"0/0": ["T", "pkg.registry.Registry"], "1/!": FAILED, "1/0": ["T", "pkg.registry.Registry"]}
    base = _result({**common, "1/0.counts": ["dict", 0, []]})
    head = _result({**common, "1/0.counts": ["dict", 1, [1]], "1/0.counts[1]": ["i", 1]})
    mismatch = first_mismatch(base, head, set())
    assert mismatch is not None and mismatch.key == "1/0.counts" and mismatch.raised == FAILED
    source = render_test(STATEMENTS, {}, mismatch, "test_rollback")
    assert "with pytest.raises(ValueError, match=" in source
    assert source.index("registry.add_all(") < source.index("assert ")


def test_no_exception_is_expected_when_the_call_ended_on_one_side_only() -> None:
    base = _result({"0/0": ["T", "R"], "1/!": FAILED, "1/0.counts": ["dict", 0, []]})
    head = _result({"0/0": ["T", "R"], "1/1": ["i", 1], "1/0.counts": ["dict", 1, [1]]})
    mismatch = first_mismatch(base, head, set())
    assert isinstance(mismatch, Mismatch) and mismatch.key == "1/!" and mismatch.raised is None
