"""How close each sequence came to flipping a changed condition: branch distances, recorded in the
worker for divergence-directed search. Standard library only.

A boundary change (`<` made `<=`, one more item, an empty string now handled) shows only on the
inputs where the changed condition decides the other way. Search-based testing measures how far
an input is from that: the *branch distance* of a comparison, `|a - b|` for `a < b`, zero on the
boundary. The host steers inputs toward zero (see `generation.search.divergence`).

coverage.py owns the trace function, so the conditions are measured by rewriting the changed
modules' source at import, in this process only (no bytecode is written):

* a one-line comparison `a OP b` (OP one of `< <= > >= == !=`) on a changed line becomes
  `D.left(site, a, b) OP D.right()`: `left` records the distance and returns `a`, `right` returns
  `b`; the comparison itself still runs in the project's frame, with its exceptions and its
  traceback, after both operands were evaluated in their order;
* a truth test on a changed line (of `if`, `while`, `assert`, a conditional expression, `and`,
  `or`, `not`) that is not a comparison becomes `D.truth(site, test)`, which returns `test`
  itself: the distance is its size (`len`) or magnitude.

Distances are taken only between values of the standard's exact types (numbers, text, bytes,
containers for truth): nothing of the project's runs to measure them. A site is
`"<file>:<line>:<column>"`; a sequence's record is, per site it ran, the least distance seen.
"""

from __future__ import annotations

import ast
import bisect
import importlib.abc
import importlib.machinery
import math
import os
import sys
from typing import Any

NAME = "__difforacle_distance__"  # the recorder's name in a rewritten module's globals
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
NUMBERS = (int, float, bool)
TEXTS = (str, bytes)
SIZED = (str, bytes, list, tuple, dict, set, frozenset)
TEXT_LIMIT = 1000  # characters compared position by position


def distance(a: Any, b: Any) -> float | None:
    """How far `a` is from `b`: their difference for numbers; for two texts, the characters that
    differ (by position) and the difference of their lengths; None for anything else."""
    if type(a) in NUMBERS and type(b) in NUMBERS:
        try:
            found = float(abs(a - b))
        except OverflowError:
            return None
        return found if math.isfinite(found) else None
    if type(a) is type(b) and type(a) in TEXTS:
        differing = sum(x != y for x, y in zip(a[:TEXT_LIMIT], b[:TEXT_LIMIT]))
        return float(differing + abs(len(a) - len(b)))
    return None


def magnitude(value: Any) -> float | None:
    """How far `value` is from being false: its size or its magnitude; None for other types."""
    if type(value) in SIZED:
        return float(len(value))
    if type(value) in NUMBERS:
        return distance(value, 0)
    return None


class Recorder:
    """The least distance per site of the sequence running now (recording only while `on`)."""

    def __init__(self) -> None:
        self.on = False
        self.least: dict[str, float] = {}
        self._right: Any = None

    def left(self, site: str, a: Any, b: Any) -> Any:
        self._right = b
        if self.on:
            self._note(site, distance(a, b))
        return a

    def right(self) -> Any:
        b, self._right = self._right, None
        return b

    def truth(self, site: str, value: Any) -> Any:
        if self.on:
            self._note(site, magnitude(value))
        return value

    def _note(self, site: str, found: float | None) -> None:
        if found is not None and found < self.least.get(site, math.inf):
            self.least[site] = found

    def start(self, on: bool) -> None:
        """A sequence begins: record its distances if `on`."""
        self.on, self.least = on, {}

    def record(self) -> dict[str, float]:
        """What the sequence reached so far, forgotten here."""
        found, self.least = self.least, {}
        return found


RECORDER = Recorder()


class _Rewriter(ast.NodeTransformer):
    """Wraps the comparisons and truth tests of the changed lines in calls to the recorder. It goes
    only into the nodes whose lines hold a changed line: one changed entry of a generated table of
    thousands is one walk down, not a visit of every entry."""

    def __init__(self, path: str, lines: frozenset[int]) -> None:
        self.path, self.lines = path, lines
        self._sorted = sorted(lines)

    def _holds_change(self, node: ast.AST) -> bool:
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if start is None or end is None:  # no position of its own (a context, an operator): go in
            return True
        start = min([start, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        at = bisect.bisect_left(self._sorted, start)
        return at < len(self._sorted) and self._sorted[at] <= end

    def generic_visit(self, node: ast.AST) -> ast.AST:
        """NodeTransformer's, over the children that hold a changed line only."""
        for field, old in ast.iter_fields(node):
            if isinstance(old, list):
                new: list[Any] = []
                for item in old:
                    if isinstance(item, ast.AST) and self._holds_change(item):
                        item = self.visit(item)
                        if item is None:
                            continue
                        if not isinstance(item, ast.AST):
                            new.extend(item)
                            continue
                    new.append(item)
                old[:] = new
            elif isinstance(old, ast.AST) and self._holds_change(old):
                replaced = self.visit(old)
                if replaced is None:
                    delattr(node, field)
                else:
                    setattr(node, field, replaced)
        return node

    def _changed(self, node: ast.expr) -> bool:
        return node.lineno in self.lines and node.end_lineno == node.lineno

    def _site(self, node: ast.expr) -> ast.Constant:
        return ast.Constant(f"{self.path}:{node.lineno}:{node.col_offset}")

    def _call(self, method: str, args: list[ast.expr], at: ast.expr) -> ast.Call:
        function = ast.Attribute(ast.Name(NAME, ast.Load()), method, ast.Load())
        return ast.fix_missing_locations(ast.copy_location(ast.Call(function, args, []), at))

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], ORDERINGS) or not self._changed(node):
            return node
        left = self._call("left", [self._site(node), node.left, node.comparators[0]], node.left)
        right = self._call("right", [], node.comparators[0])
        return ast.copy_location(ast.Compare(left, node.ops, [right]), node)

    def _test(self, test: ast.expr) -> ast.expr:
        if isinstance(test, (ast.Compare, ast.BoolOp)) or not self._changed(test):
            return test  # a comparison is measured as one; `and`/`or` by their operands
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return test
        return self._call("truth", [self._site(test), test], test)

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        node.test = self._test(node.test)
        return node

    visit_While = visit_If  # type: ignore[assignment]

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        node.test = self._test(node.test)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        node.test = self._test(node.test)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        node.values = [self._test(value) for value in node.values]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self._test(node.operand)
        return node


def rewrite(source: str | bytes, path: str, lines: frozenset[int]) -> Any:
    """`source`'s code with the changed `lines`' conditions measured (see the module docstring)."""
    tree = _Rewriter(path, lines).visit(ast.parse(source, path))  # each new node has its location
    return compile(tree, path, "exec", dont_inherit=True)


class _MeasuringLoader(importlib.machinery.SourceFileLoader):
    """Loads a changed module from its rewritten source; never reads or writes cached bytecode."""

    lines: frozenset[int] = frozenset()

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        source = self.get_data(path)
        try:
            return rewrite(source, path, self.lines)
        except SyntaxError:
            raise
        except Exception:  # a tree this rewriting cannot compile: the module loads unmeasured
            return compile(source, path, "exec", dont_inherit=True)

    def exec_module(self, module: Any) -> None:
        module.__dict__[NAME] = RECORDER
        super().exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds modules as the other finders do, and has the changed files' modules loaded measured."""

    def __init__(self, changed: dict[str, frozenset[int]]) -> None:
        self.changed = changed

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        lines = self.changed.get(os.path.realpath(spec.origin)) if spec.origin else None
        if not lines or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return spec
        loader = _MeasuringLoader(fullname, spec.origin)
        loader.lines = lines
        spec.loader = loader
        return spec


def install(changed: dict[str, list[int]]) -> None:
    """Measure the conditions of the changed lines (absolute file -> lines) of the modules imported
    from now on."""
    if changed:
        sys.meta_path.insert(0, _Finder({os.path.realpath(path): frozenset(lines)
                                         for path, lines in changed.items()}))
