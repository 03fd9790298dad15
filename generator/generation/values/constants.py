"""Constant mining (GRT, section III-A): literals of the project as argument values.

Random primitives rarely hit `if unit == "h"`; the literals the code compares against do.
Every module is read once with `ast`: its constants (comparison operands, `in (...)` members,
dict keys and values, `startswith`/`split` arguments, enum member values, regex patterns),
constants folded from simple expressions (`60 * 60` -> 3600, `-1`), module and class
constants propagated to the places that use them (`if x == UNIT`), the characters of a short
string searched with `in` (`c in "+-"`), and a few strings matching each simple regex
pattern passed to `re` (`r"^(\\d+)([smh])$"` -> "1s"). Docstrings, f-string fragments and
the messages of `raise`, `assert` and logging calls are prose, never compared, and skipped.

Pools, in the tagged literal form of the worker's `literals`:
- `hunk`: literals on the PR's changed lines (base or head), and the keys under which a table of
  the module holds a changed function (the value that selects it), drawn most often;
- `module`: the rest of the changed modules' literals (GRT's local, per-class constants);
- `package`: the rest of their package's literals, each weighted by GRT's TF-IDF (Randoop's
  `TfIdfSelector`) over the package's modules;
- `tests`: literals of the repository's tests.
A literal is in one pool only, the first of that order.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse

from ...changes.model import ChangeSet, Checkout
from ...changes.syntax import parsed
from ...planning.impact import table_entries

MAX_CONSTANT_LENGTH = 80
MAX_TEST_LITERALS = 400  # per test file: fixtures can be huge tables
MAX_TEST_FILES = 50
TEST_DIRS = ("tests", "test", "testing")
MAX_PACKAGE_MODULES = 100  # modules of the package read for the TF-IDF, nearest first
MAX_PACKAGE_BYTES = 2_000_000  # and their total size: about a second of parsing
MAX_PACKAGE_CONSTANTS = 2000  # the package pool keeps the heaviest
MAX_FILE_BYTES = 400_000  # generated tables and vendored blobs are not worth parsing
MAX_INT = 2**63  # larger ints are not kept; folding gives up well above it
REGEX_EXAMPLES = 3
IN_STRING_CHARS = 16  # `c in "..."` is split into characters when the string is this short

_NOPE = object()  # "not a foldable constant"; None is a legitimate value
Scopes = tuple[str | None, ...]  # the enclosing class names, None for a function (its names are local)
Env = dict[str, object]  # constant names and their values


@dataclass
class Constants:
    """Literals found in the project, by pool (see the module docstring)."""

    hunk: list[list] = field(default_factory=list)
    module: list[list] = field(default_factory=list)
    tests: list[list] = field(default_factory=list)
    package: list[list] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)  # TF-IDF of package literals, by repr

    def by_tag(self, tag: str) -> tuple[list[list], list[list], list[list]]:
        """The hunk, module and tests literals of one tag."""
        return tuple([c for c in pool if c[0] == tag] for pool in (self.hunk, self.module, self.tests))

    def package_by_tag(self, tag: str) -> tuple[list[list], list[float]]:
        """The package literals of one tag and their weights (1.0 when not given)."""
        literals = [c for c in self.package if c[0] == tag]
        return literals, [self.weights.get(repr(c), 1.0) for c in literals]


def mine_change(changes: ChangeSet, base: Checkout, head: Checkout) -> Constants:
    """The constants of a change: the changed modules, the changed lines of both sides (head's new
    literals are the ones that reach head's new branches), the repository's tests, and the
    modules of the changed modules' packages (the documents of the TF-IDF)."""
    files, changed, named = [], {}, []
    for change in changes.files:
        if not change.module:
            continue
        if change.base_path:
            path = base.root / change.base_path
            files.append(path)
            changed[path] = set(change.base_lines) | _selector_lines(path, changes, change.module)
            named.append((path, change.module))
        if change.head_path and change.head_lines:
            changed[head.root / change.head_path] = set(change.head_lines)  # its hunks only
    tests = [p for d in TEST_DIRS for p in sorted((base.root / d).rglob("test*.py"))][:MAX_TEST_FILES]
    return mine_constants(files, changed, tests, package_modules(named))


def _selector_lines(path: Path, changes: ChangeSet, module: str) -> set[int]:
    """The lines of the keys that select a changed function from a table of its module (`"asciidoc":
    partial(_asciidoc_row, ...)`): the key is what a caller must pass to reach it, as much a
    literal of the change as those on its changed lines."""
    names = {u.qualname for u in changes.units if u.module == module and u.kind == "function"}
    if not names:
        return set()
    tree = parsed(_read(path))
    if tree is None:
        return set()
    return {entry.line for entry in table_entries(tree) if entry.name in names and entry.key is not None}


def mine_constants(module_files: Iterable[Path], changed: dict[Path, set[int]],
                   test_files: Iterable[Path] = (), package_files: Iterable[Path] = ()) -> Constants:
    """The pools of the changed modules, their changed lines, their package and the tests.

    `changed` holds the changed lines of each file; a file that is not in `module_files`
    (the head side of a change) only adds its changed lines' literals. `package_files` are
    the other modules of the package: with `module_files` they are the TF-IDF documents.
    """
    modules = list(dict.fromkeys(module_files))
    documents = list(dict.fromkeys([*modules, *package_files]))
    cache: dict[Path, list[_Occurrence]] = {}

    def mined(path: Path) -> list[_Occurrence]:
        if path not in cache:
            cache[path] = _occurrences(_read(path))
        return cache[path]

    constants = Constants()
    seen: set[str] = set()
    for path, lines in changed.items():
        for literal in _distinct(mined(path), lines):
            _add_unique(constants.hunk, literal, seen)
    for path in modules:
        for literal in _distinct(mined(path)):
            _add_unique(constants.module, literal, seen)
    counts = [Counter(o.key for o in mined(path)) for path in documents]
    weights = tf_idf_weights(counts)
    first: dict[str, list] = {}  # key -> literal, in order of first appearance: the tie-break
    for path in documents:
        for occurrence in mined(path):
            if occurrence.key not in seen:
                first.setdefault(occurrence.key, occurrence.literal)
    heaviest = sorted(first, key=lambda key: -weights[key])[:MAX_PACKAGE_CONSTANTS]  # stable
    for key in heaviest:
        _add_unique(constants.package, first[key], seen)
        constants.weights[key] = weights[key]
    for path in test_files:
        for literal in _distinct(mined(path))[:MAX_TEST_LITERALS]:
            _add_unique(constants.tests, literal, seen)
    return constants


def tf_idf_weights(documents: list[Counter[str]]) -> dict[str, float]:
    """GRT's weight of each term over `documents` (term -> number of uses in one document):
    w(t) = tf(t) * log((|D| + 1) / (|D| + 1 - df(t))), with tf(t) the uses of t in all the
    documents and df(t) the number of documents using it. Unlike the classic IDF it grows with
    df: a constant used in many modules is a convention of the project (a unit, a key), worth
    trying everywhere."""
    size = len(documents)
    uses: Counter[str] = Counter()
    users: Counter[str] = Counter()
    for document in documents:
        uses.update(document)
        users.update(document.keys())
    return {term: uses[term] * math.log((size + 1) / (size + 1 - users[term])) for term in uses}


def package_modules(modules: Iterable[tuple[Path, str]], limit: int = MAX_PACKAGE_MODULES,
                    size: int = MAX_PACKAGE_BYTES) -> list[Path]:
    """The given files, then the other modules of their top-level packages, nearest to them
    first (same folder, then a folder up, ...): at most `limit` files of `size` bytes in all.

    A top-level module without a package brings the non-test modules of its own folder. A
    file whose folders do not spell its module name (a rename across packages) brings only
    itself: the miner never walks a folder it cannot tell is the package.
    """
    modules = list(modules)
    files = list(dict.fromkeys(path for path, _ in modules))
    candidates: set[Path] = set()
    for path, name in modules:
        candidates.update(_package_files(path, name))
    folders = [path.parent for path in files]

    def distance(path: Path) -> tuple[int, str]:
        return min(_folder_distance(path.parent, folder) for folder in folders), str(path)

    chosen = list(files)
    total = sum(_size(path) for path in files)
    for path in sorted(candidates - set(files), key=distance):
        bytes_ = _size(path)
        if bytes_ > MAX_FILE_BYTES:
            continue  # not read anyway
        total += bytes_
        if len(chosen) >= limit or total > size:
            break
        chosen.append(path)
    return chosen


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _package_files(path: Path, name: str) -> list[Path]:
    parts = name.split(".")
    folders = parts if path.name == "__init__.py" else parts[:-1]
    if not folders:  # a top-level module: its folder's other modules
        return sorted(p for p in path.parent.glob("*.py") if _is_source(p.name))
    top = path.parent
    for folder in reversed(folders[1:]):
        if top.name != folder:
            return [path]
        top = top.parent
    if top.name != folders[0]:
        return [path]
    return sorted(p for p in top.rglob("*.py") if _is_source(p.name) and not any(
        part.startswith(".") or part in _NOT_SOURCE_FOLDERS for part in p.relative_to(top).parts))


_NOT_SOURCE_FOLDERS = frozenset(("__pycache__", "tests", "test", "testing"))


def _is_source(name: str) -> bool:
    return not name.startswith(("test_", "conftest", "setup.", "noxfile", "tasks.")) and name != "test.py"


def _folder_distance(a: Path, b: Path) -> int:
    common = 0
    for x, y in zip(a.parts, b.parts, strict=False):
        if x != y:
            break
        common += 1
    return len(a.parts) + len(b.parts) - 2 * common


def literal_constants(source: str, lines: Iterable[int] | None = None) -> list[list]:
    """Distinct literals of `source` (optionally only those on `lines`), in order of appearance."""
    return _distinct(_occurrences(source), None if lines is None else set(lines))


def _distinct(occurrences: list[_Occurrence], lines: set[int] | None = None) -> list[list]:
    found: dict[str, list] = {}
    for o in occurrences:
        if lines is None or any(line in lines for line in range(o.first, o.last + 1)):
            found.setdefault(o.key, o.literal)
    return list(found.values())


def _add_unique(pool: list[list], literal: list, seen: set[str]) -> None:
    key = repr(literal)
    if key not in seen:
        seen.add(key)
        pool.append(literal)


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def constant_literal(value: object) -> list | None:
    """The tagged literal of a mined value, or None when it is not worth an argument."""
    if isinstance(value, bool) or value is None or value is Ellipsis:
        return None
    if isinstance(value, int):
        return ["int", value] if abs(value) < MAX_INT else None
    if isinstance(value, float):
        return ["float", repr(value)]
    if isinstance(value, str) and len(value) <= MAX_CONSTANT_LENGTH and "\n" not in value:
        return ["str", value]
    if isinstance(value, bytes) and len(value) <= MAX_CONSTANT_LENGTH:
        return ["bytes", value.hex()]
    return None


# ---------------------------------------------------------------- one module


@dataclass(frozen=True)
class _Occurrence:
    """One use of a literal, on lines first..last."""

    literal: list
    key: str
    first: int
    last: int


_MESSAGE_CALLS = frozenset(("debug", "info", "warning", "warn", "error", "exception", "critical", "log",
                            "print", "fail", "skip", "xfail"))
_REGEX_CALLS = frozenset(("compile", "match", "search", "fullmatch", "sub", "subn", "split", "findall",
                          "finditer"))
_REGEX_MODULES = frozenset(("re", "regex"))
_SAFE_TYPES = (int, float, str, bytes)


def _occurrences(source: str) -> list[_Occurrence]:
    """Every literal use in `source`, ordered by position."""
    tree = parsed(source)
    if tree is None:
        return []
    return _Miner(tree).run()


class _Miner:
    """One walk over a module: emits literals with their lines."""

    def __init__(self, tree: ast.Module) -> None:
        self.nodes, self.parents = _nodes(tree)
        every = [node for node, _ in self.nodes]
        self.skipped = _prose(every)
        self.module_env, self.class_envs = _environments(tree, every)
        self.regex_names = {alias.asname or alias.name: alias.name for node in every  # `fm` -> fullmatch
                            if isinstance(node, ast.ImportFrom) and node.module in _REGEX_MODULES
                            for alias in node.names if alias.name in _REGEX_CALLS}
        self.found: list[tuple[int, int, int, _Occurrence]] = []
        self.folded: dict[int, object] = {}

    def run(self) -> list[_Occurrence]:
        for node, scopes in self.nodes:
            if id(node) not in self.skipped:
                self._emit_node(node, scopes)
        self.found.sort(key=lambda item: item[:3])
        return [item[3] for item in self.found]

    def _emit(self, node: ast.AST, value: object) -> None:
        literal = constant_literal(value)
        if literal is not None:
            first = getattr(node, "lineno", 0)
            last = getattr(node, "end_lineno", None) or first
            position = (first, getattr(node, "col_offset", 0), len(self.found))
            self.found.append((*position, _Occurrence(literal, repr(literal), first, last)))

    def _emit_node(self, node: ast.AST, scopes: Scopes) -> None:
        if isinstance(node, (ast.Constant, ast.Name, ast.Attribute, ast.UnaryOp, ast.BinOp)):
            if self._folded_parent(node, scopes):
                return  # `-1` is one literal, and `60 * 60` is 3600 (its leaves are still seen)
            if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
                return
            value = self._fold(node, scopes)
            if value is not _NOPE:
                self._emit(node, value)
        elif isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.In, ast.NotIn)):
                    text = self._fold(right, scopes)
                    if isinstance(text, str) and 1 < len(text) <= IN_STRING_CHARS:
                        for char in dict.fromkeys(text):
                            self._emit(right, char)
        elif isinstance(node, ast.Call) and self._is_regex_call(node.func) and node.args:
            pattern = self._fold(node.args[0], scopes)
            flags = self._regex_flags(node)
            if isinstance(pattern, (str, bytes)) and flags is not None:
                for example in regex_examples(pattern, flags):
                    self._emit(node, example)

    def _folded_parent(self, node: ast.AST, scopes: Scopes) -> bool:
        """Whether `node` is the operand of a unary operation, or a binary operation inside
        one, that folds: that operation is the literal (`-1`, not 1; `60 * 60 * 24`, not
        3600). Leaves of a binary operation are kept: `60 * 60` has a 60 and a 3600."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.UnaryOp) or (isinstance(parent, ast.BinOp) and isinstance(node, ast.BinOp)):
            return self._fold(parent, scopes) is not _NOPE
        return False

    def _fold(self, node: ast.AST, scopes: Scopes) -> object:
        """Memoized: a node is always seen with the same scopes."""
        if id(node) not in self.folded:
            self.folded[id(node)] = _fold(node, lambda name: self._lookup(name, scopes),
                                          lambda owner, attr: self._attribute(owner, attr, scopes))
        return self.folded[id(node)]

    def _lookup(self, name: str, scopes: Scopes) -> object:
        if scopes and scopes[-1] is not None:  # a class body sees its own names
            value = self.class_envs.get(scopes[-1], {}).get(name, _NOPE)
            if value is not _NOPE:
                return value
        return self.module_env.get(name, _NOPE)

    def _attribute(self, owner: str, attr: str, scopes: Scopes) -> object:
        """`Class.NAME`, and `self.NAME` / `cls.NAME` in a method of Class."""
        if owner in ("self", "cls"):
            classes = [s for s in scopes if s is not None]
            owner = classes[-1] if classes else ""
        return self.class_envs.get(owner, {}).get(attr, _NOPE)

    def _is_regex_call(self, func: ast.AST) -> bool:
        if isinstance(func, ast.Attribute):
            return (func.attr in _REGEX_CALLS and isinstance(func.value, ast.Name)
                    and func.value.id in _REGEX_MODULES)
        return isinstance(func, ast.Name) and func.id in self.regex_names

    def _regex_flags(self, call: ast.Call) -> int | None:
        """The flags of a `re` call when they are plain `re.X` names (0 when none), else None:
        VERBOSE, for one, changes what the pattern means."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else self.regex_names.get(getattr(func, "id", ""))
        position = {"compile": 1, "sub": 4, "subn": 4, "split": 3}.get(name, 2)
        given = [k.value for k in call.keywords if k.arg == "flags"] + call.args[position:position + 1]
        flags = 0
        for expression in given:
            for leaf in ast.walk(expression):
                if isinstance(leaf, ast.Attribute):
                    flag = getattr(re, leaf.attr, None)
                    if not isinstance(flag, re.RegexFlag):
                        return None
                    flags |= flag
                elif isinstance(leaf, ast.Name) and leaf.id not in _REGEX_MODULES:
                    return None
        return flags


def _nodes(tree: ast.Module) -> tuple[list[tuple[ast.AST, Scopes]], dict[int, ast.AST]]:
    """Every node with its scopes, and every node's parent by id: the one walk over the tree
    (walking is most of the cost). Iterative: a long `a + b + ...` chain nests deeply."""
    nodes: list[tuple[ast.AST, Scopes]] = []
    parents: dict[int, ast.AST] = {}
    stack: list[tuple[ast.AST, Scopes]] = [(tree, ())]
    while stack:
        node, scopes = stack.pop()
        nodes.append((node, scopes))
        if isinstance(node, ast.ClassDef):
            scopes = (*scopes, node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            scopes = (*scopes, None)
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
            stack.append((child, scopes))
    return nodes, parents


def _prose(nodes: list[ast.AST]) -> set[int]:
    """ids of constants that are prose, not values the code compares against: docstrings,
    f-string fragments, and the messages of exceptions, assertions and logging."""
    found = set()
    for node in nodes:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        elif isinstance(node, ast.JoinedStr):
            found.update(id(v) for v in node.values if isinstance(v, ast.Constant))
        elif isinstance(node, ast.Assert) and node.msg is not None:
            found.add(id(node.msg))
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            found.update(id(a) for a in node.exc.args if _is_text(a))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _MESSAGE_CALLS:
                found.update(id(a) for a in node.args if _is_text(a))
    return found


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _environments(tree: ast.Module, nodes: list[ast.AST]) -> tuple[Env, dict[str, Env]]:
    """Constant propagation: the module's and each class's names bound once to a foldable
    value (`UNIT = "h"`, `HOUR = 60 * MINUTE`, an enum's `RED = 1`). A name bound anywhere
    else in the module (a parameter, a loop, `self.NAME = ...`) is not a constant."""
    bound: Counter[str] = Counter()
    stored_attributes: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound[node.id] += 1
        elif isinstance(node, ast.arg):
            bound[node.arg] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] += 1
        elif isinstance(node, ast.alias):
            bound[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update({name: 2 for name in node.names})
        elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            stored_attributes.add(node.attr)
    no_attribute = lambda owner, attr: _NOPE  # noqa: E731
    module_env: dict[str, object] = {}
    for name, value in _assignments(tree.body):
        if bound[name] == 1:
            folded = _fold(value, lambda n: module_env.get(n, _NOPE), no_attribute)
            if folded is not _NOPE:
                module_env[name] = folded
    class_envs: dict[str, dict[str, object]] = {}
    classes = [node for node in nodes if isinstance(node, ast.ClassDef)]
    class_count = Counter(node.name for node in classes)
    for node in classes:
        if class_count[node.name] > 1:
            continue
        env: dict[str, object] = {}
        assignments = list(_assignments(node.body))
        in_body = Counter(name for name, _ in assignments)
        for name, value in assignments:
            if in_body[name] == 1 and name not in stored_attributes:
                folded = _fold(value, lambda n, env=env: env.get(n, module_env.get(n, _NOPE)), no_attribute)
                if folded is not _NOPE:
                    env[name] = folded
        class_envs[node.name] = env
    return module_env, class_envs


def _assignments(body: list[ast.stmt]) -> Iterator[tuple[str, ast.expr]]:
    for statement in body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            yield statement.targets[0].id, statement.value
        elif (isinstance(statement, ast.AnnAssign) and statement.value is not None
              and isinstance(statement.target, ast.Name)):
            yield statement.target.id, statement.value


# ---------------------------------------------------------------- folding

_BINARY: dict[type, Callable[[object, object], object]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b, ast.BitXor: lambda a, b: a ^ b,
}
_UNARY: dict[type, Callable[[object], object]] = {
    ast.USub: lambda a: -a, ast.UAdd: lambda a: +a, ast.Invert: lambda a: ~a,
}
_FOLD_DEPTH = 30


def _fold(node: ast.AST, lookup: Callable[[str], object], attribute: Callable[[str, str], object],
          depth: int = 0) -> object:
    """The value of a constant expression of numbers, strings and bytes, or _NOPE. Guarded:
    no huge powers, shifts or repetitions, so a hostile `"x" * 10**9` costs nothing."""
    if depth > _FOLD_DEPTH:
        return _NOPE
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, _SAFE_TYPES) and not isinstance(value, bool) else _NOPE
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return attribute(node.value.id, node.attr)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        operand = _fold(node.operand, lookup, attribute, depth + 1)
        if not isinstance(operand, (int, float)) or (isinstance(node.op, ast.Invert)
                                                     and not isinstance(operand, int)):
            return _NOPE
        return _UNARY[type(node.op)](operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left = _fold(node.left, lookup, attribute, depth + 1)
        right = _fold(node.right, lookup, attribute, depth + 1) if left is not _NOPE else _NOPE
        if left is _NOPE or right is _NOPE or not _cheap(node.op, left, right):
            return _NOPE
        try:
            value = _BINARY[type(node.op)](left, right)
        except (ArithmeticError, TypeError, ValueError):
            return _NOPE
        if isinstance(value, int) and abs(value) > 2**256:
            return _NOPE
        return value if isinstance(value, _SAFE_TYPES) else _NOPE
    return _NOPE


def _cheap(op: ast.operator, left: object, right: object) -> bool:
    """Whether computing `left op right` is bounded (and not string formatting)."""
    texts = (str, bytes)
    if isinstance(left, texts) or isinstance(right, texts):
        if isinstance(op, ast.Add):
            return type(left) is type(right) and len(left) + len(right) <= MAX_CONSTANT_LENGTH
        if isinstance(op, ast.Mult):
            text, count = (left, right) if isinstance(left, texts) else (right, left)
            return (isinstance(count, int) and isinstance(text, texts)
                    and len(text) * count <= MAX_CONSTANT_LENGTH)
        return False  # `"%s" % x` is output, and everything else a TypeError
    if isinstance(op, ast.Pow):
        return abs(right) <= 256 and abs(left) <= 2**64  # type: ignore[arg-type]
    if isinstance(op, (ast.LShift, ast.RShift)):
        return isinstance(right, int) and 0 <= right <= 256
    return True


# ---------------------------------------------------------------- regex examples


def regex_examples(pattern: str | bytes, flags: int = 0, limit: int = REGEX_EXAMPLES) -> list[str | bytes]:
    """A few strings that fully match a simple pattern (literals, classes, repeats, groups,
    alternatives); none for anything else (look-arounds, back-references). Each is checked
    against the compiled pattern, so a wrong guess is dropped, never kept."""
    if len(pattern) > 200:
        return []
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    try:
        parsed = sre_parse.parse(text, flags & ~re.DEBUG)
        compiled = re.compile(pattern, flags & ~re.DEBUG)
    except (re.error, TypeError, ValueError, OverflowError, RecursionError):
        return []
    found: list[str | bytes] = []
    for variant in range(limit):
        example = _example(list(parsed), variant, 0)
        if example is None or len(example) > MAX_CONSTANT_LENGTH:
            continue
        candidate: str | bytes = example
        if isinstance(pattern, bytes):
            try:
                candidate = example.encode("latin-1")
            except UnicodeEncodeError:
                continue
        if candidate not in found and compiled.fullmatch(candidate):
            found.append(candidate)
    return found


_CATEGORY_CHARS = {
    sre.CATEGORY_DIGIT: "17", sre.CATEGORY_NOT_DIGIT: "a_", sre.CATEGORY_SPACE: " \t",
    sre.CATEGORY_NOT_SPACE: "a1", sre.CATEGORY_WORD: "a1", sre.CATEGORY_NOT_WORD: "-.",
}
_OUTSIDE = "a0 _-xZ.9"  # tried in turn for a negated class


def _example(items: list, variant: int, depth: int) -> str | None:
    """One string for a parsed pattern; `variant` picks other alternatives and counts."""
    if depth > 20:
        return None
    out = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.NOT_LITERAL:
            out.append(next(c for c in "ab" if ord(c) != av))
        elif op is sre.ANY:
            out.append("a")
        elif op is sre.IN:
            char = _class_example(av, variant)
            if char is None:
                return None
            out.append(char)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, high, sub = av
            count = min((low, max(low, 1), max(low, 2))[variant % 3], high)
            if count > MAX_CONSTANT_LENGTH:
                return None
            # each repetition its own pick: `[=-]+` twice is `=-`, a mix the pattern allows
            parts = [_example(list(sub), variant + i, depth + 1) for i in range(count)]
            if None in parts:
                return None
            out.append("".join(parts))  # type: ignore[arg-type]
        elif op is sre.SUBPATTERN:
            part = _example(list(av[3]), variant, depth + 1)
            if part is None:
                return None
            out.append(part)
        elif op is sre.ATOMIC_GROUP:
            part = _example(list(av), variant, depth + 1)
            if part is None:
                return None
            out.append(part)
        elif op is sre.BRANCH:
            alternatives = av[1]
            part = _example(list(alternatives[variant % len(alternatives)]), variant, depth + 1)
            if part is None:
                return None
            out.append(part)
        elif op is not sre.AT:  # anchors match where they stand; anything else: give up
            return None
    return "".join(out)


def _class_example(items: list, variant: int) -> str | None:
    if items and items[0][0] is sre.NEGATE:
        return next((c for c in _OUTSIDE if not _in_class(c, items[1:])), None)
    choices: list[str] = []
    for op, av in items:
        if op is sre.LITERAL:
            choices.append(chr(av))
        elif op is sre.RANGE:
            choices.append(chr(av[0]))
        elif op is sre.CATEGORY and av in _CATEGORY_CHARS:
            choices.append(_CATEGORY_CHARS[av][0])
        else:
            return None
    return choices[variant % len(choices)] if choices else None


def _in_class(char: str, items: list) -> bool:
    for op, av in items:
        if op is sre.LITERAL and ord(char) == av:
            return True
        if op is sre.RANGE and av[0] <= ord(char) <= av[1]:
            return True
        if op is sre.CATEGORY and (av not in _CATEGORY_CHARS or char in _CATEGORY_CHARS[av]
                                   or _category_has(av, char)):
            return True
    return False


def _category_has(category: object, char: str) -> bool:
    digit, space, word = char.isdigit(), char.isspace(), char.isalnum() or char == "_"
    return {sre.CATEGORY_DIGIT: digit, sre.CATEGORY_NOT_DIGIT: not digit, sre.CATEGORY_SPACE: space,
            sre.CATEGORY_NOT_SPACE: not space, sre.CATEGORY_WORD: word,
            sre.CATEGORY_NOT_WORD: not word}.get(category, True)
