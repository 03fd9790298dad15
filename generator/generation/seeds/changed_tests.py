"""The tests a pull request adds or changes, within the test files it touches.

A changed test file usually holds one changed test among hundreds: a new case, a parametrized value
added or dropped. Only those tests state what the pull request means (carving's asserting and
updated evidence), and running only them on the other commit takes a fraction of the whole file's
time, which carving's share of the budget may not have. Tests are what pytest collects by default:
`test*` functions, in `Test*` classes or not. A change outside every test (a fixture, a helper, a
module-level table of cases) may reach any test of the file, so the whole file counts then; a
change to a test class's own lines (a class attribute, a helper method) counts for each of its
tests.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

WHOLE_FILE = "*"  # the selection of a file whose change may reach any of its tests
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # what a node id's parts name


@dataclass(frozen=True)
class ChangedTests:
    """Per test file (repository-relative path): the qualified names of the tests changed in it
    (`TestParse.test_empty`; a class's name for each of its tests), or WHOLE_FILE."""

    files: dict[str, frozenset[str]]

    def __contains__(self, test: str) -> bool:
        """Whether a pytest node id (`tests/test_x.py::TestParse::test_empty[0-a]`) is a changed test."""
        path, _, rest = test.partition("::")
        names = self.files.get(path)
        if names is None:
            return False
        qualname = ".".join(part.split("[", 1)[0] for part in rest.split("::"))
        return WHOLE_FILE in names or any(qualname == name or qualname.startswith(f"{name}.")
                                          for name in names)

    def selection(self, paths: Iterable[str]) -> list[str]:
        """What pytest is given to run the changed tests of `paths`: a whole file's path, else its
        changed tests' node ids (`path::TestParse::test_empty`: every parametrization of it, whatever
        its id in another run; `path::TestParse` for a class)."""
        found: list[str] = []
        for path in paths:
            names = self.files.get(path, frozenset())
            found += [path] if WHOLE_FILE in names else [f"{path}::{name.replace('.', '::')}"
                                                          for name in sorted(names)]
        return found


def changed_tests(root: Path, files: Iterable[tuple[str, Collection[int]]]) -> ChangedTests:
    """The tests whose lines (decorators included) hold one of the changed lines of their file under
    `root`: `files` gives each test file's path and its changed line numbers on that side. A file that
    does not parse, or is not there, counts whole."""
    selected: dict[str, frozenset[str]] = {}
    for path, lines in files:
        try:
            tree = ast.parse((root / path).read_bytes())
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            selected[path] = frozenset({WHOLE_FILE})
            continue
        names: set[str] = set()
        for line in lines:
            name = _holder(tree.body, line, "")
            if name is None:
                names = {WHOLE_FILE}
                break
            names.add(name)
        selected[path] = frozenset(names)
    return ChangedTests(selected)


def _holder(body: list[ast.stmt], line: int, prefix: str) -> str | None:
    """The qualified name of the test function or test class among `body` whose lines hold `line`
    (a test class's name for a line of its own or of a helper method in it); None for a line
    outside every test: module-level code, a fixture or a helper, which may reach any test."""
    for node in body:
        if not isinstance(node, _DEFINITIONS):
            continue
        start = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        if not start <= line <= (node.end_lineno or node.lineno):
            continue
        name = prefix + node.name
        if isinstance(node, ast.ClassDef):
            return (_holder(node.body, line, f"{name}.") or name) if node.name.startswith("Test") else None
        return name if node.name.startswith("test") else None
    return None


def names_used_by(root: Path, tests: Iterable[str]) -> frozenset[str]:
    """The names the functions of the given tests (pytest node ids, files under `root`) use, as
    variables or attributes (`Decimal`, `factory`, `get`): what a test of new behaviour builds,
    passes and calls, whether or not carving could record its calls. A test whose file does not
    parse, or that is not found in it, adds nothing."""
    found: set[str] = set()
    trees: dict[str, ast.Module | None] = {}
    for test in tests:
        path, _, rest = test.partition("::")
        if path not in trees:
            try:
                trees[path] = ast.parse((root / path).read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                trees[path] = None
        node: ast.AST | None = trees[path]
        for part in (part.split("[", 1)[0] for part in rest.split("::")):
            body = getattr(node, "body", [])
            node = next((n for n in body if isinstance(n, _DEFINITIONS) and n.name == part), None)
        if node is not None and node is not trees[path]:
            found.update(n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
                         if isinstance(n, (ast.Name, ast.Attribute)))
    return frozenset(found)
