"""Tests for `difforacle.generator.changes.syntax`: one tree per large source text, and the tree
comparison that stops at the first difference."""

from __future__ import annotations

import ast

import pytest

from difforacle.generator.changes.syntax import LARGE_SOURCE, first_line, nodes_on, parse, parsed, same_tree

TABLE = "TABLE = {\n" + "".join(f"    'k{i}': {i},\n" for i in range(8000)) + "}\n"


def test_a_large_source_is_parsed_once_as_text_or_as_bytes() -> None:
    assert len(TABLE) >= LARGE_SOURCE
    tree = parse(TABLE)
    assert parse(TABLE) is tree and parse(TABLE.encode()) is tree  # one file, read either way
    assert parse("x = 1\n") is not parse("x = 1\n")  # a small one costs less than keeping it


def test_an_unparsable_source_is_none_or_raises() -> None:
    assert parsed(None) is None and parsed("def (:\n") is None and parsed(b"x = '\xff'\n") is None
    with pytest.raises(SyntaxError):
        parse("def (:\n")


@pytest.mark.parametrize(("base", "head", "same"), [
    ("x = 1  # one\n", "x = (\n    1\n)\n", True),  # comments and layout
    ("x = 1\n", "x = 2\n", False),
    ("x = 1\n", "x = 1.0\n", False),  # equal values of another type
    ("f(a, b)\n", "f(a)\n", False),
    ("def f():\n    return 1\n", "def f():\n    '''doc'''\n    return 1\n", False),
    ("x = [[1], [2]]\n", "x = [[1, 2], []]\n", False),  # the same nodes, under other parents
    ("global_ = None\ndef f():\n    global a, b\n", "global_ = None\ndef f():\n    global a, c\n", False),
    ("x: int = 1\n", "x: int\n", False),  # a node for nothing
])
def test_same_tree_agrees_with_comparing_the_dumps(base: str, head: str, same: bool) -> None:
    assert same_tree(ast.parse(base), ast.parse(head)) is same
    assert (ast.dump(ast.parse(base)) == ast.dump(ast.parse(head))) is same


def test_nodes_on_goes_only_where_the_lines_are() -> None:
    tree = ast.parse(TABLE)
    visited = list(nodes_on(tree, [5001]))  # the entry `'k4999': 4999,` on line 5001
    assert {n.value for n in visited if isinstance(n, ast.Constant)} == {"k4999", 4999}
    assert len(visited) < 10  # the module, the statement, the dict, the entry: not 16,000 constants


def test_the_first_line_of_a_decorated_definition_is_its_first_decorator() -> None:
    tree = ast.parse("@a\n@b(1)\ndef f():\n    pass\n")
    assert first_line(tree.body[0]) == 1 and tree.body[0].lineno == 3
