"""A NaN passed directly to calls is one object per sequence, as a variable a user passes twice:
containers and tuple comparison take an object as equal to itself, so code that compares by
`==` alone (a rewritten `__eq__`, a membership test by hand) behaves differently on NaN."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze, statuses_on_both_commits
from support.repos import RepoBuilder, make_pr

from difforacle.generator.findings.render import render_test
from difforacle.generator.oracle.compare import Mismatch
from difforacle.generator.worker.literals import SHARED_NAN

KEYS = '''\
class Keys:
    def __init__(self):
        self.keys = []

    def add(self, key: float) -> bool:
        """Adds a key not yet there; True if it was added."""
        if key in self.keys:
            return False
        self.keys.append(key)
        return True
'''
# head compares by == alone: the NaN already there is not found again
BY_EQUALITY = KEYS.replace("if key in self.keys:", "if any(k == key for k in self.keys):")


@pytest.mark.slow
def test_the_same_nan_twice_finds_a_membership_test_by_equality(builder: RepoBuilder, tmp_path) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/keys.py": KEYS}, {"pkg/keys.py": BY_EQUALITY})
    report = run_analyze(builder, max_sequences=600)
    # (not the minor ones: a configured `keys` that is no list fails with the interpreter's wording)
    found = [d for d in report.differences if d.target == "pkg.keys:Keys.add" and d.severity != "minor"]
    assert found, [d.target for d in report.differences]
    difference = found[0]
    assert difference.reproduced
    assert 'nan = float("nan")' in difference.test
    assert statuses_on_both_commits(builder, difference.test, tmp_path) == (0, 1)


STATEMENTS = [{"op": "pkg.keys:Keys", "args": [], "kwargs": {}},
              {"op": "pkg.keys:Keys.add", "args": [{"ref": 0}, {"lit": SHARED_NAN}], "kwargs": {}},
              {"op": "pkg.keys:Keys.add", "args": [{"ref": 0}, {"lit": SHARED_NAN}], "kwargs": {}}]


def test_the_test_names_a_nan_passed_twice_once() -> None:
    mismatch = Mismatch("2/0", ["t", False], ["t", True])
    source = render_test(STATEMENTS, {}, mismatch, "test_add")
    assert source.count('float("nan")') == 1
    assert 'nan = float("nan")' in source and "keys.add(nan)" in source.replace("Keys().add", "keys.add")


def test_a_single_nan_stays_inline() -> None:
    mismatch = Mismatch("1/0", ["t", False], ["t", True])
    source = render_test(STATEMENTS[:2], {}, mismatch, "test_add")
    assert "nan = " not in source and 'float("nan")' in source
