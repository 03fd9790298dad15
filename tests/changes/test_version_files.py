"""Version files a build writes from git tags, written in checkouts that lack them
(`changes.version_files`): a package importing its `_version.py` imports from a bare checkout."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from support.repos import RepoBuilder

from difforacle.generator.changes.model import Checkout
from difforacle.generator.changes.version_files import (
    FALLBACK_VERSION,
    declared_version_files,
    nearest_version,
    write_version_files,
)

HATCH = '[tool.hatch.build.hooks.vcs]\nversion-file = "src/pkg/_version.py"\n'


@pytest.mark.parametrize("pyproject, expected", [
    (HATCH, [("src/pkg/_version.py", "hatch-vcs")]),
    ('[tool.setuptools_scm]\nversion_file = "pkg/_version.py"\n', [("pkg/_version.py", "setuptools-scm")]),
    ('[tool.setuptools_scm]\nwrite_to = "pkg/version.py"\n', [("pkg/version.py", "setuptools-scm")]),
    ('[tool.pdm.version]\nsource = "scm"\nwrite_to = "pkg/_v.py"\n', [("pkg/_v.py", "pdm")]),
    ('[tool.pdm.version]\nsource = "file"\nwrite_to = "pkg/_v.py"\n', []),  # not written from tags
    ('[tool.setuptools_scm]\nwrite_to = "../outside.py"\n', []),
    ('[tool.setuptools_scm]\nwrite_to = "/etc/x.py"\n', []),
    ('[tool.setuptools_scm]\nwrite_to = "pkg/VERSION"\n', []),  # not a module
    ("[tool.setuptools_scm]\n", []),
    ("not toml [", []),
])
def test_the_version_files_a_project_declares(tmp_path: Path, pyproject: str, expected: list) -> None:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    assert declared_version_files(tmp_path) == [(PurePosixPath(path), tool) for path, tool in expected]


def test_a_setup_py_declares_its_version_file_in_use_scm_version(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\nsetup(name='pkg', use_scm_version={\n"
        "    'write_to': 'src/pkg/_version.py', 'local_scheme': 'no-local-version'})\n")
    assert declared_version_files(tmp_path) == [(PurePosixPath("src/pkg/_version.py"), "setuptools-scm")]
    (tmp_path / "setup.py").write_text("setup(use_scm_version=True)\n")
    assert declared_version_files(tmp_path) == []


def _checkout(root: Path) -> Checkout:
    return Checkout(ref="x", sha="0" * 40, root=root, import_roots=(root / "src",))


def test_a_missing_version_file_is_written_on_both_sides_and_an_existing_one_kept(tmp_path: Path) -> None:
    sides = []
    for name in ("base", "head"):
        root = tmp_path / name
        (root / "src" / "pkg").mkdir(parents=True)
        (root / "pyproject.toml").write_text(HATCH)
        sides.append(_checkout(root))
    kept = sides[1].root / "src/pkg/_version.py"
    kept.write_text("__version__ = 'mine'\n")
    notes = write_version_files(tuple(sides), "4.12.0")
    namespace: dict = {}
    exec((sides[0].root / "src/pkg/_version.py").read_text(), namespace)
    assert (namespace["__version__"], namespace["version_tuple"]) == ("4.12.0", (4, 12, 0))
    assert kept.read_text() == "__version__ = 'mine'\n"
    assert notes == ["src/pkg/_version.py (the version file hatch-vcs writes at build time) is not in the "
                     "checkout: written with version 4.12.0 on both sides."]
    assert write_version_files(tuple(sides), "4.12.0") == []  # nothing left to write


def test_a_version_file_is_never_written_through_a_link_out_of_the_checkout(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "base"
    (root / "src").mkdir(parents=True)
    (root / "src" / "pkg").symlink_to(outside, target_is_directory=True)
    (root / "pyproject.toml").write_text(HATCH)
    assert write_version_files((_checkout(root),), "1.0") == []
    assert list(outside.iterdir()) == []


def test_the_version_is_the_nearest_tags_release(builder: RepoBuilder) -> None:
    first = builder.commit({"a.py": "x = 1\n"})
    assert nearest_version(builder.repo, first) == FALLBACK_VERSION
    builder.repo.git.tag("v2.3.1")
    later = builder.commit({"a.py": "x = 2\n"})
    assert nearest_version(builder.repo, later) == "2.3.1"
    builder.repo.git.tag("nightly")
    assert nearest_version(builder.repo, builder.commit({"a.py": "x = 3\n"})) == FALLBACK_VERSION
