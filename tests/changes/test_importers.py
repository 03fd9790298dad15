"""Tests for `difforacle.generator.changes.importers`: the modules built on a changed private module
join the catalog."""

from __future__ import annotations

from pathlib import Path

from difforacle.generator.changes.importers import MAX_IMPORTERS, importers
from difforacle.generator.changes.model import ChangeSet, Checkout, FileChange


def _changes(*modules: str) -> ChangeSet:
    files = tuple(FileChange(m.replace(".", "/") + ".py", m.replace(".", "/") + ".py", m,
                             frozenset({1}), frozenset({1})) for m in modules)
    return ChangeSet("0" * 40, files, ())


def _checkout(root: Path) -> Checkout:
    return Checkout(ref="base", sha="0" * 40, root=root, import_roots=(root,))


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_modules_importing_a_changed_private_module_in_every_form(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pkg/__init__.py": "from ._base import Base\nfrom .public import Mutable\n",
        "pkg/_base.py": "class Base:\n    pass\n",
        "pkg/public.py": "from ._base import Base\n\n\nclass Mutable(Base):\n    pass\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from .. import _base\n",
        "pkg/absolute.py": "import pkg._base\n",
        "pkg/_other.py": "from pkg._base import Base\n",
        "pkg/unrelated.py": "import os\n",
        "other/thing.py": "from pkg._base import Base\n",  # another package: not searched
    })
    found = importers(_checkout(tmp_path), _changes("pkg._base"))
    # the package's public modules first, shallow before deep, private last
    assert found == ("pkg", "pkg.absolute", "pkg.public", "pkg.sub.deep", "pkg._other")


def test_only_the_root_for_public_changed_modules_and_at_most_the_bound(tmp_path: Path) -> None:
    _write(tmp_path, {"pkg/__init__.py": "", "pkg/api.py": "X = 1\n",
                      **{f"pkg/m{i}.py": "from . import api, _impl\n" for i in range(MAX_IMPORTERS + 3)},
                      "pkg/_impl.py": "Y = 2\n", "single.py": "Z = 3\n"})
    assert importers(_checkout(tmp_path), _changes("pkg.api")) == ("pkg",)  # the package's front door
    assert importers(_checkout(tmp_path), _changes("single")) == ()  # a module of its own: no package
    found = importers(_checkout(tmp_path), _changes("pkg._impl"))
    assert len(found) == MAX_IMPORTERS and found[0] == "pkg" and all(m.startswith("pkg.m") for m in found[1:])
