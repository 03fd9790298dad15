"""The robustness script (benchmarks/robustness.py): which commits it runs on, and its table."""

from __future__ import annotations

import importlib.util
import sys

from support.paths import BENCHMARKS
from support.repos import RepoBuilder

SCRIPT = BENCHMARKS / "robustness.py"
_spec = importlib.util.spec_from_file_location("robustness", SCRIPT)
assert _spec is not None and _spec.loader is not None
robustness = importlib.util.module_from_spec(_spec)
sys.modules["robustness"] = robustness
_spec.loader.exec_module(robustness)


def test_the_newest_commits_that_change_the_packages_python(builder: RepoBuilder) -> None:
    first = builder.commit({"src/pkg/__init__.py": "", "src/pkg/sub/mod.py": "X = 1\n"})
    builder.commit({"README.md": "docs\n"})
    second = builder.commit({"src/pkg/sub/mod.py": "X = 2\n"})
    builder.commit({"tools/script.py": "Y = 1\n"})  # outside the packages
    third = builder.commit({"src/pkg/__init__.py": "Z = 3\n"})
    repository = robustness.Repository("o/pkg", "src", ("pkg",), (), "true")
    assert robustness.recent_commits(builder.root, repository, 5) == [third, second, first]
    assert robustness.recent_commits(builder.root, repository, 2) == [third, second]


def test_the_table_counts_exits_and_internal_errors() -> None:
    results = {"libraries": {"o/a": {"c1": {"exit": 0, "seconds": 10.0, "internal": False},
                                     "c2": {"exit": 2, "seconds": 2.0, "internal": True,
                                            "error": "difforacle: internal error: KeyError: 'obs'"}},
                             "o/b": {"c3": {"exit": 1, "seconds": 30.0, "internal": False}}}}
    table = robustness.summarize(results)
    assert "| o/a | 2 | 1 | 0 | 1 | 0 | 1 | 6.0 |" in table
    assert "| **all** | 3 | 1 | 1 | 1 | 0 | 1 | 10.0 |" in table
    assert "- o/a c2: exit 2: difforacle: internal error: KeyError: 'obs'" in table
