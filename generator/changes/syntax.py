"""The syntax tree of a source text, parsed once however many stages read it.

Mapping the diff onto units, the scope of the change, the impact of a module-level change, the
history's spans and the pull request's added values all read the changed modules' trees. Each
parsing them again costs little for a hand-written module and seconds for a generated one (a
2 MB table module takes most of a second to parse, and a dozen parses came before exploring
began), so they share the trees of large sources here; a small one is parsed each time, as
quick as a look-up, and so never pushes a large one out. The trees are shared: a caller must not
change them.
"""

from __future__ import annotations

import ast
import bisect
import functools
import importlib.util
import itertools
import warnings
from collections.abc import Iterator

from .model import ChangeSet, Checkout, FileChange

TREES_KEPT = 8  # the base and head sides of the few largest files
LARGE_SOURCE = 64_000  # characters (or bytes) of a large source: its tree is kept

UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)  # null bytes, too deep, too big


def parse(source: str | bytes) -> ast.Module:
    """The module's tree (shared: read it, never change it); raises one of UNPARSABLE. Bytes are
    decoded as the import system decodes a file (its coding cookie, universal newlines), so a
    file read as bytes and as text is one tree."""
    if len(source) < LARGE_SOURCE:
        return _parse(source)
    return _kept(importlib.util.decode_source(source) if isinstance(source, bytes) else source)


def parsed(source: str | bytes | None) -> ast.Module | None:
    """The module's tree, or None when there is no source or it does not parse."""
    if source is None:
        return None
    try:
        return parse(source)
    except UNPARSABLE:
        return None


def changed_trees(changes: ChangeSet, base: Checkout,
                  head: Checkout) -> Iterator[tuple[FileChange, ast.Module | None, list[int]]]:
    """Each side of each changed module that has changed lines: the file's change, its tree on that
    side (None: unreadable or unparsable) and its changed lines there, sorted."""
    for change in changes.files:
        for checkout, path, lines in ((base, change.base_path, change.base_lines),
                                      (head, change.head_path, change.head_lines)):
            if not change.module or not path or not lines:
                continue
            try:
                tree = parsed((checkout.root / path).read_bytes())
            except OSError:
                tree = None
            yield change, tree, sorted(lines)


def spans_line(lines: list[int], start: int, end: int) -> bool:
    """Whether one of `lines` (sorted) lies from `start` to `end`, both included."""
    at = bisect.bisect_left(lines, start)
    return at < len(lines) and lines[at] <= end


def first_line(node: ast.AST) -> int:
    """The first line of a located node, its decorators' included (a `def`'s own line is the
    `def`, below them)."""
    where = node.pattern if isinstance(node, ast.match_case) else node  # a case has no position
    return min([where.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def nodes_on(tree: ast.AST, lines: list[int]) -> Iterator[ast.AST]:
    """The nodes of `tree` whose lines hold one of `lines` (sorted), and those without a position
    of their own (a context, an operator, a case) under them: a walk that goes only where the
    change is, so that one changed entry of a generated table is not a visit of every entry."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            end = getattr(child, "end_lineno", None)
            if end is None or spans_line(lines, first_line(child), end):
                stack.append(child)


def same_tree(a: ast.AST, b: ast.AST) -> bool:
    """Whether two trees are the same code (`ast.dump` equal: positions and comments aside),
    stopping at the first node that differs instead of rendering both whole. Each pair of nodes
    agrees in type, in its plain fields, and in the shape of its node fields (a node or not, how
    many in a list), so equal walks mean equal trees."""
    for x, y in itertools.zip_longest(ast.walk(a), ast.walk(b)):
        if type(x) is not type(y):
            return False
        for name in x._fields:
            u, v = getattr(x, name, None), getattr(y, name, None)
            if isinstance(u, list) and isinstance(v, list):
                if len(u) != len(v) or not all(_same_item(i, j) for i, j in zip(u, v, strict=True)):
                    return False
            elif isinstance(u, ast.AST) or isinstance(v, ast.AST):
                if not (isinstance(u, ast.AST) and isinstance(v, ast.AST)):
                    return False
            elif type(u) is not type(v) or u != v:
                return False
    return True


def _same_item(i: object, j: object) -> bool:
    """Two items of a list field at the same place: both nodes (compared when walked to), or equal."""
    if isinstance(i, ast.AST) or isinstance(j, ast.AST):
        return isinstance(i, ast.AST) and isinstance(j, ast.AST)
    return type(i) is type(j) and i == j


def _parse(source: str | bytes) -> ast.Module:
    with warnings.catch_warnings():  # e.g. SyntaxWarning for an invalid escape: the project's business
        warnings.simplefilter("ignore")
        return ast.parse(source)


_kept = functools.lru_cache(maxsize=TREES_KEPT)(_parse)
