"""Changed code of a private module that nothing in its module calls is reached through the
modules that import it (`changes.importers`), and its difference is reported on its own line."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

BASE = '''\
class Store:
    def __init__(self):
        self.items = {}

    def _add_all(self, pairs):
        for key, value in pairs:
            self.items[key] = value
        return len(self.items)
'''
PUBLIC = '''\
from ._base import Store


class Shelf(Store):
    def stock(self, key: int, value: int) -> int:
        return self._add_all([(key, value)])
'''


@pytest.mark.slow
def test_changed_code_of_a_private_module_reached_through_an_importer(builder: RepoBuilder) -> None:
    """`_add_all` is private and nothing in its module calls it: only `Shelf.stock`, in the module
    that imports it, reaches it."""
    files = {"pkg/__init__.py": "", "pkg/_base.py": BASE, "pkg/shelf.py": PUBLIC}
    changed = BASE.replace("self.items[key] = value", "self.items[key] = value + 1")
    make_pr(builder, files, {"pkg/_base.py": changed})
    report = run_analyze(builder, max_sequences=300)
    found = {(d.target, d.path, d.line) for d in report.differences}
    assert found == {("pkg.shelf:Shelf.stock", "pkg/_base.py", 7)}
    assert all(d.reproduced for d in report.differences)
    assert report.coverage.changed_lines_covered == report.coverage.changed_lines
