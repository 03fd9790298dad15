"""Tests for `difforacle.generator.changes.units`: the merge-base..head diff mapped onto modules and
AST units."""

from __future__ import annotations

import pytest
from support.repos import RepoBuilder

from difforacle.generator.changes.checkout import checkouts
from difforacle.generator.changes.model import ChangeSet, FileChange, Unit
from difforacle.generator.changes.units import compute_changes, is_test_code, parse_spans
from difforacle.generator.errors import SetupError

MOD = """\
import os

LIMIT = 3


def parse(text):
    return text.split()


class Cache:
    size = 10

    def get(self, key):
        return key

    def put(self, key, value):
        def helper():
            return value
        return helper()
"""


def _changes(builder: RepoBuilder, base: str = "main", head: str = "feature") -> ChangeSet:
    with checkouts(builder.repo, base, head) as (base_co, head_co):
        return compute_changes(builder.repo, base_co.sha, head_co.sha, base_co, head_co)


Files = dict[str, str | bytes | None]


def _pr(builder: RepoBuilder, before: Files, after: Files) -> ChangeSet:
    """Commit `before` on main, `after` on a feature branch, and diff them."""
    builder.commit(before, "base")
    builder.branch("feature")
    builder.commit(after, "pull request")
    return _changes(builder)


def _edit(old: str, new: str) -> Files:
    """MOD with one replacement, for pkg/mod.py."""
    assert old in MOD
    return {"pkg/mod.py": MOD.replace(old, new)}


def _mod_unit(qualname: str, kind: str, status: str, start: int, end: int, path: str = "pkg/mod.py") -> Unit:
    return Unit("pkg.mod", qualname, kind, status, path, start, end)  # type: ignore[arg-type]


BASE = {"pkg/__init__.py": "", "pkg/mod.py": MOD}


# ---------------------------------------------------------------- units within a file


def test_modified_function(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, _edit("text.split()", "text.split(',')"))
    assert changes.units == (_mod_unit("parse", "function", "modified", 6, 7),)
    assert changes.files == (
        FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset({7}), frozenset({7})),
    )
    assert changes.modules == ("pkg.mod",)
    assert changes.skipped == ()
    assert changes.merge_base == builder.repo.commit("main").hexsha


def test_modified_method_includes_nested_functions(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, _edit("return value", "return key"))
    assert changes.units == (_mod_unit("Cache.put", "method", "modified", 16, 19),)


def test_added_and_removed_functions(builder: RepoBuilder) -> None:
    after = MOD.replace("def parse(text):\n    return text.split()\n\n\n", "")
    after += "\n\ndef emit(x):\n    return x\n"  # the blank lines belong to no unit
    changes = _pr(builder, BASE, {"pkg/mod.py": after})
    assert changes.units == (
        _mod_unit("parse", "function", "removed", 6, 7),
        _mod_unit("emit", "function", "added", 18, 19),
    )


def test_class_attribute_change_is_a_class_unit(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, _edit("size = 10", "size = 20"))
    assert changes.units == (_mod_unit("Cache", "class", "modified", 10, 19),)


def test_module_level_change(builder: RepoBuilder) -> None:
    before = MOD + '\n__all__ = [\n    "parse",\n]\n'
    after = MOD.replace("LIMIT = 3", "LIMIT = 4") + '\n__all__ = [\n    "Cache",\n]\n'
    changes = _pr(builder, {**BASE, "pkg/mod.py": before}, {"pkg/mod.py": after})
    assert changes.units == (_mod_unit("<module>", "module", "modified", 3, 23),)
    assert changes.files[0].head_lines == {3, 22}


def test_decorator_change_belongs_to_the_function(builder: RepoBuilder) -> None:
    before = MOD.replace("def parse", "@functools.cache\ndef parse")
    after = MOD.replace("def parse", "@functools.lru_cache(2)\ndef parse")
    changes = _pr(builder, {**BASE, "pkg/mod.py": before}, {"pkg/mod.py": after})
    assert changes.units == (_mod_unit("parse", "function", "modified", 6, 8),)


def test_deletion_only_change_is_reported_on_head(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, _edit("        def helper():\n            return value\n", ""))
    assert changes.files[0].base_lines == {17, 18}
    assert changes.files[0].head_lines == frozenset()
    assert changes.units == (_mod_unit("Cache.put", "method", "modified", 16, 17),)


def test_conditional_definitions_and_property_setters(builder: RepoBuilder) -> None:
    before = (
        "import sys\n"
        "if sys.platform == 'win32':\n"
        "    def sep():\n"
        "        return '\\\\'\n"
        "class Box:\n"
        "    @property\n"
        "    def v(self):\n"
        "        return 1\n"
        "    @v.setter\n"
        "    def v(self, value):\n"
        "        pass\n"
    )
    after = before.replace("'\\\\'", "'/'").replace("pass", "self.x = value")
    changes = _pr(builder, {**BASE, "pkg/mod.py": before}, {"pkg/mod.py": after})
    assert changes.units == (
        _mod_unit("sep", "function", "modified", 3, 4),
        _mod_unit("Box.v", "method", "modified", 9, 11),
    )


# ---------------------------------------------------------------- whole files


def test_renamed_file_uses_the_head_module(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, {"pkg/mod.py": None, "pkg/parsing.py": MOD.replace("text.split()", "text")})
    assert changes.files == (
        FileChange("pkg/mod.py", "pkg/parsing.py", "pkg.parsing", frozenset({7}), frozenset({7})),
    )
    assert changes.units == (Unit("pkg.parsing", "parse", "function", "modified", "pkg/parsing.py", 6, 7),)


def test_deleted_file_removes_all_units(builder: RepoBuilder) -> None:
    extra = "X = 1\n\n\ndef f():\n    return X\n"
    changes = _pr(builder, {**BASE, "pkg/extra.py": extra}, {"pkg/extra.py": None})
    assert changes.files == (
        FileChange("pkg/extra.py", None, "pkg.extra", frozenset(range(1, 6)), frozenset()),
    )
    assert changes.units == (
        Unit("pkg.extra", "<module>", "module", "removed", "pkg/extra.py", 1, 1),
        Unit("pkg.extra", "f", "function", "removed", "pkg/extra.py", 4, 5),
    )


def test_added_file_adds_all_units(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, {"pkg/extra.py": "class K:\n    def m(self):\n        return 1\n"})
    assert changes.files == (
        FileChange(None, "pkg/extra.py", "pkg.extra", frozenset(), frozenset({1, 2, 3})),
    )
    assert changes.units == (
        Unit("pkg.extra", "K", "class", "added", "pkg/extra.py", 1, 3),
        Unit("pkg.extra", "K.m", "method", "added", "pkg/extra.py", 2, 3),
    )


def test_non_python_binary_and_non_importable_files_are_skipped(builder: RepoBuilder) -> None:
    before = {**BASE, "README.md": "hi\n", "tests/test_mod.py": "def test(): pass\n"}
    after = {"README.md": "hello\n", "data.bin": b"\x00\x01\x02", "tests/test_mod.py": "def test(): 1\n"}
    changes = _pr(builder, before, after)
    assert changes.files == ()
    assert changes.units == ()
    assert changes.skipped == (
        "README.md: not a Python file",
        "data.bin: binary file",
        "tests/test_mod.py: outside the import roots (tests, scripts or not importable)",
    )


def test_syntax_error_on_head_is_one_module_unit(builder: RepoBuilder) -> None:
    changes = _pr(builder, BASE, _edit("def parse(text):", "def parse(text:"))
    assert changes.units == (
        _mod_unit("<module>", "module", "modified", 1, 19),
        _mod_unit("parse", "function", "removed", 6, 7),  # it exists on base only: head cannot define it
    )


def test_src_layout_module_names(builder: RepoBuilder) -> None:
    before = {"src/pkg/__init__.py": "", "src/pkg/mod.py": MOD}
    changes = _pr(builder, before, {"src/pkg/mod.py": MOD.replace("LIMIT = 3", "LIMIT = 5")})
    assert changes.units == (_mod_unit("<module>", "module", "modified", 3, 3, path="src/pkg/mod.py"),)


# ---------------------------------------------------------------- history


def test_base_branch_advanced_after_the_fork(builder: RepoBuilder) -> None:
    fork = builder.commit(BASE, "base")
    builder.branch("feature")
    builder.commit(_edit("    size = 10\n", ""), "pull request")
    builder.switch("main")
    builder.commit({"pkg/mod.py": "# moved\n" * 5 + MOD, "pkg/other.py": "y = 1\n"}, "main moved on")

    changes = _changes(builder)

    assert changes.merge_base == fork
    # base line 11 is the merge base's `size = 10`, not base's (shifted) `def parse`
    assert changes.files == (FileChange("pkg/mod.py", "pkg/mod.py", "pkg.mod", frozenset({11}), frozenset()),)
    assert changes.units == (_mod_unit("Cache", "class", "modified", 10, 18),)


def test_unrelated_histories_have_no_merge_base(builder: RepoBuilder) -> None:
    builder.commit(BASE, "base")
    builder.repo.git.checkout("-q", "--orphan", "feature")
    builder.commit({"other.py": "x = 1\n"}, "unrelated")
    with pytest.raises(SetupError, match="have no merge base"):
        _changes(builder)


# ---------------------------------------------------------------- layout-only changes


def test_comment_and_formatting_changes_are_skipped_as_layout_only(builder: RepoBuilder) -> None:
    reformatted = MOD.replace("text.split()", "text.split(  )  # split on whitespace")
    changes = _pr(builder, BASE, {"pkg/mod.py": "# a new comment\n" + reformatted})
    assert changes.units == ()
    assert changes.files == ()
    assert changes.modules == ()
    assert changes.skipped == (
        "pkg/mod.py: comments or layout only (same syntax tree): behaviour cannot differ",)


def test_docstring_change_is_not_layout_only(builder: RepoBuilder) -> None:
    """Docstrings are values (`__doc__`), so editing one is a change to look at."""
    changes = _pr(builder, BASE, {"pkg/mod.py": '"""Edited module docstring."""\n' + MOD})
    assert changes.modules == ("pkg.mod",)
    assert [u.qualname for u in changes.units] == ["<module>"]


def test_deeply_nested_expressions_do_not_stop_the_spans() -> None:
    """Generated tables nest expressions deeper than Python's recursion limit allows a recursive
    walk; the spans walk statements only (a history of such a file crashed `risk` and `diff`)."""
    deep = "x = 1" + " + 1" * 990 + "\n\n\ndef f():\n    return 1\n"
    assert [(s.qualname, s.start) for s in parse_spans(deep.encode()) or ()] == [("<module>", 1), ("f", 4)]
    too_deep = "x = 1" + " + 1" * 20000 + "\n"  # beyond what the parser itself takes: no spans, no crash
    assert parse_spans(too_deep.encode()) is None


def test_test_code_is_never_library_code_whatever_its_name(builder: RepoBuilder) -> None:
    """A module that imports pytest or defines unittest test cases holds tests, not behaviour."""
    unit_tests = ("import unittest\n\n\nclass ParseTests(unittest.TestCase):\n"
                  "    def test_a(self):\n        pass\n")
    fixtures = ("try:\n    import pytest\nexcept ImportError:\n    pytest = None\n\n\n"
                "def check():\n    return 1\n")
    before = {**BASE, "pkg/checks.py": unit_tests, "pkg/fixtures.py": fixtures, "test.py": "X = 1\n"}
    after = {"pkg/checks.py": unit_tests.replace("pass", "return 2"),
             "pkg/fixtures.py": fixtures.replace("1", "2"), "test.py": "X = 2\n"}
    changes = _pr(builder, before, after)
    assert changes.files == () and changes.units == ()
    assert changes.skipped == (
        "pkg/checks.py: test code (it imports pytest or defines unittest test cases): not library code",
        "pkg/fixtures.py: test code (it imports pytest or defines unittest test cases): not library code",
        "test.py: outside the import roots (tests, scripts or not importable)",
    )


@pytest.mark.parametrize(("source", "expected"), [
    (b"import pytest\n", True),
    (b"from pytest import raises\n", True),
    (b"from unittest import TestCase\nclass T(TestCase):\n    pass\n", True),
    (b"import unittest\nclass T(unittest.IsolatedAsyncioTestCase):\n    pass\n", True),
    (b"def helper():\n    import pytest\n", False),  # imported lazily by a library function
    (b"from .pytest import x\n", False),  # a module of the package that happens to be called so
    (b"class TestCase:\n    pass\n", False),  # defining a class of that name is not subclassing it
    (b"def broken(:\n", False),
    (None, False),
])
def test_what_counts_as_test_code(source: bytes | None, expected: bool) -> None:
    assert is_test_code(source) is expected
