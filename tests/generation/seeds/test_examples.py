"""The project's examples found by reading its files, and the test file that runs them."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from difforacle.generator.changes.model import ChangeSet, FileChange
from difforacle.generator.generation.seeds.examples import (
    MAX_DOCUMENTS,
    Example,
    docstring_examples,
    document_examples,
    documents,
    example_tests,
    project_examples,
)

MARKDOWN = """\
# shapes

Install it, then:

```bash
pip install shapes
```

```python
import shapes
box = shapes.Box(2, 3)
```

A session:

```pycon
>>> shapes.area(box)
6
>>> shapes.area(
...     shapes.Box(1, 1))
1
```

```
>>> shapes.perimeter(box)
10
```

```python
box = ...
shapes.draw(box, style=
```
"""

RST = """\
Shapes
======

.. code-block:: python
   :caption: a box

   import shapes
   box = shapes.Box(2, 3)

   shapes.area(box)

Text after it.

.. code:: console

   $ shapes --help

A doctest block:

>>> shapes.perimeter(shapes.Box(1, 2))
6

And a literal block::

    >>> shapes.Box(0, 0).empty
    True
"""

MODULE = '''\
"""Shapes.

>>> area(Box(2, 2))
4
"""


class Box:
    """A box.

    >>> Box(1, 2).width
    1
    """

    def __init__(self, width, height):
        self.width, self.height = width, height


def area(box):
    """No example here."""
    return box.width * box.height
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_markdown_documents_python_blocks_and_sessions_in_order(tmp_path: Path) -> None:
    _write(tmp_path, {"README.md": MARKDOWN})
    examples = document_examples(tmp_path / "README.md", "README.md")
    assert [example.origin for example in examples] == ["README.md:9", "README.md:16", "README.md:24"]
    assert examples[0].source == "import shapes\nbox = shapes.Box(2, 3)\n"
    # a session's sources without prompts or output, its continuation lines joined
    assert examples[1].source == "shapes.area(box)\nshapes.area(\n    shapes.Box(1, 1))\n"
    assert examples[2].source == "shapes.perimeter(box)\n"  # an unlabelled fence holding a session
    assert {example.scope for example in examples} == {"README.md"}
    # the shell block and the fragment that does not parse are not examples


def test_a_restructured_text_documents_directives_doctest_and_literal_blocks(tmp_path: Path) -> None:
    _write(tmp_path, {"docs/guide.rst": RST})
    examples = document_examples(tmp_path / "docs/guide.rst", "docs/guide.rst")
    assert [example.origin for example in examples] == ["docs/guide.rst:4", "docs/guide.rst:20",
                                                        "docs/guide.rst:25"]
    # the directive's options are not code, its blank line is
    assert examples[0].source == "import shapes\nbox = shapes.Box(2, 3)\n\nshapes.area(box)\n"
    assert examples[1].source == "shapes.perimeter(shapes.Box(1, 2))\n"
    assert examples[2].source == "shapes.Box(0, 0).empty\n"


def test_a_modules_docstrings_give_one_example_each_with_the_module_as_namespace(tmp_path: Path) -> None:
    _write(tmp_path, {"src/shapes/core.py": MODULE})
    examples = docstring_examples(tmp_path / "src/shapes/core.py", "src/shapes/core.py", "shapes.core")
    assert sorted((example.origin, example.source) for example in examples) == [
        ("src/shapes/core.py:1", "area(Box(2, 2))\n"),
        ("src/shapes/core.py:9 (Box)", "Box(1, 2).width\n")]
    assert {example.module for example in examples} == {"shapes.core"}
    assert len({example.scope for example in examples}) == 2  # each docstring its own namespace


def test_a_module_that_does_not_parse_has_no_examples(tmp_path: Path) -> None:
    _write(tmp_path, {"broken.py": 'def f(:\n    """>>> f()"""\n'})
    assert docstring_examples(tmp_path / "broken.py", "broken.py", "broken") == []


def test_the_readme_comes_first_then_the_documentation_bounded(tmp_path: Path) -> None:
    _write(tmp_path, {"README.rst": "x", "docs/a.md": "x", "docs/_build/b.md": "x", "doc/c.txt": "x",
                      "docs/image.png": "x", "setup.py": "x",
                      **{f"docs/many/{number:03}.md": "x" for number in range(MAX_DOCUMENTS)}})
    found = [path.relative_to(tmp_path).as_posix() for path in documents(tmp_path)]
    assert found[:3] == ["README.rst", "docs/a.md", "docs/many/000.md"]
    assert len(found) == MAX_DOCUMENTS and "docs/_build/b.md" not in found
    assert not any(path.endswith((".png", ".py")) for path in found)


def test_project_examples_keep_the_changed_modules_doctests_and_the_documents_naming_its_package(
        tmp_path: Path) -> None:
    _write(tmp_path, {"src/shapes/__init__.py": "", "src/shapes/core.py": MODULE, "README.md": MARKDOWN,
                      "docs/other.md": "```python\nimport numpy\nnumpy.zeros(3)\n```\n"})
    change = FileChange("src/shapes/core.py", "src/shapes/core.py", "shapes.core", frozenset({20}),
                        frozenset({20}))
    changes = ChangeSet(merge_base="0" * 40, files=(change,), units=())
    origins = [example.origin for example in project_examples(changes, tmp_path)]
    assert origins == ["src/shapes/core.py:1", "src/shapes/core.py:9 (Box)", "README.md:9", "README.md:16",
                       "README.md:24"]


def test_the_test_file_runs_each_example_statement_by_statement_in_its_scopes_namespace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("examples_target")
    module.calls = []  # type: ignore[attr-defined]
    module.record = module.calls.append  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "examples_target", module)
    examples = [
        Example("import examples_target\nx = 2\nexamples_target.record(x)\n1 / 0\n"
                "examples_target.record(x + 1)\n", "README.md:3", "README.md"),
        Example("examples_target.record(x * 10)\n", "README.md:9", "README.md"),  # the document's namespace
        Example("record('module globals')\nraise SystemExit(1)\n", "pkg/mod.py:1", "pkg/mod.py:1",
                "examples_target"),
        Example("examples_target.record('unreached')\n", "docs/other.md:1", "docs/other.md"),
    ]
    path, names = example_tests(examples, tmp_path)
    assert names == {"test_example_1": "README.md:3", "test_example_2": "README.md:9",
                     "test_example_3": "pkg/mod.py:1", "test_example_4": "docs/other.md:1"}
    namespace: dict = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    for name in names:
        namespace[name]()  # none raises: an example's failure is no test failure
    # past the ZeroDivisionError; x shared by the document's examples; the doctest in its module's
    # globals; another document's namespace knows no `examples_target` (its NameError is swallowed)
    assert module.calls == [2, 3, 20, "module globals"]  # type: ignore[attr-defined]
