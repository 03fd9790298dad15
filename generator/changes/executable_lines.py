"""Which source lines can execute, and which of those run at import time.

Changed-line coverage counts only lines that carry code (not comments, blank lines or
docstrings), and credits module-level and class-body lines to a successful import, since
they run before any sequence does. Compiling source text executes nothing.
"""

from __future__ import annotations
import __future__

import ast
from collections.abc import Collection
from dataclasses import dataclass
from types import CodeType

from .syntax import first_line, parse, spans_line

CO_OPTIMIZED = 0x1
COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})


@dataclass(frozen=True)
class ExecutableLines:
    in_functions: frozenset[int]
    at_import: frozenset[int]

    @property
    def all(self) -> frozenset[int]:
        return self.in_functions | self.at_import


def executable_lines(source: str, filename: str = "<source>",
                     lines: Collection[int] | None = None) -> ExecutableLines:
    """The module's executable lines; with `lines`, those of the top-level statements that span one
    of them only (compiled alone, with the module's `__future__` flags: their code is the same),
    which is what a change's lines need and spares compiling the rest of a large module."""
    try:
        tree = parse(source)
        if lines is None:
            module, statements = compile(source, filename, "exec", dont_inherit=True), tree.body
        else:
            wanted = sorted(lines)
            statements = [node for node in tree.body
                          if spans_line(wanted, first_line(node), node.end_lineno or node.lineno)]
            module = compile(ast.Module(body=statements, type_ignores=[]), filename, "exec",
                             flags=_future_flags(tree), dont_inherit=True)
        docstrings = _docstring_lines(tree, statements)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ExecutableLines(frozenset(), frozenset())
    functions: set[int] = set()
    at_import: set[int] = set()
    _walk(module, at_import, functions, at_import_level=True)
    return ExecutableLines(frozenset(functions - docstrings), frozenset(at_import - functions - docstrings))


def _future_flags(tree: ast.Module) -> int:
    """The compiler flags of the module's `from __future__ import ...` statements."""
    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _walk(code: CodeType, at_import: set[int], functions: set[int], at_import_level: bool) -> None:
    target = at_import if at_import_level else functions
    target.update(line for _, _, line in code.co_lines() if line is not None and line > 0)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            # Class bodies (not CO_OPTIMIZED) and comprehensions written at import level run at
            # import; function bodies run when called.
            runs_now = not const.co_flags & CO_OPTIMIZED or const.co_name in COMPREHENSIONS
            _walk(const, at_import, functions, at_import_level and runs_now)


def _docstring_lines(tree: ast.Module, statements: list[ast.stmt]) -> set[int]:
    """The lines of the module's docstring and of the docstrings within `statements`."""
    lines: set[int] = set()
    nodes = [tree, *(node for statement in statements for node in ast.walk(statement))]
    for node in nodes:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines
