"""A project versioned from git tags: its package imports the `_version.py` its build writes,
which no checkout has. It is tested all the same, as if `pip install` had run."""

from __future__ import annotations

import pytest
from support.analysis import run_analyze
from support.repos import RepoBuilder, make_pr

PROJECT = {
    "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n\n'
                      '[tool.hatch.build.hooks.vcs]\nversion-file = "src/pkg/_version.py"\n',
    ".gitignore": "src/pkg/_version.py\n",
    "src/pkg/__init__.py": "from ._version import __version__\nfrom .sizes import kilobytes\n",
    "src/pkg/sizes.py": "def kilobytes(count: int) -> int:\n    return count * 1024\n",
}


@pytest.mark.slow
def test_a_package_importing_its_build_written_version_file_is_tested(builder: RepoBuilder) -> None:
    make_pr(builder, PROJECT, {"src/pkg/sizes.py": PROJECT["src/pkg/sizes.py"].replace("1024", "1000")})
    builder.repo.git.tag("v1.4.0", "main")
    report = run_analyze(builder, budget=15.0, max_sequences=100)
    assert not any("does not import" in note for note in report.notes), report.notes
    assert any("src/pkg/_version.py (the version file hatch-vcs writes" in note for note in report.notes)
    assert any(d.target == "pkg.sizes:kilobytes" for d in report.differences), report.differences
    assert "_version" not in builder.status()  # the user's tree is untouched
