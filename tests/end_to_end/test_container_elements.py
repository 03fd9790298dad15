"""Containers are made of their annotated element types: `list[tuple]` is a list of item pairs,
whose keys are now and then unhashable, so a bulk update that fails midway is reached."""

from __future__ import annotations

import random

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

from difforacle.generator.generation.values.constants import Constants
from difforacle.generator.generation.values.primitives import ValueGenerator
from difforacle.generator.runtime.catalog import Parameter
from difforacle.generator.worker.literals import decode

TABLE = '''\
class Table:
    def __init__(self):
        self.data = {}

    def update(self, items: list[tuple]) -> int:
        """Adds every (key, value) item, or none: a failing item undoes the whole update."""
        before = dict(self.data)
        try:
            for key, value in items:
                self.data[key] = value
        except TypeError:
            self.data = before
            raise
        return len(self.data)
'''
NO_ROLLBACK = TABLE.replace("            self.data = before\n", "")


@pytest.mark.slow
def test_a_bulk_update_failing_on_an_unhashable_key_midway(builder: RepoBuilder) -> None:
    make_pr(builder, {"pkg/__init__.py": "", "pkg/table.py": TABLE}, {"pkg/table.py": NO_ROLLBACK})
    report = run_analyze(builder, max_sequences=400)
    found = [d for d in report.differences if d.target == "pkg.table:Table.update"]
    assert found, [d.target for d in report.differences]
    assert found[0].reproduced and "pytest.raises(TypeError" in found[0].test


def test_the_catalogs_element_types_reach_the_parameter() -> None:
    param = Parameter.from_json({"name": "items", "kind": "POSITIONAL_OR_KEYWORD", "has_default": False,
                                 "hints": ["builtins.list"],
                                 "elements": {"builtins.list": [["builtins.tuple"]]}})
    assert param.elements_of("builtins.list") == (("builtins.tuple",),)
    assert param.elements_of("builtins.dict") == ()


def test_containers_of_known_element_types() -> None:
    values = ValueGenerator(random.Random(2), Constants())
    pairs = [decode(values.make("builtins.list", (("builtins.tuple",),))) for _ in range(300)]
    items = [item for made in pairs for item in made]
    assert all(isinstance(item, tuple) for item in items)
    assert sum(len(item) == 2 for item in items) > len(items) / 2  # mostly (key, value) pairs
    assert any(isinstance(item[0], list) for item in items if item)  # now and then an unhashable key
    mapping = decode(values.make("builtins.dict", (("builtins.str",), ("builtins.int",))))
    assert all(isinstance(k, str) and isinstance(v, int) for k, v in mapping.items())
    fixed = decode(values.make("builtins.tuple", (("builtins.str",), ("builtins.int",))))
    assert isinstance(fixed[0], str) and isinstance(fixed[1], int)
    for _ in range(200):  # set elements stay hashable
        decode(values.make("builtins.set", (("builtins.list",),)))
