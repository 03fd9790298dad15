"""Tests for `difforacle.generator.changes.executable_lines`: executable lines, split into function
bodies and import-time code."""

from __future__ import annotations

import textwrap

from difforacle.generator.changes.executable_lines import ExecutableLines, executable_lines

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    import os

    # a comment
    LIMIT = 3


    def parse(text):
        """Function docstring."""
        # a comment in a function
        words = text.split()

        return words


    class Cache:
        """Class docstring."""

        size = 10
        names = {
            "a": 1,
        }

        def get(self, key):
            """Method docstring
            spanning two lines."""
            return key

        def put(self, key, value):
            def helper():
                return value
            return helper()


    if os.environ.get("X"):
        LIMIT = 4
''')


def line_of(text: str, occurrence: int = 1) -> int:
    found = [n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line]
    return found[occurrence - 1]


RESULT = executable_lines(SOURCE)


def test_function_body_lines_are_in_functions() -> None:
    for text in ("words = text.split()", "return words", "return key", "return value", "return helper()"):
        assert line_of(text) in RESULT.in_functions, text
        assert line_of(text) not in RESULT.at_import, text


def test_module_and_class_body_lines_run_at_import() -> None:
    for text in ("import os", "LIMIT = 3", "size = 10", "names = {", "if os.environ", "LIMIT = 4"):
        assert line_of(text) in RESULT.at_import, text
        assert line_of(text) not in RESULT.in_functions, text
    assert line_of("class Cache") in RESULT.at_import


def test_comments_and_blank_lines_are_not_executable() -> None:
    blank = [n for n, line in enumerate(SOURCE.splitlines(), 1) if not line.strip()]
    comments = [line_of("# a comment"), line_of("# a comment in a function")]
    assert not set(blank + comments) & RESULT.all


def test_function_docstrings_are_not_executable() -> None:
    for text in ('"""Function docstring."""', '"""Method docstring', "spanning two lines"):
        assert line_of(text) not in RESULT.all, text


def test_module_and_class_docstrings_are_not_executable() -> None:
    for text in ('"""Module docstring."""', '"""Class docstring."""'):
        assert line_of(text) not in RESULT.all, text


def test_no_line_is_in_both_sets_and_all_is_the_union() -> None:
    assert not RESULT.in_functions & RESULT.at_import
    assert RESULT.all == RESULT.in_functions | RESULT.at_import


def test_nested_functions_and_methods_count_as_function_lines() -> None:
    source = "class A:\n    class B:\n        def f(self):\n            return [x for x in range(3)]\n"
    result = executable_lines(source)
    assert 4 in result.in_functions
    assert {1, 2} <= result.at_import


def test_comprehensions_at_module_and_class_level_run_at_import() -> None:
    source = textwrap.dedent('''\
        import os
        SQUARES = [i * i for i in range(3)]


        class Table:
            keys = {k: 1 for k in "ab"}
    ''')
    result = executable_lines(source)
    assert {2, 6} <= result.at_import
    assert not {2, 6} & result.in_functions


def test_invalid_source_has_no_lines() -> None:
    assert executable_lines("def (:\n") == ExecutableLines(frozenset(), frozenset())
    assert executable_lines("x = 1\0\n") == ExecutableLines(frozenset(), frozenset())  # null byte
    assert executable_lines("") == ExecutableLines(frozenset(), frozenset())


def test_compiling_executes_nothing(tmp_path) -> None:
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').close()\n"
    assert executable_lines(source).at_import == frozenset({1})
    assert not marker.exists()


def _statement_lines(source: str, line: int) -> set[int]:
    """The lines of the top-level statement (its decorators too) that holds `line`."""
    import ast

    for node in ast.parse(source).body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if start <= line <= node.end_lineno:
            return set(range(start, node.end_lineno + 1))
    return set()


def test_the_lines_of_the_changed_statements_are_those_of_the_whole_module() -> None:
    """Compiled alone, a changed statement has the lines it has in its module: all a change needs."""
    for text in ("LIMIT = 3", "words = text.split()", '"a": 1,', "return helper()", "LIMIT = 4",
                 "Function docstring", "spanning two lines"):
        line = line_of(text)
        alone = executable_lines(SOURCE, lines={line})
        within = _statement_lines(SOURCE, line)
        assert alone.at_import == RESULT.at_import & within, text
        assert alone.in_functions == RESULT.in_functions & within, text


def test_changed_statements_compile_with_the_modules_future_flags() -> None:
    """Under `from __future__ import annotations` an annotation is not evaluated, so its lines hold
    no code of their own: compiled alone, the changed definition must say the same."""
    body = "def f(\n    a: (\n        int\n    ),\n) -> (\n    str\n):\n    return a\n"
    future = "from __future__ import annotations\n" + body
    assert executable_lines(body, lines={3}).all == {1, 3, 6, 8}  # evaluated at import
    assert executable_lines(future, lines={4}).all == executable_lines(future).all - {1} == {2, 9}
