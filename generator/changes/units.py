"""Map the merge-base..head diff onto Python modules and AST units (functions, methods, classes).

The diff is taken from the merge base, not from base itself, so that commits added to the
base branch after the fork are not mistaken for the pull request's changes. Consequently
`FileChange.base_lines` and the spans of removed units are merge-base line numbers; when
base is the merge base (the common case) they are also base's line numbers. When they
differ, the merge-base side is parsed from git's blobs, not from the base worktree.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from unidiff import PatchedFile, PatchSet
from unidiff.constants import DEV_NULL

from ..errors import SetupError
from .checkout import module_name
from .model import ChangeSet, ChangeStatus, Checkout, FileChange, Unit, UnitKind
from .syntax import parsed, same_tree

if TYPE_CHECKING:
    import git

MODULE = "<module>"  # qualname of module-level code
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Span:
    """Lines `start..end` (inclusive, decorators included) of one unit on one side."""

    qualname: str
    kind: UnitKind
    start: int
    end: int

    def __contains__(self, line: int) -> bool:
        return self.start <= line <= self.end


@dataclass(frozen=True)
class _Side:
    """One side (merge base or head) of a changed Python file."""

    path: str
    lines: frozenset[int]  # changed lines on this side
    spans: tuple[Span, ...] | None  # None when the file does not parse
    length: int  # number of lines in the file

    @property
    def whole(self) -> Span:
        return Span(MODULE, "module", 1, max(self.length, 1))

    def has(self, qualname: str) -> bool:
        return qualname == MODULE or any(span.qualname == qualname for span in self.spans or ())

    def hits(self) -> dict[str, list[Span]]:
        """Changed lines grouped by the innermost unit containing them; a broken file is one unit.

        Lines outside every statement (blank lines and comments between top-level statements)
        belong to no unit, so adding a function with its separating blank lines adds one unit.
        """
        if self.spans is None:
            return {MODULE: [self.whole]}
        grouped: dict[str, list[Span]] = {}
        for line in sorted(self.lines):
            span = _innermost(self.spans, line)
            if span:
                grouped.setdefault(span.qualname, []).append(span)
        return grouped

    def span_of(self, qualname: str, hits: dict[str, list[Span]]) -> Span:
        """The unit's reported span: the parts that changed, else all its definitions."""
        spans = hits.get(qualname) or [s for s in self.spans or () if s.qualname == qualname]
        if not spans:  # module-level code changed only on the other side
            return self.whole
        return Span(qualname, spans[0].kind, min(s.start for s in spans), max(s.end for s in spans))


# ---------------------------------------------------------------- entry point


def compute_changes(
    repo: git.Repo, base_sha: str, head_sha: str, base_checkout: Checkout, head_checkout: Checkout
) -> ChangeSet:
    """Changed Python files and units of merge-base(base, head)..head."""
    merge_base = _merge_base(repo, base_sha, head_sha)
    base_roots, head_roots = _relative_roots(base_checkout), _relative_roots(head_checkout)
    files: list[FileChange] = []
    units: list[Unit] = []
    skipped: list[str] = []
    tests: list[FileChange] = []
    for patched in _diff(repo, merge_base, head_sha):
        change = _file_change(patched, base_roots, head_roots)
        if isinstance(change, str):
            skipped.append(change)
            continue
        if change.head_path and is_test_file_name(PurePosixPath(change.head_path).name):
            tests.append(change)
        if change.module is None:
            skipped.append(f"{change.head_path or change.base_path}: {_NOT_IMPORTABLE}")
        else:
            base_source = _source(repo, merge_base, change.base_path, base_checkout)
            head_source = _source(repo, head_sha, change.head_path, head_checkout)
            if _same_syntax_tree(base_source, head_source):
                skipped.append(f"{change.head_path}: {_LAYOUT_ONLY}")
                continue
            if is_test_code(head_source) or is_test_code(base_source):
                skipped.append(f"{change.head_path or change.base_path}: {_TEST_CODE}")
                continue
            files.append(change)
            base = _side(change.base_path, change.base_lines, base_source)
            head = _side(change.head_path, change.head_lines, head_source)
            units.extend(_units(change.module, base, head))
    units.sort(key=lambda unit: (unit.path, unit.start, unit.end, unit.qualname))
    return ChangeSet(merge_base, tuple(files), tuple(units), tuple(skipped), tuple(tests))


_NOT_IMPORTABLE = "outside the import roots (tests, scripts or not importable)"
_TEST_CODE = "test code (it imports pytest or defines unittest test cases): not library code"
_LAYOUT_ONLY = "comments or layout only (same syntax tree): behaviour cannot differ"


def _file_change(
    patched: PatchedFile, base_roots: tuple[PurePosixPath, ...], head_roots: tuple[PurePosixPath, ...]
) -> FileChange | str:
    """The changed lines of a Python file (module None if not importable), or why it is skipped."""
    base_path, head_path = python_path(patched.source_file), python_path(patched.target_file)
    if patched.is_binary_file or not (base_path or head_path):
        shown = _plain_path(patched.target_file) or _plain_path(patched.source_file)
        return f"{shown}: {'binary file' if patched.is_binary_file else 'not a Python file'}"
    module = _module(head_path, head_roots) or _module(base_path, base_roots)
    removed, added = diff_lines(patched)
    none: frozenset[int] = frozenset()  # a side that is not Python (x.txt renamed to x.py) has no lines
    hunks = tuple((h.source_start, h.source_length, h.target_start, h.target_length) for h in patched)
    return FileChange(
        base_path, head_path, module, removed if base_path else none, added if head_path else none, hunks
    )


def _module(path: str | None, roots: tuple[PurePosixPath, ...]) -> str | None:
    return module_name(path, roots) if path else None


# ---------------------------------------------------------------- git


def _merge_base(repo: git.Repo, base_sha: str, head_sha: str) -> str:
    bases = repo.merge_base(base_sha, head_sha)
    if not bases:
        raise SetupError(
            f"{base_sha[:12]} and {head_sha[:12]} have no merge base: "
            "fetch the full history (the clone may be shallow)"
        )
    return bases[0].hexsha


def _diff(repo: git.Repo, merge_base: str, head_sha: str) -> PatchSet:
    """The zero-context diff, immune to user config that changes its format (prefixes, drivers)."""
    raw = repo.git(c="core.quotepath=off").diff(
        "-M",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--unified=0",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        merge_base,
        head_sha,
        stdout_as_string=False,
        strip_newline_in_stdout=False,
    )
    return PatchSet(raw.decode("utf-8", errors="surrogateescape"))


def diff_lines(patched: PatchedFile) -> tuple[frozenset[int], frozenset[int]]:
    """Removed lines (merge-base numbering) and added lines (head numbering)."""
    lines = [line for hunk in patched for line in hunk]
    removed = frozenset(line.source_line_no for line in lines if line.is_removed)
    added = frozenset(line.target_line_no for line in lines if line.is_added)
    return removed, added


def _plain_path(diff_path: str) -> str | None:
    """`a/pkg/mod.py` -> `pkg/mod.py`; None for /dev/null."""
    if diff_path == DEV_NULL:
        return None
    return diff_path.strip('"')[2:]


def python_path(diff_path: str) -> str | None:
    path = _plain_path(diff_path)
    return path if path and path.endswith(".py") else None


def _relative_roots(checkout: Checkout) -> tuple[PurePosixPath, ...]:
    return tuple(
        PurePosixPath(root.relative_to(checkout.root).as_posix())
        for root in checkout.import_roots
        if root.is_relative_to(checkout.root)
    )


def _read(repo: git.Repo, sha: str, path: str, checkout: Checkout) -> bytes:
    """Read from the worktree when it is at `sha`, else from git (merge base != base)."""
    if checkout.sha == sha:
        return (checkout.root / path).read_bytes()
    return repo.git.show(f"{sha}:{path}", stdout_as_string=False, strip_newline_in_stdout=False)


# ---------------------------------------------------------------- AST units


def _source(repo: git.Repo, sha: str, path: str | None, checkout: Checkout) -> bytes | None:
    return _read(repo, sha, path, checkout) if path is not None else None


def is_test_file_name(name: str) -> bool:
    """pytest's default names of test files, `test_*.py` and `*_test.py`, and `test.py` or `tests.py`:
    the one test module of a small project (run as `python test.py`; pytest collects it when named)."""
    return name.endswith(".py") and (name.startswith("test_") or name.removesuffix(".py").endswith("_test")
                                     or name in ("test.py", "tests.py"))


def is_test_code(source: bytes | None) -> bool:
    """A module that imports pytest or defines a `unittest.TestCase` subclass is test code, whatever
    its name: its functions are tests and fixtures, not the library's behaviour."""
    tree = parsed(source)
    if tree is None:
        return False
    for node in _statements_at_top(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pytest" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("pytest"):
            return True
        if isinstance(node, ast.ClassDef) and any(_base_name(base) in _TEST_CASES for base in node.bases):
            return True
    return False


_TEST_CASES = frozenset({"TestCase", "IsolatedAsyncioTestCase"})


def _statements_at_top(tree: ast.Module) -> Iterator[ast.AST]:
    """Module-level statements, those in `if`/`try` blocks included."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            pending.extend(_statements_in(node))


def _base_name(node: ast.expr) -> str:
    """`TestCase` for `TestCase` and `unittest.TestCase`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _same_syntax_tree(base: bytes | None, head: bytes | None) -> bool:
    """True when only comments, blank lines or formatting changed (line numbers are not compared).

    Code that reads its own source or line numbers (inspect, warnings) is the exception we accept.
    """
    base_tree, head_tree = parsed(base), parsed(head)
    return base_tree is not None and head_tree is not None and same_tree(base_tree, head_tree)


def _side(path: str | None, lines: frozenset[int], source: bytes | None) -> _Side | None:
    if path is None or source is None:
        return None
    return _Side(path, lines, parse_spans(source), len(source.splitlines()))


def parse_spans(source: bytes) -> tuple[Span, ...] | None:
    """All unit spans of a module, or None when it does not parse."""
    tree = parsed(source)
    if tree is None:  # null bytes, undecodable, too deep
        return None
    statements = tuple(
        Span(MODULE, "module", node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if not isinstance(node, (*_DEFS, ast.ClassDef))
    )
    return statements + tuple(_definitions(tree, prefix="", in_class=False))


def _definitions(node: ast.AST, prefix: str, in_class: bool) -> Iterator[Span]:
    """Functions, methods and classes, outermost first; nested functions belong to their parent.

    Definitions under `if`/`try`/`with` blocks count as if they were at the enclosing level.
    Only statements are walked: definitions live nowhere else, and a generated table can nest
    expressions deeper than the interpreter's recursion limit.
    """
    for child in _statements_in(node):
        if isinstance(child, _DEFS):
            yield _definition_span(child, prefix, "method" if in_class else "function")
        elif isinstance(child, ast.ClassDef):
            yield _definition_span(child, prefix, "class")
            yield from _definitions(child, f"{prefix}{child.name}.", in_class=True)
        else:
            yield from _definitions(child, prefix, in_class)


def _statements_in(node: ast.AST) -> Iterator[ast.AST]:
    """The statements directly in `node`'s blocks (bodies, else and finally blocks, handlers, cases)."""
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        block = getattr(node, field, None)
        if isinstance(block, list):
            yield from (child for child in block if isinstance(child, (ast.stmt, ast.excepthandler,
                                                                       ast.match_case)))


_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definition_span(node: _Definition, prefix: str, kind: UnitKind) -> Span:
    start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return Span(f"{prefix}{node.name}", kind, start, node.end_lineno or node.lineno)


def _innermost(spans: Iterable[Span], line: int) -> Span | None:
    """The smallest span containing `line`; on ties the later (deeper) one."""
    best = None
    for span in spans:
        if line in span and (best is None or span.end - span.start <= best.end - best.start):
            best = span
    return best


def _units(module: str, base: _Side | None, head: _Side | None) -> Iterator[Unit]:
    """One unit per changed qualname: modified if it exists on both sides, else added or removed."""
    base_hits = base.hits() if base else {}
    head_hits = head.hits() if head else {}
    for qualname in dict.fromkeys([*base_hits, *head_hits]):
        on_base, on_head = bool(base and base.has(qualname)), bool(head and head.has(qualname))
        if head and on_head:
            status: ChangeStatus = "modified" if on_base else "added"
            yield _unit(module, head, head.span_of(qualname, head_hits), status)
        elif base:
            yield _unit(module, base, base.span_of(qualname, base_hits), "removed")


def _unit(module: str, side: _Side, span: Span, status: ChangeStatus) -> Unit:
    return Unit(module, span.qualname, span.kind, status, side.path, span.start, span.end)
