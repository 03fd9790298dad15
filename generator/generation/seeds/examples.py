"""The project's own examples, as tests to carve from: the doctests of the changed modules and the
Python code of the README and of the documentation.

A project's tests check its edge cases; its examples show how it is used: an object configured
attribute by attribute before it is rendered, the options a user passes, the input a tutorial
feeds it. Those are the calls random generation seldom builds. The examples are found by reading
files, never by importing them: `doctest.DocTestParser` reads the `>>>` examples of the changed
modules' docstrings and of the documents, and the fenced (Markdown) or directive (reStructuredText)
Python blocks of the documents are read as they are. They are written into one pytest file in a
temporary folder (`example_tests`), each example one test that runs its statements one at a time
in one namespace (a doctest's is its module's globals), going on past a statement that raises:
an example's later lines often need no earlier one. Carving then runs that file on base like a
test file of the project (in the same sandbox, under the same limits), so its calls are recorded
as the tests' are, and the sources of what it carved read as the example's place in its file.
"""

from __future__ import annotations

import ast
import doctest
import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ...changes.model import ChangeSet

DOCUMENT_FOLDERS = ("docs", "doc")
DOCUMENT_SUFFIXES = (".md", ".rst", ".txt")
MAX_DOCUMENTS = 40  # the README first, then the documentation's files in path order
MAX_DOCUMENT_BYTES = 400_000
MAX_EXAMPLES = 200  # examples written, in all
MAX_EXAMPLE_LINES = 200  # an example longer than this is a program, not an example
TEST_FILE = "test_difforacle_examples.py"
TEST_PREFIX = "test_example_"

# ```python / ```py / ```pycon / ```python3 / ~~~ python (Markdown); the block ends at the fence
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*\{?\.?(?P<lang>[\w+-]*)[^\n]*\n"
                    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)
# .. code-block:: python / .. code:: python / .. sourcecode:: python (reStructuredText), its options,
# then the indented body
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*"
                        r"(?P<lang>[\w+-]*)[ \t]*\n(?:(?P=indent)[ \t]+:[\w-]+:[^\n]*\n)*",
                        re.MULTILINE)
# the examples' test file begins with this: one namespace per scope, statements run one at a time
_RUNNER = """import ast as _ast
import importlib as _importlib

_NAMESPACES = {}


def _run(source, scope, module, origin):
    namespace = _NAMESPACES.get(scope)
    if namespace is None:
        namespace = dict(vars(_importlib.import_module(module))) if module else {"__name__": "__main__"}
        _NAMESPACES[scope] = namespace
    try:
        tree = _ast.parse(source)
    except SyntaxError:
        return
    for statement in tree.body:
        try:
            exec(compile(_ast.Module([statement], []), origin, "exec"), namespace)
        except (Exception, SystemExit):
            pass
"""
_PYTHON = frozenset({"python", "py", "python3", "py3", "pycon", "pyrepl", "ipython", "doctest"})


@dataclass(frozen=True)
class Example:
    """One example: its code, where it is written, and the module whose globals it runs in."""

    source: str  # Python statements (a doctest's sources, without prompts or expected output)
    origin: str  # "README.md:12", "src/pkg/mod.py:40 (parse)": what its carved calls name as their test
    # the examples that share a namespace, in order: a document's (its later blocks use what the
    # earlier ones imported and built), or one docstring's
    scope: str
    module: str | None = None  # a doctest's module (its globals start the namespace), else None


def project_examples(changes: ChangeSet, root: Path) -> list[Example]:
    """The doctests of the changed modules (as `root` has them) and the examples of the README and
    documentation that name one of their packages, in that order, at most MAX_EXAMPLES."""
    found: list[Example] = []
    for change in changes.files:
        if change.module and change.base_path and (root / change.base_path).is_file():
            found += docstring_examples(root / change.base_path, change.base_path, change.module)
    packages = {module.split(".")[0] for module in (*changes.modules, *changes.importers)}
    for path in documents(root):
        found += [example for example in document_examples(path, path.relative_to(root).as_posix())
                  if _names_a_package(example.source, packages)]
    return found[:MAX_EXAMPLES]


def docstring_examples(path: Path, shown: str, module: str) -> list[Example]:
    """The `>>>` examples of each docstring of a module's source, one Example per docstring."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        text = ast.get_docstring(node, clean=False)
        if not text or ">>>" not in text:
            continue
        source = _doctest_source(text)
        if source:
            line = node.body[0].lineno if node.body else 1
            where = "" if isinstance(node, ast.Module) else f" ({node.name})"
            found.append(Example(source, f"{shown}:{line}{where}", f"{shown}:{line}", module))
    return found


def documents(root: Path) -> list[Path]:
    """The README files at the root, then the documentation's text files, at most MAX_DOCUMENTS."""
    readmes = sorted(path for path in root.glob("README*") if path.suffix.lower() in (*DOCUMENT_SUFFIXES, ""))
    found = []
    for folder in DOCUMENT_FOLDERS:
        for directory, folders, files in os.walk(root / folder):
            folders[:] = sorted(name for name in folders if not name.startswith(("_", ".")))
            found += [Path(directory) / name for name in sorted(files)
                      if Path(name).suffix.lower() in DOCUMENT_SUFFIXES]
    return [path for path in [*readmes, *found]
            if path.is_file() and path.stat().st_size <= MAX_DOCUMENT_BYTES][:MAX_DOCUMENTS]


def document_examples(path: Path, shown: str) -> list[Example]:
    """A document's Python examples in the order they are written: its fenced or directive Python
    blocks, and its `>>>` examples outside them, one Example per block or run of prompts."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    blocks: list[tuple[int, int, str]] = []  # (start, end, source)
    for match in _FENCE.finditer(text):
        if match["lang"].lower() in _PYTHON or (not match["lang"] and ">>>" in match["body"]):
            blocks.append((match.start(), match.end(), _block_source(match["body"])))
    for match in _DIRECTIVE.finditer(text):
        if match["lang"].lower() in _PYTHON:
            body, end = _indented_after(text, match.end(), len(match["indent"].expandtabs()))
            blocks.append((match.start(), end, _block_source(body)))
    taken = sorted(blocks)
    for start, end, source in _prompt_runs(text):
        if not any(s <= start < e for s, e, _ in taken):
            blocks.append((start, end, source))
    return [Example(source, f"{shown}:{text.count(chr(10), 0, start) + 1}", shown)
            for start, _, source in sorted(blocks) if source and source.count("\n") < MAX_EXAMPLE_LINES]


def example_tests(examples: list[Example], folder: Path) -> tuple[Path, dict[str, str]]:
    """A pytest file in `folder` with one test per example, and each test's name -> its example's
    origin. A test runs its example's top-level statements one at a time in its scope's namespace
    (pytest runs a file's tests in order) and goes on past one that raises (the recorder has already
    written what it called)."""
    names = {f"{TEST_PREFIX}{number}": example.origin for number, example in enumerate(examples, 1)}
    tests = [f"\n\ndef {name}():\n    _run({example.source!r}, {example.scope!r}, {example.module!r}, "
             f"{example.origin!r})\n" for name, example in zip(names, examples, strict=True)]
    text = _RUNNER + "".join(tests)
    path = folder / TEST_FILE
    path.write_text(text, encoding="utf-8")
    return path, names


def _doctest_source(text: str) -> str:
    """The sources of the `>>>` examples of a text, without prompts and expected output ("" if none
    parses)."""
    try:
        examples = doctest.DocTestParser().get_examples(text)
    except ValueError:  # inconsistent indentation or a prompt without its space
        return ""
    return "".join(example.source for example in examples)


def _prompt_runs(text: str) -> list[tuple[int, int, str]]:
    """Runs of `>>>` examples outside code blocks (reStructuredText doctest blocks, `::` literal
    blocks), one per paragraph of prompts: (start, end, source)."""
    runs = []
    for match in re.finditer(r"(?:^[ \t]*>>>.*\n(?:^[ \t]*\S.*\n)*)+", text + "\n", re.MULTILINE):
        source = _doctest_source(match.group(0))
        if source:
            runs.append((match.start(), match.end(), source))
    return runs


def _block_source(body: str) -> str:
    """A code block's Python: a console session's sources, or the block as written (dedented)."""
    if re.search(r"^[ \t]*>>>", body, re.MULTILINE):
        return _doctest_source(_dedent(body))
    source = _dedent(body).strip("\n")
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return ""  # a fragment (`...` for elided code, a shell line): nothing to run
    return f"{source}\n" if source else ""


def _indented_after(text: str, start: int, indent: int) -> tuple[str, int]:
    """The block indented deeper than `indent` from `start` (blank lines inside it kept), and its end."""
    lines, end = [], start
    for line in text[start:].splitlines(keepends=True):
        if line.strip() and len(line.expandtabs()) - len(line.expandtabs().lstrip()) <= indent:
            break
        lines.append(line)
        end += len(line)
    return "".join(lines), end


def _dedent(body: str) -> str:
    return textwrap.dedent(body.expandtabs())


def _names_a_package(source: str, packages: set[str]) -> bool:
    """Whether an example's code names one of the packages (it imports or uses it): a document's
    other examples are about something else."""
    return any(re.search(rf"\b{re.escape(package)}\b", source) for package in packages)
