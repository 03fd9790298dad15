"""The pull request's own words, read without any network service: its title and body (as the
front end got them), the messages of its commits, the lines it adds to changelog and news files,
and the docstrings it changes; and the values it writes.

Each is a `Passage`: where it comes from, said for a reader, and its text. A docstring passage
also names the unit whose docstring changed, since it speaks for that unit wherever its name is.

The values are the string and bytes literals on the lines the pull request adds, to its code or to
its tests, that base's copies of the changed files hold nowhere (`names = ["hi", "hi-in"]` adds
"hi-in"). An input that is such a value is one the pull request wrote about: `get_locale("hi-in")`
succeeding is what adding "hi-in" to a table means. Short or wordless strings (`"-"`, `"ab"`) are
left out: they turn up in any input.
"""

from __future__ import annotations

import ast
import doctest
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..changes.model import ChangeSet, Checkout
from ..changes.syntax import first_line, parsed, spans_line
from ..oracle.entries import telling

if TYPE_CHECKING:  # GitPython, slow to import, loads when a run reads the pull request
    import git

MAX_COMMITS = 100  # of a pull request, newest first: older ones rarely describe the change under review
MAX_TEXT = 20_000  # characters kept of one passage (a body or a commit message)
# changelog and news files by name, and the folders of towncrier-style fragments
CHANGELOG_NAME = re.compile(r"^(change(s|log)?|history|news|release[-_]?notes?)([-_.].*)?$", re.IGNORECASE)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)  # what has a docstring and a name
FRAGMENT_FOLDERS = frozenset({"changelog.d", "changes", "newsfragments", "news", "changelog"})


@dataclass(frozen=True)
class Passage:
    source: str  # for a reader: "the title", "commit 1a2b3c4", "CHANGES.rst", "the docstring of pkg.mod:f"
    text: str
    unit: str | None = None  # a changed docstring's unit ("pkg.mod:Qual.name")

    @property
    def documents(self) -> bool:
        """A changelog line or a docstring: text that documents the code, where a plain name is the
        function's (`slugify keeps dots now`), not the English word it may also be."""
        return self.unit is not None or is_changelog(self.source)


@dataclass
class PullRequestText:
    passages: list[Passage] = field(default_factory=list)
    values: dict[str | bytes, str] = field(default_factory=dict)  # a value it adds -> "path:line"

    def __bool__(self) -> bool:
        return bool(self.passages) or bool(self.values)


def read_pull_request(repo: git.Repo, changes: ChangeSet, head_sha: str, base: Checkout, head: Checkout,
                      title: str = "", body: str = "") -> PullRequestText:
    """Everything the pull request says about itself, in the order a reviewer reads it. Evidence is
    never worth a run: a source git cannot read (a history cut short) is left out."""
    import git

    given = (("the title", title), ("the body", body))
    passages = [Passage(source, text[:MAX_TEXT]) for source, text in given if text.strip()]
    for read in (_commit_messages, _changelog_lines):
        try:
            passages += read(repo, changes.merge_base, head_sha)
        except git.GitCommandError:
            continue
    trees: dict[Path, ast.Module | None] = {}  # each file parsed once, for its docstrings and its values
    passages += _changed_docstrings(changes, base, head, trees)
    return PullRequestText(passages, added_values(changes, base, head, trees))


def added_values(changes: ChangeSet, base: Checkout, head: Checkout,
                 trees: dict[Path, ast.Module | None]) -> dict[str | bytes, str]:
    """The string and bytes literals on head's changed lines of the changed files, code and tests,
    that no base copy of those files holds, each with where it is added first (see the module).
    `trees`: the files parsed so far, by path (filled in as more are)."""
    files = [*changes.files, *changes.tests]
    known = {value for f in files if f.base_path
             for value, _ in _literals(_tree(base.root / f.base_path, trees))}
    added: dict[str | bytes, str] = {}
    for f in files:
        if not f.head_path or not f.head_lines:
            continue
        for value, line in _literals(_tree(head.root / f.head_path, trees), f.head_lines):
            if line in f.head_lines and value not in known and _telling(value):
                added.setdefault(value, f"{f.head_path}:{line}")
    return added


def _literals(tree: ast.Module | None, lines: Collection[int] | None = None) -> list[tuple[str | bytes, int]]:
    """The string and bytes constants of a module with their lines, docstrings left out; with
    `lines`, only those of the top-level statements that span one of them (a changed entry of a
    generated table is one statement of the module: not a walk of every other one)."""
    if tree is None:
        return []
    roots = tree.body if lines is None else _spanning(tree.body, sorted(lines))
    nodes = [tree, *(node for root in roots for node in ast.walk(root))]
    docstrings = {id(node.body[0].value) for node in nodes
                  if isinstance(node, (ast.Module, *DEFINITIONS)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.value, node.lineno) for node in nodes
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
            and id(node) not in docstrings]


def _spanning(statements: list[ast.stmt], lines: list[int]) -> list[ast.stmt]:
    """The statements whose lines (their decorators' too) hold one of `lines` (sorted)."""
    return [statement for statement in statements
            if spans_line(lines, first_line(statement), statement.end_lineno or statement.lineno)]


def _telling(value: str | bytes) -> bool:
    """A value that stands for a choice the pull request made (`oracle.entries.telling`)."""
    return telling(value.decode("latin-1") if isinstance(value, bytes) else value)


def is_changelog(path: str) -> bool:
    """A changelog or news file, or a fragment in a folder of them (`changelog.d/123.bugfix.md`)."""
    parts = PurePosixPath(path).parts
    return bool(parts) and (bool(CHANGELOG_NAME.match(parts[-1]))
                            or any(part.lower() in FRAGMENT_FOLDERS for part in parts[:-1]))


def _commit_messages(repo: git.Repo, merge_base: str, head_sha: str) -> list[Passage]:
    commits = repo.iter_commits(f"{merge_base}..{head_sha}", max_count=MAX_COMMITS, no_merges=True)
    return [Passage(f"commit {commit.hexsha[:7]}", str(commit.message)[:MAX_TEXT]) for commit in commits]


def _changelog_lines(repo: git.Repo, merge_base: str, head_sha: str) -> list[Passage]:
    """The lines the pull request adds to changelog and news files, one passage per file."""
    names = _text(repo, "--name-only", "--no-renames", merge_base, head_sha).splitlines()
    passages = []
    for path in filter(is_changelog, names):
        diff = _text(repo, "--no-ext-diff", "--no-textconv", "--unified=0", merge_base, head_sha, "--", path)
        added = [line[1:] for line in diff.splitlines()
                 if line.startswith("+") and not line.startswith("+++")]
        if any(line.strip() for line in added):
            passages.append(Passage(path, "\n".join(added)[:MAX_TEXT]))
    return passages


def _text(repo: git.Repo, *args: str) -> str:
    """`git diff ARGS` as text, whatever the files' encoding (what is not UTF-8 is replaced)."""
    raw = repo.git(c="core.quotepath=off").diff("--no-color", *args, stdout_as_string=False)
    return raw.decode("utf-8", errors="replace")


def _changed_docstrings(changes: ChangeSet, base: Checkout, head: Checkout,
                        trees: dict[Path, ast.Module | None]) -> list[Passage]:
    """The lines a changed function, method or class adds to its docstring (a docstring that says
    something new about the unit is the pull request documenting a change of its behaviour).
    `trees`: each file parsed once, however many of its units changed."""
    base_files = {f.head_path: f.base_path for f in changes.files if f.head_path}
    passages = []
    for unit in changes.units:
        if unit.kind not in ("function", "method", "class") or unit.status != "modified":
            continue
        new = _docstring(_tree(head.root / unit.path, trees), unit.qualname)
        old_path = base_files.get(unit.path)
        old = _docstring(_tree(base.root / old_path, trees), unit.qualname) if old_path else None
        if new and new != old:
            added = "\n".join(_new_statements(old or "", new))
            passages.append(Passage(f"the docstring of {unit.target}", added[:MAX_TEXT], unit=unit.target))
    return passages


def _new_statements(old: str, new: str) -> list[str]:
    """The lines of the docstring `new` that say something `old` did not. Not its doctest examples:
    a prompt and its expected output are code, evidence only once run, and a pull request that
    puts back an older body often puts back its older examples. Not a line whose every word `old`
    already uses: a rewrapped or reworded line ("new object" for "new :class:`Version` object")
    states nothing new, while one new word ("defaults to build" for "defaults to rc") does."""
    known = set(_words(old))
    try:
        prose = "".join(part for part in doctest.DocTestParser().parse(new) if isinstance(part, str))
    except ValueError:  # an example doctest cannot read (inconsistent indentation): its prompts go
        prose = "\n".join(line for line in new.splitlines() if not line.lstrip().startswith((">>>", "...")))
    return [line for line in prose.splitlines() if any(word not in known for word in _words(line))]


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", text.lower())


def _tree(path: Path, trees: dict[Path, ast.Module | None]) -> ast.Module | None:
    if path not in trees:
        try:
            trees[path] = parsed(path.read_bytes())
        except OSError:
            trees[path] = None
    return trees[path]


def _docstring(tree: ast.Module | None, qualname: str) -> str | None:
    """The docstring of the definition `qualname` names in `tree` (None: no such definition, or none)."""
    body = tree.body if tree is not None else []
    definition = None
    for name in qualname.split("."):
        definition = next((n for n in body if isinstance(n, DEFINITIONS) and n.name == name), None)
        if definition is None:
            return None
        body = definition.body
    return ast.get_docstring(definition) if definition is not None else None
